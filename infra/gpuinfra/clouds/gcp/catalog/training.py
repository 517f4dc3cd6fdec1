"""Google's training catalog, read from clouds/gcp/catalog/data/training.yaml: the A3 Ultra and A4 machine types, the
fabric each series needs, the consumption limits (flex-start's seven days, Spot's 30-second notice) and Managed
Lustre's tiers, every figure with its source.

`training_catalog` presents these machine types through the bundled catalog's interface, keeping its cloud-neutral
tables (accelerator peaks, HBM and NVLink bandwidths, restart figures), so the training planner's neutral steps
(memory fit, layout, the step model, the checkpoint interval, the run) run unchanged on Google's machines."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

from gpuinfra.catalog import Catalog
from gpuinfra.catalog.models import Family, InstanceType, Source
from gpuinfra.clouds.gcp.catalog.book import GcpCatalogError, check_sources, compute_engine_type, kept_view, read_data

TRAINING_FILE = Path(__file__).parent / "data" / "training.yaml"


@dataclass(frozen=True)
class TrainingMachine:
    name: str
    series: str
    accelerator: str
    gpus: int
    vcpu: int
    memory_gib: int
    network_gbps: float
    """The MRDMA NICs' GPU-to-GPU bandwidth (the fabric)."""
    general_gbps: float
    gke_accelerator: str
    """The accelerator type a GKE node pool's guest_accelerator names (nvidia-h200-141gb)."""
    source: str


@dataclass(frozen=True)
class Fabric:
    """What a machine series needs on the network: gVNICs in regular VPCs, MRDMA NICs in one RoCE VPC."""

    gvnics: int
    mrdma_nics: int
    mtu: int
    roce_profile: str
    """The network profile's name after the zone (`<zone>-vpc-roce`)."""
    source: str

    def profile(self, project: str, zone: str) -> str:
        """The RoCE network profile of `zone`, as compute v1 Network.networkProfile names it."""
        return f"projects/{project}/global/networkProfiles/{zone}-{self.roce_profile}"


@dataclass(frozen=True)
class Figure:
    value: int
    source: str


