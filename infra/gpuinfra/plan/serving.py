"""Serving: which instance holds the model, how many replicas each region runs, and the warm pool."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from gpuinfra.catalog import Catalog, InstanceType
from gpuinfra.plan.capacity import on_demand_percentage, split_capacity
from gpuinfra.plan.coldstart import ColdStart
from gpuinfra.plan.memory import MIB, Plain, ServingMemory, usable_accelerator_bytes
from gpuinfra.plan.roofline import ACTIVATION_WORKSPACE_BYTES, ReplicaBound, kv_memory_bytes

PEAK_TO_TROUGH = 10.0
"""Daily traffic varies about 10x between peak and trough."""
HOST_RAM_SHARE = 0.75
"""Largest share of host RAM the weights may take: the server process, the container runtime, the page
cache of the safetensors files being read and the OS need the rest (g6.xlarge: 16 GiB for 16 GB of bf16
weights is an out-of-memory kill during load)."""
SERVER_KINDS = {"cuda": ("gpu",), "neuron": ("inferentia", "trainium")}
"""Accelerator kinds each server build can drive: vLLM's CUDA image runs on NVIDIA GPUs only; a Neuron
build of vLLM on Inferentia and Trainium only."""


class Candidate(Plain):
    instance_type: str
    accelerator: str
    accelerator_count: int
    usable_bytes: int
    fits: bool
    usd_per_hour_total: Decimal | None
    """Sum of on-demand prices over the fleet's regions; None if any region has no price."""
    rejected: str | None = None
    """Why auto cannot use it (None: usable)."""


class InstanceChoice(Plain):
    requested: str
    chosen: str | None
    needed_bytes: int
    candidates: list[Candidate]
    reason: str


def fits(info: InstanceType, memory: ServingMemory, utilization: float, engine: str = "vllm") -> tuple[bool, int]:
    """The engine's admission rule: weights plus one maximum-length sequence's KV cache (`memory`) fit what the
    server may use (plan/roofline.py serving_admits). vLLM: its share of memory after each GPU's activation
    workspace; the others: the weights plus the KV memory their own rule leaves (kv_memory_bytes). Returns the
    fit and that usable size."""
    if engine == "vllm":
        usable = usable_accelerator_bytes(info.accelerator_count, info.accelerator_memory_mib, utilization)
        usable -= max(1, info.accelerator_count) * ACTIVATION_WORKSPACE_BYTES
        return memory.needed_bytes <= usable, usable
    count = max(1, info.accelerator_count)
    kv = kv_memory_bytes(count * info.accelerator_memory_mib * MIB, utilization, memory.weights_bytes, count, engine)
    usable = int(memory.weights_bytes + kv)
    return memory.needed_bytes <= usable, usable


def host_ram_fits(info: InstanceType, weights_bytes: int) -> bool:
    """The weights fit in the host's RAM with room for the server, the runtime and the page cache."""
    return weights_bytes <= info.memory_gib * 2**30 * HOST_RAM_SHARE


def server_runs_on(server_kind: str, info: InstanceType) -> bool:
    """Whether the server build can drive this type's accelerators at all."""
    return info.accelerator_kind in SERVER_KINDS.get(server_kind, ())


def tensor_parallel_problem(size: int, attention_heads: int | None, kv_heads: int) -> str | None:
    """Why vLLM refuses --tensor-parallel-size `size` for this model, or None. vLLM shards attention heads
    over the ranks (num_attention_heads % tp == 0) and replicates or splits KV heads (kv_heads % tp == 0
    or tp % kv_heads == 0): vllm/config ModelConfig.verify_with_parallel_config."""
    if size <= 1:
        return None
    if attention_heads is not None and attention_heads % size:
        return f"{attention_heads} attention heads do not divide over {size} tensor-parallel ranks"
    if kv_heads % size and size % kv_heads:
        return f"{kv_heads} KV heads and {size} tensor-parallel ranks: neither divides the other"
    return None


def _rejection(
    info: InstanceType,
    ok: bool,
    memory: ServingMemory,
    server_kind: str,
    attention_heads: int | None,
    kv_heads: int,
    unpriced: list[str],
    fp8_unserved: bool = False,
) -> str | None:
    if not server_runs_on(server_kind, info):
        return f"{info.accelerator} ({info.accelerator_kind}) cannot run the {server_kind} server"
    if fp8_unserved:
        return f"{info.accelerator} cannot run fp8 weights (compute capability 8.9 or later)"
    if not ok:
        return "accelerator memory too small"
    if not host_ram_fits(info, memory.weights_bytes):
        return f"host RAM {info.memory_gib} GiB too small for {memory.weights_bytes / 1e9:,.1f} GB of weights"
    problem = tensor_parallel_problem(info.accelerator_count, attention_heads, kv_heads)
    if problem:
        return problem
    if unpriced:
        return f"no on-demand price in {', '.join(unpriced)}"
    return None


