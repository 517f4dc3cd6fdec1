"""Typed catalog entries. Every entry carries the source it came from and the date it was true."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict

Purchase = Literal["on_demand", "spot", "capacity_block"]
Role = Literal["serving", "training", "other"]
AcceleratorKind = Literal["gpu", "trainium", "inferentia"]


class Entry(BaseModel):
    """A catalog fact: its source id (see sources.yaml) and as-of date: the date that source gives (a generated
    table's date, a commit's), None when it gives none (an undated docs or pricing page). Never the day the
    catalog was built; the load-time check holds every entry to its source's date."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    as_of: datetime.date | None
    note: str | None = None


class UndatedEntry(Entry):
    """A fact from a source that gives no date of its own (an AWS docs page, a label rule): as_of is None."""


class Source(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str
    url: str
    date: datetime.date | None = None
    """The date the source itself gives (commit, 'generated at', 'last updated'); None when it gives none."""
    date_basis: str | None = None
    dated: Literal["source", "row"] = "source"
    """source: every entry is as of the source's date; row: the source is a set of files each with its own
    publication date (AWS's per-Region price lists), so every entry carries its own, never None."""


class InstanceType(Entry):
    name: str
    family: str
    vcpu: int
    memory_gib: int
    accelerator: str | None
    accelerator_count: int
    accelerator_memory_mib: int
    """Per device, as EC2 reports it."""
    accelerator_kind: AcceleratorKind | None = None
    efa_interfaces: int
    instance_store_gb: int = 0
    """Local NVMe instance store, GB (0: EBS only)."""
    network_baseline_gbps: float
    network_burst_gbps: float | None
    """The "up to" rate a small size may burst to; equal to the baseline for fixed-rate types; None unknown."""
    max_interfaces: int
    cards: tuple[int, ...]
    """Maximum network interfaces per network card, by card index."""
    efa_cards: tuple[int, ...]
    """Indexes of the network cards that carry an EFA (at most one EFA per card)."""
    cites: tuple[str, ...] = ()
    """Further sources of some columns (see instances.yaml's header)."""
    onprem: bool = False
    """A system bought for one's own racks (no EC2 price, quota or EFA)."""
    ib_hcas: int = 0
    """InfiniBand adapters for the GPU fabric (on-premises systems)."""
    nvlink_domain_gpus: int | None = None
    """GPUs of one NVLink domain when it spans several hosts (a GB200 NVL72 rack: 72 over 18 trays); None: the
    host's own accelerators are the domain."""

    @property
    def nvlink_gpus(self) -> int:
        """GPUs that talk over NVLink, not the fabric: tensor parallelism fits inside, scaling loses nothing."""
        return self.nvlink_domain_gpus or self.accelerator_count

    @property
    def nodes_per_nvlink_domain(self) -> int:
        return max(1, self.nvlink_gpus // self.accelerator_count) if self.accelerator_count else 1

    @property
    def network_cards(self) -> int:
        return len(self.cards)

    @property
    def network_gbps(self) -> float:
        """The baseline rate (what the type sustains; see network_burst_gbps)."""
        return self.network_baseline_gbps

    @property
    def accelerator_memory_bytes(self) -> int:
        """Memory of all accelerators of one instance, in bytes."""
        return self.accelerator_count * self.accelerator_memory_mib * 1024 * 1024

    @property
    def is_accelerated(self) -> bool:
        return self.accelerator_count > 0


class OnDemandPrice(Entry):
    instance_type: str
    region: str
    usd_per_hour: Decimal


class SpotDistribution(Entry):
    """Spot discounts over one region's zones: mean, the cheapest zone (high) and the dearest one (low;
    None when some zone had no spot offer). Every discount kept is > 0."""

    instance_type: str
    region: str
    mean: Decimal
    low: Decimal | None
    high: Decimal


class SpotAdvice(Entry):
    """The Spot Instance Advisor's band of interruption frequency over the trailing month for a (type, Region), and
    its savings over on-demand, as of the advisor data's Last-Modified date."""

    instance_type: str
    region: str
    band: str
    """The advisor's label: "<5%", "5-10%", "10-15%", "15-20%", ">20%"."""
    band_max_percent: int
    """The band's upper bound, percent of spot capacity reclaimed per month (the file's `max`)."""
    savings_percent: int


class SpotDefault(Entry):
    discount: Decimal


class Family(UndatedEntry):
    family: str
    role: Role
    capacity_blocks: bool


class Accelerator(UndatedEntry):
    name: str
    kind: AcceleratorKind
    memory_mib: int
    k8s_product: str | None
    """nvidia.com/gpu.product as GPU feature discovery sets it; None for Neuron devices."""


class Device(UndatedEntry):
    """How Kubernetes sees one kind of accelerator: the extended resource its device plugin advertises, and the
    node label a pod selects its node by (its value: the accelerator's product label, or the instance type)."""

    kind: AcceleratorKind
    k8s_resource: str
    node_label: str
    node_value: Literal["product", "instance_type"]


class AcceleratorSet(UndatedEntry):
    """A set of accelerator names that share a capability (e.g. FP8 weights in vLLM)."""

    names: list[str]


class RegionZone(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    location: str
    """Where AWS says the region is (botocore endpoints.json `description`)."""
    zone: str
    """The IANA time zone of that place."""


class RegionZones(Entry):
    """Each region's local time zone (time_zones.yaml): the clock of its scheduled floors."""

    zones: dict[str, RegionZone]


class MemoryBandwidth(UndatedEntry):
    """Peak device-memory bandwidth of one accelerator (datasheet): what bounds LLM decode (plan/roofline.py)."""

    name: str
    memory_mib: int
    gb_s: float


class Figure(UndatedEntry):
    """One sourced number the planner reads (serving.yaml cold_start), with its unit in the key."""

    value: float


class AcceleratorPeak(Entry):
    """Dense peak tensor throughput of one device per precision (TFLOPS): never the datasheet's sparse figure."""

    name: str
    dense_tflops: dict[str, float]
    generation: str | None = None
    """The architecture (hopper, ampere, ...): the step model's fit has a factor per generation."""


class NvLink(UndatedEntry):
    """Per-GPU NVLink bandwidth one way (GB/s): half the datasheet's bidirectional figure. A GPU without a row has
    no NVLink (PCIe cards)."""

    name: str
    gb_s: float


class UnknownPrice(UndatedEntry):
    """A price the catalog knows it does not know, and why (a current rate no citable source gives)."""

    key: str
    unit: str
    reason: str


class NodePower(Entry):
    instance_type: str
    max_kw: float


class AcceleratorPower(Entry):
    name: str
    tdp_w: float


class CoolingLimit(Entry):
    cooling: str
    max_kw_per_rack: float


class ServicePrice(Entry):
    key: str
    unit: str
    usd: Decimal
    confirmed: bool


class FsxCapacity(Entry):
    first_steps_gib: list[int]
    increment_gib: int


class FsxEfa(Entry):
    """EFA-enabled FSx for Lustre (PERSISTENT_2 SSD): the capacity step of each throughput tier (one file server's
    storage) and the instance families the FSx guide names as EFA clients."""

    increment_gib: dict[int, int]
    """Throughput tier (MB/s/TiB) -> the capacity step (GiB) an EFA-enabled file system at that tier comes in."""
    client_families: tuple[str, ...]
    """Families "Configuring EFA clients" lists by name (8 EFA interfaces each): the default turns EFA on for them."""
    excluded_families: tuple[str, ...] = ()
    """EFA families the guide excludes as clients (trn2)."""
    recommended_above_mb_s: int
    """File-system throughput above which the FSx guide recommends EFA ("over 10 GBps": 10,000 MB/s)."""


class RegionList(Entry):
    codes: list[str]


__all__ = [
    "Accelerator",
    "AcceleratorKind",
    "AcceleratorPeak",
    "AcceleratorPower",
    "AcceleratorSet",
    "CoolingLimit",
    "Device",
    "Entry",
    "Family",
    "Figure",
    "FsxCapacity",
    "FsxEfa",
    "InstanceType",
    "MemoryBandwidth",
    "NodePower",
    "OnDemandPrice",
    "Purchase",
    "RegionList",
    "RegionZone",
    "RegionZones",
    "Role",
    "ServicePrice",
    "Source",
    "SpotAdvice",
    "SpotDefault",
    "SpotDistribution",
    "UndatedEntry",
    "UnknownPrice",
]
