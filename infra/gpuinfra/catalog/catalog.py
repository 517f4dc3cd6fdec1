"""The loaded catalog and its lookups. Unknown is `None`, never zero."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property

from gpuinfra.catalog.engines import Engine, EngineTable
from gpuinfra.catalog.models import (
    Accelerator,
    AcceleratorPeak,
    AcceleratorPower,
    AcceleratorSet,
    CoolingLimit,
    Device,
    Entry,
    Family,
    Figure,
    FsxCapacity,
    FsxEfa,
    InstanceType,
    MemoryBandwidth,
    NodePower,
    NvLink,
    OnDemandPrice,
    RegionList,
    RegionZones,
    Role,
    ServicePrice,
    Source,
    SpotAdvice,
    SpotDefault,
    SpotDistribution,
    UnknownPrice,
)


@dataclass(frozen=True)
class SpotDiscount:
    """A spot discount and the catalog entry it came from (a SpotDistribution, or the SpotDefault)."""

    discount: Decimal
    entry: Entry


@dataclass(frozen=True)
class Catalog:
    sources: dict[str, Source]
    instance_types: tuple[InstanceType, ...]
    on_demand_prices: tuple[OnDemandPrice, ...]
    offered_in: dict[str, tuple[str, ...]]
    """Per type, the regions the price snapshot says it is sold in (its own list, apart from its prices)."""
    spot_default: SpotDefault
    spot_distributions: tuple[SpotDistribution, ...]
    families: tuple[Family, ...]
    accelerator_models: tuple[Accelerator, ...]
    node_powers: tuple[NodePower, ...]
    accelerators: tuple[AcceleratorPower, ...]
    cooling_limits: tuple[CoolingLimit, ...]
    service_prices: tuple[ServicePrice, ...]
    unknown_prices: tuple[UnknownPrice, ...]
    fsx_capacity: FsxCapacity
    fsx_efa: FsxEfa
    region_list: RegionList
    memory_bandwidths: tuple[MemoryBandwidth, ...] = ()
    """serving.yaml: device-memory bandwidth per accelerator (the serving roofline)."""
    serving_figures: dict[str, Figure] = field(default_factory=dict)
    """serving.yaml cold_start: image size, boot and engine-init figures."""
    accelerator_peaks: tuple[AcceleratorPeak, ...] = ()
    nvlinks: tuple[NvLink, ...] = ()
    """Dense peak TFLOPS per precision (accelerators.yaml `peaks`)."""
    devices: tuple[Device, ...] = ()
    """How Kubernetes requests and selects each kind of accelerator (accelerators.yaml `devices`)."""
    fp8_weights: AcceleratorSet | None = None
    """Accelerators vLLM serves FP8 weights on (accelerators.yaml `fp8_weights`)."""
    spot_advice: tuple[SpotAdvice, ...] = ()
    """The Spot Instance Advisor's interruption band per (type, Region) (spot_advice.json)."""
    instance_topology: AcceleratorSet | None = None
    """Instance types whose network topology EC2 describes (topology.yaml; `names` are instance types)."""

    region_time_zones: RegionZones | None = None
    """Each region's local IANA time zone (time_zones.yaml)."""

    engine_table: EngineTable = field(default_factory=EngineTable)
    """The serving engines' images, launch and metrics (engines.yaml, with its own sources)."""

    def engine(self, name: str) -> Engine:
        """The serving engine a spec names (engines.yaml)."""
        return self.engine_table.engine(name)

    def time_zones(self) -> dict[str, str]:
        """Region -> its local IANA time zone (scheduled floors run on it: plan/schedules.py)."""
        rows = self.region_time_zones.zones if self.region_time_zones else {}
        return {region: row.zone for region, row in rows.items()}

    def describes_topology(self, instance_type: str) -> bool:
        """EC2 describes the type's place in the network, so EKS labels its network layers."""
        return self.instance_topology is not None and instance_type in self.instance_topology.names

    # ---- indexes (built once, on first use)
    @cached_property
    def _instances(self) -> dict[str, InstanceType]:
        return {i.name: i for i in self.instance_types}

    @cached_property
    def _prices(self) -> dict[tuple[str, str], OnDemandPrice]:
        return {(p.instance_type, p.region): p for p in self.on_demand_prices}

    @cached_property
    def _price_regions(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = {}
        for p in self.on_demand_prices:
            out.setdefault(p.instance_type, []).append(p.region)
        return {k: tuple(sorted(v)) for k, v in out.items()}

    @cached_property
    def _spot(self) -> dict[tuple[str, str], SpotDistribution]:
        return {(s.instance_type, s.region): s for s in self.spot_distributions}

    @cached_property
    def _services(self) -> dict[str, ServicePrice]:
        return {s.key: s for s in self.service_prices}

    @cached_property
    def _families(self) -> dict[str, Family]:
        return {f.family: f for f in self.families}

    @cached_property
    def regions(self) -> frozenset[str]:
        return frozenset(self.region_list.codes)

    # ---- instance types
    def instance(self, name: str) -> InstanceType | None:
        return self._instances.get(name)

    def instance_names(self) -> list[str]:
        return sorted(self._instances)

    def find_instances(
        self,
        accelerator: str | None = None,
        min_accelerator_memory_mib: int = 0,
        efa: bool | None = None,
        region: str | None = None,
    ) -> list[InstanceType]:
        """Types with the named accelerator (case-insensitive), at least that much memory per device, with
        (or without) EFA, priced on-demand in the region: what `gpuinfra catalog` filters by."""
        want = accelerator.lower() if accelerator else None
        return [
            i
            for i in self.instance_types
            if (want is None or (i.accelerator or "").lower() == want)
            and i.accelerator_memory_mib >= min_accelerator_memory_mib
            and (efa is None or (i.efa_interfaces > 0) == efa)
            and (region is None or (i.name, region) in self._prices)
        ]

    # ---- families: role, serving, training
    def family(self, name: str) -> Family | None:
        return self._families.get(name)

    def family_role(self, name: str) -> Role | None:
        found = self._families.get(name)
        return found.role if found else None

    def serving_families(self) -> tuple[str, ...]:
        """Families `instance: auto` may place a model on (families.yaml role: serving)."""
        return tuple(f.family for f in self.families if f.role == "serving")

    def is_training_class(self, family: str) -> bool:
        """Training hardware (families.yaml role: training): serving on it is rarely cost-efficient."""
        return self.family_role(family) == "training"

    # ---- accelerators
    def accelerator_model(self, name: str, memory_mib: int) -> Accelerator | None:
        return next((a for a in self.accelerator_models if a.name == name and a.memory_mib == memory_mib), None)

    def accelerator_names(self) -> tuple[str, ...]:
        """Every accelerator name a catalog type carries: what `instance.gpu` of an inference spec may name."""
        return tuple(sorted({i.accelerator for i in self.instance_types if i.accelerator and i.accelerator_count}))

    def memory_bandwidth_gb_s(self, instance_type: str) -> float | None:
        """Device-memory bandwidth of one accelerator of this type, GB/s; None when the catalog has no
        datasheet figure for it (unknown, never assumed)."""
        info = self.instance(instance_type)
        if info is None or not info.accelerator:
            return None
        found = next(
            (
                b
                for b in self.memory_bandwidths
                if b.name == info.accelerator and b.memory_mib == info.accelerator_memory_mib
            ),
            None,
        )
        return found.gb_s if found else None

    def serving_figure(self, key: str) -> Figure:
        """A cold-start figure of serving.yaml (a missing key is a bug in gpuinfra: KeyError)."""
        return self.serving_figures[key]

    def gpu_product(self, instance_type: str) -> str | None:
        """The nvidia.com/gpu.product label GPU feature discovery sets on a node of this type; None for
        non-NVIDIA or fractional GPUs."""
        info = self.instance(instance_type)
        if info is None or not info.accelerator or not info.accelerator_count:
            return None
        found = self.accelerator_model(info.accelerator, info.accelerator_memory_mib)
        return found.k8s_product if found else None

    def device(self, instance_type: str) -> Device | None:
        """How Kubernetes sees this type's accelerators; None for a type without whole accelerators."""
        info = self.instance(instance_type)
        if info is None or not info.accelerator_count or info.accelerator_kind is None:
            return None
        return next((d for d in self.devices if d.kind == info.accelerator_kind), None)

    def k8s_resource(self, instance_type: str) -> str | None:
        """The extended resource a pod requests this type's accelerators as (nvidia.com/gpu, aws.amazon.com/neuron)."""
        found = self.device(instance_type)
        return found.k8s_resource if found else None

    def node_selector(self, instance_type: str) -> dict[str, str]:
        """The node label a pod selects a node of this type by: GPU feature discovery's product label for an
        NVIDIA GPU, the well-known instance-type label for a Neuron device; empty when neither is known."""
        found = self.device(instance_type)
        if found is None:
            return {}
        value = self.gpu_product(instance_type) if found.node_value == "product" else instance_type
        return {found.node_label: value} if value else {}

    def serves_fp8(self, accelerator: str | None) -> bool:
        """vLLM serves FP8 weights on this accelerator (compute capability 8.9 or later)."""
        return bool(accelerator) and self.fp8_weights is not None and accelerator in self.fp8_weights.names

    def nvlink_gb_s(self, name: str) -> float | None:
        """Per-GPU NVLink bandwidth one way; None for a GPU without NVLink."""
        return next((n.gb_s for n in self.nvlinks if n.name == name), None)

    def accelerator_peak(self, name: str) -> AcceleratorPeak | None:
        """The dense peak figures of an accelerator; None when no datasheet figure is carried."""
        return next((p for p in self.accelerator_peaks if p.name == name), None)

    # ---- prices
    def on_demand(self, instance_type: str, region: str) -> OnDemandPrice | None:
        return self._prices.get((instance_type, region))

    def priced_regions(self, instance_type: str) -> tuple[str, ...]:
        """Every region the price snapshot lists an on-demand price for this type in."""
        return self._price_regions.get(instance_type, ())

    def offered_regions(self, instance_type: str) -> tuple[str, ...]:
        """Regions the price snapshot says the type is sold in (may name one it gives no price for)."""
        return self.offered_in.get(instance_type, ())

    def spot(self, instance_type: str, region: str) -> SpotDistribution | None:
        return self._spot.get((instance_type, region))

    def interruption(self, instance_type: str, region: str | None) -> SpotAdvice | None:
        """The advisor's interruption band for the type in the Region; None when the catalog holds none."""
        return next((a for a in self.spot_advice if a.instance_type == instance_type and a.region == region), None)

    def spot_discount(self, instance_type: str, region: str) -> SpotDiscount:
        """The zone-mean discount for the type in the region, else the catalog's default (an estimate)."""
        found = self._spot.get((instance_type, region))
        if found is not None:
            return SpotDiscount(found.mean, found)
        return SpotDiscount(self.spot_default.discount, self.spot_default)

    def service(self, key: str) -> ServicePrice | None:
        return self._services.get(key)

    def unknown_price(self, key: str) -> UnknownPrice | None:
        """Why a price is unknown, for keys the catalog knows it lacks (the key or its prefix before '/')."""
        for u in self.unknown_prices:
            if key == u.key or key.startswith(u.key + "/"):
                return u
        return None

    # ---- power, storage
    def node_power(self, instance_type: str) -> NodePower | None:
        return next((p for p in self.node_powers if p.instance_type == instance_type), None)

    def accelerator_power(self, name: str) -> AcceleratorPower | None:
        return next((a for a in self.accelerators if a.name == name), None)

    def cooling_limit(self, cooling: str) -> CoolingLimit:
        return next(c for c in self.cooling_limits if c.cooling == cooling)

    def fsx_capacity_gib(self, requested_gib: int, efa_tier: int | None = None) -> int:
        """The smallest valid FSx for Lustre SSD capacity at or above `requested_gib`; on an EFA-enabled file
        system (`efa_tier`: its MB/s/TiB tier) a whole number of that tier's capacity steps."""
        if efa_tier is not None:
            step = self.fsx_efa.increment_gib[efa_tier]
            return max(step, math.ceil(requested_gib / step) * step)
        for step in self.fsx_capacity.first_steps_gib:
            if requested_gib <= step:
                return step
        inc = self.fsx_capacity.increment_gib
        return max(self.fsx_capacity.first_steps_gib[-1], math.ceil(requested_gib / inc) * inc)

    def fsx_efa_client(self, instance_type: str) -> bool:
        """The type is one the FSx guide names as an EFA client (its family in fsx_efa.client_families)."""
        info = self.instance(instance_type)
        return info is not None and info.efa_interfaces > 0 and info.family in self.fsx_efa.client_families


__all__ = ["Catalog", "SpotDiscount"]