def choose_instance(
    requested: str,
    gpu: str | None,
    memory: ServingMemory,
    utilization: float,
    regions: list[str],
    catalog: Catalog,
    server_kind: str = "cuda",
    attention_heads: int | None = None,
    kv_heads: int = 1,
    precision: str = "bf16",
    engine: str = "vllm",
) -> InstanceChoice:
    """`auto`: the cheapest serving type the server can drive (fp8 weights: Ada, Hopper or Blackwell) whose
    accelerators admit the model (weights plus one maximum-length sequence, by the engine's rule),
    whose host RAM holds the weights, whose accelerator count is a valid tensor-parallel size, priced in
    every region; an explicit type is kept (validators say if it does not fit)."""
    pool = _pool(requested, gpu, catalog)
    fp8_unserved = precision == "fp8" and server_kind == "cuda"
    candidates = [
        _candidate(
            info, memory, utilization, regions, catalog, server_kind, attention_heads, kv_heads, fp8_unserved, engine
        )
        for info in pool
    ]
    candidates.sort(key=lambda c: (c.usd_per_hour_total is None, c.usd_per_hour_total or 0, c.instance_type))
    return _choose(requested, memory, candidates, regions, server_kind)


def _pool(requested: str, gpu: str | None, catalog: Catalog) -> list[InstanceType]:
    """The types to weigh: the named one, or every accelerated serving family's (of the GPU asked for)."""
    if requested != "auto":
        return [i for i in catalog.instance_types if i.name == requested]
    families = catalog.serving_families()
    return [
        i
        for i in catalog.instance_types
        if i.is_accelerated and i.family in families and (gpu is None or i.accelerator == gpu)
    ]


def _candidate(
    info: InstanceType,
    memory: ServingMemory,
    utilization: float,
    regions: list[str],
    catalog: Catalog,
    server_kind: str,
    attention_heads: int | None,
    kv_heads: int,
    fp8_weights: bool,
    engine: str = "vllm",
) -> Candidate:
    """One type: whether it admits the model (by the engine's rule), its price summed over the regions, and why it
    is rejected."""
    ok, usable = fits(info, memory, utilization, engine)
    prices = [catalog.on_demand(info.name, r) for r in regions]
    unpriced = [r for r, p in zip(regions, prices, strict=True) if p is None]
    total = None if unpriced else sum((p.usd_per_hour for p in prices if p), Decimal(0))
    return Candidate(
        instance_type=info.name,
        accelerator=info.accelerator or "",
        accelerator_count=info.accelerator_count,
        usable_bytes=usable,
        fits=ok,
        usd_per_hour_total=total,
        rejected=_rejection(
            info,
            ok,
            memory,
            server_kind,
            attention_heads,
            kv_heads,
            unpriced,
            fp8_weights and not catalog.serves_fp8(info.accelerator),
        ),
    )


def _choose(
    requested: str, memory: ServingMemory, candidates: list[Candidate], regions: list[str], server_kind: str
) -> InstanceChoice:
    """The named type as set, or the cheapest usable candidate (None, with the reason, when none is)."""
    if requested != "auto":
        return InstanceChoice(
            requested=requested,
            chosen=requested,
            needed_bytes=memory.needed_bytes,
            candidates=candidates,
            reason="set in the spec",
        )
    viable = [c for c in candidates if c.rejected is None]
    if not viable:
        return InstanceChoice(
            requested="auto",
            chosen=None,
            needed_bytes=memory.needed_bytes,
            candidates=candidates,
            reason=no_choice_reason(candidates, server_kind),
        )
    return InstanceChoice(
        requested="auto",
        chosen=viable[0].instance_type,
        needed_bytes=memory.needed_bytes,
        candidates=candidates,
        reason=f"cheapest of {len(viable)} usable type(s) priced in {', '.join(regions)}",
    )


def no_choice_reason(candidates: list[Candidate], server_kind: str) -> str:
    """The real reason auto found nothing: 'no instance holds' only when none holds the model."""
    if not candidates:
        return "no catalog serving type matches the filter"
    runnable = [c for c in candidates if not (c.rejected or "").endswith(f"cannot run the {server_kind} server")]
    if not runnable:
        return f"no catalog serving type matching the filter can run the {server_kind} server"
    if not any(c.fits for c in runnable):
        return "no instance holds the model"
    by_reason: dict[str, list[str]] = {}
    for c in runnable:
        if c.fits and c.rejected:
            by_reason.setdefault(c.rejected, []).append(c.instance_type)
    parts = [
        f"{reason} ({', '.join(names[:4])}{', ...' if len(names) > 4 else ''})" for reason, names in by_reason.items()
    ]
    return "the types that hold the model are unusable: " + "; ".join(parts)


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