@dataclass(frozen=True)
class LustreTier:
    """A Managed Lustre performance tier: its capacities run from `min_gib` in `step_gib` steps up to
    `threshold_gib`, then in `large_step_gib` steps from there, to `max_gib`."""

    mb_s_per_tib: int
    min_gib: int
    max_gib: int
    step_gib: int
    threshold_gib: int | None
    large_step_gib: int | None
    source: str

    def allows(self, capacity_gib: int) -> bool:
        """Whether Managed Lustre takes `capacity_gib` at this tier: within its range, on its steps."""
        if not self.min_gib <= capacity_gib <= self.max_gib:
            return False
        if self.threshold_gib is None or self.large_step_gib is None or capacity_gib <= self.threshold_gib:
            return capacity_gib % self.step_gib == 0
        return (capacity_gib - self.threshold_gib) % self.large_step_gib == 0

    def nearest(self, capacity_gib: int) -> int:
        """The smallest capacity this tier takes that holds `capacity_gib` (its maximum past the top)."""
        wanted = max(capacity_gib, self.min_gib)
        if self.threshold_gib is None or self.large_step_gib is None or wanted <= self.threshold_gib:
            return min(self.max_gib, -(-wanted // self.step_gib) * self.step_gib)
        steps = -(-(wanted - self.threshold_gib) // self.large_step_gib)
        return min(self.max_gib, self.threshold_gib + steps * self.large_step_gib)


@dataclass(frozen=True)
class Rate:
    """One hourly rate, where it comes from and the day its source read it (None: the source gives no date)."""

    usd_per_hour: Decimal
    source: str
    as_of: datetime.date | None = None


@dataclass(frozen=True)
class GpuQuota:
    """A GPU family's quota metrics per region: on-demand, and the preemptible pool (Spot and flex-start)."""

    accelerator: str
    on_demand: str
    preemptible: str
    source: str


@dataclass(frozen=True)
class TrainingBook:
    sources: dict[str, Source]
    machines: dict[str, TrainingMachine]
    fabrics: dict[str, Fabric]
    consumption: dict[str, Figure]
    lustre_tiers: dict[int, LustreTier]
    quotas: dict[str, GpuQuota]
    zones: dict[str, tuple[str, ...]]
    """Machine type -> the zones that offer it."""
    prices: dict[tuple[str, str, str, str], Rate]
    """(machine type, region, part: host or gpus, purchase: on_demand or spot) -> its hourly rate."""
    gke_cluster: Rate

    def vm_hourly(self, machine: str, region: str, purchase: str) -> Decimal | None:
        """One VM's hourly rate (host plus its GPUs, or host alone for a type without GPUs); None when unknown."""
        host = self.prices.get((machine, region, "host", purchase))
        if host is None:
            return None
        if machine not in self.machines:
            return host.usd_per_hour
        gpus = self.prices.get((machine, region, "gpus", purchase))
        return host.usd_per_hour + gpus.usd_per_hour if gpus else None

    def rate_source(self, machine: str, region: str, purchase: str) -> str | None:
        found = self.prices.get((machine, region, "host", purchase))
        return found.source if found else None

    def rate_as_of(self, machine: str, region: str, purchase: str) -> datetime.date | None:
        """The day the VM's rate was read (its host row's block: a VM's rows come from one block)."""
        found = self.prices.get((machine, region, "host", purchase))
        return found.as_of if found else None

    def machine(self, name: str) -> TrainingMachine | None:
        return self.machines.get(name)

    def fabric_of(self, machine: str) -> Fabric | None:
        found = self.machines.get(machine)
        return self.fabrics.get(found.series) if found else None


def _machine(row: dict[str, Any]) -> TrainingMachine:
    keys = (
        "name", "series", "accelerator", "gpus", "vcpu", "memory_gib", "network_gbps", "general_gbps",
        "gke_accelerator", "source",
    )  # fmt: skip
    return TrainingMachine(*(row[k] for k in keys))


def _tier(row: dict[str, Any]) -> LustreTier:
    keys = ("mb_s_per_tib", "min_gib", "max_gib", "step_gib", "threshold_gib", "large_step_gib", "source")
    return LustreTier(*(row[k] for k in keys))


def _prices(blocks: list[dict[str, Any]]) -> dict[tuple[str, str, str, str], Rate]:
    """Every block's rates, each with its block's source (a machine type priced by two blocks is the file's bug)."""
    found: dict[tuple[str, str, str, str], Rate] = {}
    for block in blocks:
        rates = {
            (machine, region, part, purchase): Rate(Decimal(str(value)), block["source"], block.get("as_of"))
            for machine, regions in block["by_machine"].items()
            for region, parts in regions.items()
            for part, rates in parts.items()
            for purchase, value in rates.items()
        }
        if rates.keys() & found.keys():
            raise ValueError(f"prices from {block['source']} repeat rows: {sorted(rates.keys() & found.keys())[:3]}")
        found.update(rates)
    return found


def _training(data: Any) -> TrainingBook:
    """The training book from the file's parsed YAML (a missing key or a wrong type is the caller's named error)."""
    return TrainingBook(
        sources={k: Source.model_validate(v) for k, v in data["sources"].items()},
        machines={m["name"]: _machine(m) for m in data["machine_types"]},
        fabrics={
            k: Fabric(v["gvnics"], v["mrdma_nics"], v["mtu"], v["roce_profile"], v["source"])
            for k, v in data["fabrics"].items()
        },
        consumption={k: Figure(v["value"], v["source"]) for k, v in data["consumption"].items()},
        lustre_tiers={t["mb_s_per_tib"]: _tier(t) for t in data["lustre_tiers"]},
        quotas={
            q["accelerator"]: GpuQuota(q["accelerator"], q["on_demand"], q["preemptible"], q["source"])
            for q in data["quotas"]
        },
        zones={m: tuple(z) for m, z in data["zones"]["by_machine"].items()},
        prices=_prices(data["prices"]),
        gke_cluster=Rate(Decimal(str(data["gke_cluster_hourly"]["value"])), data["gke_cluster_hourly"]["source"]),
    )


@cache
def training_book(path: Path = TRAINING_FILE) -> TrainingBook:
    """Google's training catalog (read once per process); a malformed file is gpuinfra's bug, named with the file."""
    book = read_data(path, "Google's training catalog", _training)
    named = (
        {m.source for m in book.machines.values()}
        | {f.source for f in book.fabrics.values()}
        | {f.source for f in book.consumption.values()}
        | {t.source for t in book.lustre_tiers.values()}
        | {q.source for q in book.quotas.values()}
        | {r.source for r in book.prices.values()}
        | {book.gke_cluster.source}
    )
    check_sources(path, named, book.sources)
    missing = {m.series for m in book.machines.values()} - set(book.fabrics)
    if missing:
        raise GcpCatalogError(f"{path}: machine series without a fabric row: {sorted(missing)}")
    return book


def _instance(machine: TrainingMachine, base: Catalog) -> InstanceType:
    accelerator = next((a for a in base.accelerator_models if a.name == machine.accelerator), None)
    if accelerator is None:
        raise GcpCatalogError(f"{TRAINING_FILE}: {machine.name}'s {machine.accelerator} is not in accelerators.yaml")
    return compute_engine_type(
        machine.source,
        machine.name,
        machine.series,
        machine.vcpu,
        machine.memory_gib,
        machine.accelerator,
        machine.gpus,
        accelerator.memory_mib,
        machine.network_gbps,
        "a Compute Engine machine type: its fabric is GPUDirect RDMA over the MRDMA NICs (no EFA)",
    )


_VIEWS: dict[int, tuple[Catalog, Catalog]] = {}


def training_catalog(base: Catalog) -> Catalog:
    """The bundled catalog with Google's training machine types in place of EC2's (its cloud-neutral tables kept);
    no prices: Google's A3 Ultra and A4 rates have no source in the catalog yet (unknown, never zero)."""
    return kept_view(_VIEWS, base, _training_view)


def _training_view(base: Catalog) -> Catalog:
    book = training_book()
    families = tuple(
        Family(source=m.source, as_of=None, family=m.series, role="training", capacity_blocks=False)
        for m in {m.series: m for m in book.machines.values()}.values()
    )
    return replace(
        base,
        sources={**base.sources, **book.sources},
        instance_types=tuple(_instance(m, base) for m in book.machines.values()),
        on_demand_prices=(),
        offered_in={},
        spot_distributions=(),
        families=families,
        spot_advice=(),
    )


__all__ = [
    "TRAINING_FILE",
    "Fabric",
    "GpuQuota",
    "LustreTier",
    "Rate",
    "TrainingBook",
    "TrainingMachine",
    "training_book",
    "training_catalog",
]
