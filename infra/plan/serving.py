"""Serving: which instance holds the model, how many replicas each region runs, and the warm pool."""

from __future__ import annotations

import math
from decimal import Decimal

from infra.catalog import Catalog, InstanceType
from infra.plan.capacity import on_demand_percentage, split_capacity
from infra.plan.memory import Plain, ServingMemory, usable_accelerator_bytes

# Families meant for serving; auto never picks training-class P or Trn instances.
SERVING_FAMILIES = ("g4dn", "g5", "g6", "g6e", "inf2")
BOOT_SECONDS = 90.0
"""Assumed instance boot plus server start, before weights begin to load (not a catalog figure)."""
PEAK_TO_TROUGH = 10.0
"""Daily traffic varies about 10x between peak and trough."""


class Candidate(Plain):
    instance_type: str
    accelerator: str
    accelerator_count: int
    usable_bytes: int
    fits: bool
    usd_per_hour_total: Decimal | None
    """Sum of on-demand prices over the fleet's regions; None if any region has no price."""


class InstanceChoice(Plain):
    requested: str
    chosen: str | None
    needed_bytes: int
    candidates: list[Candidate]
    reason: str


def training_class(family: str) -> bool:
    """P (p4d, p5, p6-b200, ...) and Trn families are training hardware; serving on them is rarely
    cost-efficient (the serving validator and the inference policy both ask this)."""
    return family.startswith("trn") or (len(family) > 1 and family[0] == "p" and family[1].isdigit())


def fits(info: InstanceType, memory: ServingMemory, utilization: float) -> tuple[bool, int]:
    usable = usable_accelerator_bytes(info.accelerator_count, info.accelerator_memory_mib, utilization)
    return memory.needed_bytes <= usable, usable


def choose_instance(
    requested: str,
    gpu: str | None,
    memory: ServingMemory,
    utilization: float,
    regions: list[str],
    catalog: Catalog,
) -> InstanceChoice:
    """`auto`: the cheapest serving type whose accelerators hold weights plus KV cache, priced in
    every region; an explicit type is kept (validators say if it does not fit)."""
    pool = [
        i
        for i in catalog.instance_types
        if i.is_accelerated and i.family in SERVING_FAMILIES and (gpu is None or i.accelerator == gpu)
    ]
    if requested != "auto":
        pool = [i for i in catalog.instance_types if i.name == requested]
    candidates = []
    for info in pool:
        ok, usable = fits(info, memory, utilization)
        prices = [catalog.on_demand(info.name, r) for r in regions]
        total = sum((p.usd_per_hour for p in prices if p), Decimal(0)) if all(prices) else None
        candidates.append(
            Candidate(
                instance_type=info.name,
                accelerator=info.accelerator or "",
                accelerator_count=info.accelerator_count,
                usable_bytes=usable,
                fits=ok,
                usd_per_hour_total=total,
            )
        )
    candidates.sort(key=lambda c: (c.usd_per_hour_total is None, c.usd_per_hour_total or 0, c.instance_type))
    if requested != "auto":
        return InstanceChoice(
            requested=requested,
            chosen=requested,
            needed_bytes=memory.needed_bytes,
            candidates=candidates,
            reason="set in the spec",
        )
    viable = [c for c in candidates if c.fits and c.usd_per_hour_total is not None]
    if not viable:
        return InstanceChoice(
            requested="auto",
            chosen=None,
            needed_bytes=memory.needed_bytes,
            candidates=candidates,
            reason="no catalog type holds the model and has a price in every region",
        )
    best = viable[0]
    return InstanceChoice(
        requested="auto",
        chosen=best.instance_type,
        needed_bytes=memory.needed_bytes,
        candidates=candidates,
        reason=f"cheapest of {len(viable)} fitting type(s) priced in {', '.join(regions)}",
    )


def cold_start_seconds(weights_bytes: int, download_gb_s: float, given: float | None) -> float:
    """Boot plus weights download: what one scale-out waits before serving."""
    if given is not None:
        return given
    return BOOT_SECONDS + weights_bytes / 1e9 / download_gb_s


def warm_pool_size(
    setting: str | int,
    peak_rps: float,
    rps_per_replica: float,
    cold_start_s: float,
    ramp_minutes: float,
    burst: int,
) -> int:
    """auto: replicas the demand ramp adds during one cold start, kept pre-initialized."""
    if setting == "off":
        return 0
    if isinstance(setting, int):
        return min(setting, burst)
    growth_rps_per_s = (peak_rps - peak_rps / PEAK_TO_TROUGH) / (ramp_minutes * 60.0)
    needed = math.ceil(growth_rps_per_s * cold_start_s / rps_per_replica - 1e-9)
    return max(0, min(needed, burst))


class RegionPlan(Plain):
    region: str
    instance_type: str | None
    accelerator: str | None
    accelerators_per_instance: int
    zones: list[str]
    min_replicas: int
    max_replicas: int
    demand_replicas: int
    """Replicas the region's peak demand needs, before clamping to min/max."""
    planned_replicas: int
    on_demand_base: int
    on_demand_pct_above_base: int
    max_on_demand: int
    max_spot: int
    warm_pool: int
    cold_start_seconds: float


def region_plan(
    region: str,
    instance_type: str | None,
    accelerator: str | None,
    accelerators_per_instance: int,
    zones: list[str],
    min_replicas: int,
    max_replicas: int,
    peak_rps: float,
    rps_per_replica: float,
    spot_share: float,
    warm_pool_setting: str | int,
    cold_start_s: float,
    ramp_minutes: float,
) -> RegionPlan:
    demand = math.ceil(peak_rps / rps_per_replica - 1e-9)
    pct = on_demand_percentage(spot_share)
    od, spot = split_capacity(max_replicas, min_replicas, pct)
    burst = max(0, max_replicas - min_replicas)
    return RegionPlan(
        region=region,
        instance_type=instance_type,
        accelerator=accelerator,
        accelerators_per_instance=accelerators_per_instance,
        zones=zones,
        min_replicas=min_replicas,
        max_replicas=max_replicas,
        demand_replicas=demand,
        planned_replicas=min(max(demand, min_replicas), max_replicas),
        on_demand_base=min_replicas,
        on_demand_pct_above_base=pct,
        max_on_demand=od,
        max_spot=spot,
        warm_pool=warm_pool_size(warm_pool_setting, peak_rps, rps_per_replica, cold_start_s, ramp_minutes, burst),
        cold_start_seconds=cold_start_s,
    )


__all__ = [
    "BOOT_SECONDS",
    "PEAK_TO_TROUGH",
    "SERVING_FAMILIES",
    "Candidate",
    "InstanceChoice",
    "RegionPlan",
    "choose_instance",
    "cold_start_seconds",
    "fits",
    "region_plan",
    "training_class",
    "warm_pool_size",
]