def failover_replicas(own_peak_rps: float, other_peaks_rps: list[float], rps_per_replica: float) -> int | None:
    """Replicas a region needs to serve its own peak plus the peak of the largest other region (failover
    n_plus_one). Latency routing sends a failed region's clients to the healthy region nearest to them (Route 53
    DG, "Latency-based routing"; Global Accelerator likewise sends traffic to the closest healthy endpoint group),
    which for a region's whole user base is one neighbour, not a share of every survivor: each survivor is
    sized to take the largest region it may be the neighbour of. None: a single region has nothing to fail
    over to."""
    if not other_peaks_rps:
        return None
    return math.ceil((own_peak_rps + max(other_peaks_rps)) / rps_per_replica - 1e-9)


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
    cold_start: ColdStart | None = None
    """The stages of cold_start_seconds (None without an instance type)."""
    bound: ReplicaBound | None = None
    """The replica's roofline for the spec's request shape (None when the bandwidth is unknown)."""
    drain_seconds: int = 300
    """Longest generation a replica may be finishing when it leaves (deregistration delay, drain hook)."""
    spot_types: list[str] = []
    """Instance types the spot burst group may launch, cheapest first (price-capacity-optimized picks)."""
    requested_max_replicas: int | None = None
    """max_replicas as the spec writes it, when failover raised max_replicas above it (else None)."""
    failover_replicas: int | None = None
    """Replicas for the region's own peak plus the largest other region's (failover n_plus_one; else None)."""


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
    failover: int | None = None,
    **extra: Any,
) -> RegionPlan:
    """`failover`: the replicas failover_replicas asks for (None: no failover sizing); max_replicas is raised to
    it, so the groups' maximum, the spot split and the quota needs all count the failover capacity."""
    requested_max = max_replicas
    if failover is not None:
        max_replicas = max(max_replicas, failover)
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
        requested_max_replicas=requested_max if max_replicas > requested_max else None,
        failover_replicas=failover,
        **extra,
    )


MAX_SPOT_TYPES = 4
"""Instance types in the burst group's overrides: enough for price-capacity-optimized to choose among.
Sizes up to twice the chosen type's vCPUs only, so the spot quota the group may use stays bounded."""


def spot_types(
    chosen: InstanceType,
    region: str,
    memory: ServingMemory,
    utilization: float,
    server_kind: str,
    catalog: Catalog,
    precision: str = "bf16",
    engine: str = "vllm",
) -> list[str]:
    """The chosen type first, then the cheapest serving types (priced in the region) that run the same
    server with the same accelerator count (one tensor-parallel size), hold the model in accelerator and
    host memory, and read memory at least as fast (so a replica never serves less than planned)."""
    floor = catalog.memory_bandwidth_gb_s(chosen.name)
    fp8 = precision == "fp8"
    families = catalog.serving_families()
    others = []
    for info in catalog.instance_types:
        if info.name == chosen.name or info.family not in families or not info.is_accelerated:
            continue
        bandwidth = catalog.memory_bandwidth_gb_s(info.name)
        price = catalog.on_demand(info.name, region)
        if (
            price is None
            or info.accelerator_count != chosen.accelerator_count
            or not server_runs_on(server_kind, info)
            or not fits(info, memory, utilization, engine)[0]
            or not host_ram_fits(info, memory.weights_bytes)
            or (fp8 and not catalog.serves_fp8(info.accelerator))
            or info.vcpu > 2 * chosen.vcpu
            or floor is None
            or bandwidth is None
            or bandwidth < floor
        ):
            continue
        others.append((price.usd_per_hour, info.name))
    return [chosen.name] + [name for _, name in sorted(others)[: MAX_SPOT_TYPES - 1]]


__all__ = [
    "HOST_RAM_SHARE",
    "MAX_SPOT_TYPES",
    "PEAK_TO_TROUGH",
    "SERVER_KINDS",
    "Candidate",
    "InstanceChoice",
    "RegionPlan",
    "choose_instance",
    "failover_replicas",
    "fits",
    "host_ram_fits",
    "no_choice_reason",
    "region_plan",
    "server_runs_on",
    "spot_types",
    "tensor_parallel_problem",
    "warm_pool_size",
]
