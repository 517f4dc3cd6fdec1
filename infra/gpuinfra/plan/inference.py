"""The inference plan: instance choice, per-region replicas, spot split, warm pools, quota needs."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

from gpuinfra.catalog import Catalog, InstanceType
from gpuinfra.clouds import cloud_of
from gpuinfra.plan.adapters import lora_slot_bytes, served_max_rank
from gpuinfra.plan.coldstart import cold_start
from gpuinfra.plan.failover import FailoverRow, FleetLoss, RegionLoad, failover_rows, fleet_losses
from gpuinfra.plan.memory import Plain, ServingMemory, serving_memory
from gpuinfra.plan.quotas import InstanceDemand, QuotaNeed, needs_in
from gpuinfra.plan.rollout import KUBERNETES_SURGE
from gpuinfra.plan.rollout_order import RolloutStep, rollout_steps, soak_window_seconds
from gpuinfra.plan.serving import (
    InstanceChoice,
    RegionPlan,
    choose_instance,
    failover_replicas,
    region_plan,
    spot_types,
)
from gpuinfra.plan.tokens import ServingEconomics, replica_roofline, serving_economics
from gpuinfra.spec import InferenceSpec, Organization
from gpuinfra.spec.inference import LORA_RANKS, FleetRegion, ServedModel


class InferencePlan(Plain):
    workload: Literal["inference"] = "inference"
    memory: ServingMemory
    choice: InstanceChoice
    regions: list[RegionPlan]
    quotas: list[QuotaNeed]
    economics: ServingEconomics | None = None
    """Tokens/s per replica, concurrency and cost per million tokens per region; what quantizing changes."""
    failover: list[FailoverRow] = []
    """Each region with the largest other region's peak failed over to it, against its (final) maximum."""
    fleet_losses: list[FleetLoss] = []
    """Each region lost at peak: the survivors' capacity against the fleet's peak."""
    rollout: list[RolloutStep] = []
    """Where a new release's canary can start in each region, home region first (empty without a registry)."""


DEFAULT_DRAIN_SECONDS = 300
"""Drain when the replica's decode rate is unknown (no bandwidth figure): five minutes."""
MAX_DRAIN_SECONDS = 3600
"""Target groups allow a deregistration delay of at most 3,600 s (ELB TargetGroupAttribute)."""
MIN_DRAIN_SECONDS = 30
"""The shortest drain AWS's fleet plans, however fast its replicas answer."""
FALLBACK_COLD_START_SECONDS = 600.0
"""Used only for a region without an instance type, which the validators refuse anyway."""


def default_zones(region: str) -> list[str]:
    return [f"{region}a", f"{region}b"]


def adapter_memory(model: ServedModel) -> int:
    """The GPU slots of the model's LoRA adapters (0 without adapters)."""
    if not model.adapters:
        return 0
    rank = served_max_rank([a.rank for a in model.adapters], LORA_RANKS)
    pairs = [(a.rank, a.parameters_million * 1e6) for a in model.adapters]
    return lora_slot_bytes(pairs, rank, model.max_loras or len(model.adapters))


def plan_inference(spec: InferenceSpec, org: Organization, catalog: Catalog) -> InferencePlan:
    """The fleet's plan: memory of one replica, the instance, each region's replicas, quotas, economics, failover."""
    memory = replica_memory(spec.model)
    choice = _choice(spec, memory, catalog)
    regions = [_region(spec, r, choice, memory, catalog) for r in spec.regions]
    account = org.accounts.get(spec.account)
    demands = _demands(spec, regions, catalog)
    quotas = needs_in(cloud_of(spec), demands, catalog, spec.account, account.id, account.quotas) if account else []
    loads = region_loads(spec, regions)
    return InferencePlan(
        memory=memory,
        choice=choice,
        regions=regions,
        quotas=quotas,
        economics=serving_economics(spec, memory, regions, catalog, spec.engine),
        failover=failover_rows(loads),
        fleet_losses=fleet_losses(loads),
        rollout=_rollout(spec, org, regions),
    )


def _rollout(spec: InferenceSpec, org: Organization, regions: list[RegionPlan]) -> list[RolloutStep]:
    """The release's order over the regions (none without a registry: region-without-weights-replica refuses)."""
    registry = org.registry
    if registry is None:
        return []
    return rollout_steps(
        [(rp.region, rp.cold_start_seconds) for rp in regions],
        registry.region,
        {rp.region: registry.replica_bucket(rp.region) for rp in regions},
        spec.platform == "kubernetes",
        soak_window_seconds(spec.load_balancer.type == "alb", spec.slo.evaluation_minutes),
    )


def replica_memory(m: ServedModel) -> ServingMemory:
    """Weights, one maximum-length sequence's KV cache (vLLM's admission rule: plan/roofline.py) and the LoRA
    adapters' slots of one replica of `m` (on any cloud: the model is the same spec type)."""
    return serving_memory(
        m.parameters_billion,
        m.precision,
        m.kv_cache.layers,
        m.kv_cache.kv_heads,
        m.kv_cache.head_dim,
        m.kv_cache.precision,
        m.context_length_tokens,
        adapter_bytes=adapter_memory(m),
    )


def _choice(spec: InferenceSpec, memory: ServingMemory, catalog: Catalog) -> InstanceChoice:
    """The instance for the regions that leave it to the plan, on the spec's server and engine."""
    return instance_choice(spec, memory, catalog, lambda r: r.instance_type, spec.server_kind, spec.engine)


def instance_choice(
    spec: InferenceSpec,
    memory: ServingMemory,
    catalog: Catalog,
    pinned: Callable[[Any], str | None],
    server_kind: str,
    engine: str = "vllm",
) -> InstanceChoice:
    """The type `auto` picks for the regions that leave it to the plan (`pinned(region)` is None; all regions when
    each names its own): a step every cloud's fleet planner takes, on its own catalog."""
    m = spec.model
    fleet_regions = [r.region for r in spec.regions if pinned(r) is None] or [r.region for r in spec.regions]
    return choose_instance(
        spec.instance.type,
        spec.instance.gpu,
        memory,
        m.gpu_memory_utilization,
        fleet_regions,
        catalog,
        server_kind,
        m.attention_heads,
        m.kv_cache.kv_heads,
        m.precision,
        engine,
    )


def replica_figures(
    spec: InferenceSpec,
    memory: ServingMemory,
    info: InstanceType,
    catalog: Catalog,
    min_drain_seconds: int,
    engine: str = "vllm",
) -> dict[str, Any]:
    """What one replica on `info` takes and gives, on any cloud: its cold start, its roofline ceiling, and the drain
    its longest answer needs (at least `min_drain_seconds`, at most a target group's 3,600 s)."""
    c = spec.cold_start
    cold = cold_start(info, memory.weights_bytes, catalog, c.download_gb_s, c.weights_load_seconds, c.compile_cache)
    replica = replica_roofline(info, memory, spec, catalog, engine=engine)
    longest = spec.requests.max_output_tokens or spec.model.context_length_tokens
    drain = math.ceil(longest / replica.steps_per_s) if replica else DEFAULT_DRAIN_SECONDS
    return {
        "cold_start": cold,
        "bound": replica,
        "drain_seconds": max(min_drain_seconds, min(MAX_DRAIN_SECONDS, drain)),
    }


def _region_extra(
    spec: InferenceSpec, memory: ServingMemory, catalog: Catalog, region: str, instance_type: str | None, pinned: bool
) -> dict[str, Any]:
    """What a region's plan derives from its instance type: cold start, the replica's ceiling, drain, spot types."""
    m = spec.model
    info = catalog.instance(instance_type) if instance_type else None
    if info is None:
        return {}
    return {
        **replica_figures(spec, memory, info, catalog, MIN_DRAIN_SECONDS, spec.engine),
        # A type the spec names stays that type on spot too (and in the quota plan); only `auto` lets the
        # burst group diversify over types that serve at least as fast.
        "spot_types": [info.name]
        if pinned
        else spot_types(
            info, region, memory, m.gpu_memory_utilization, spec.server_kind, catalog, m.precision, spec.engine
        ),
    }


def _region(
    spec: InferenceSpec, r: FleetRegion, choice: InstanceChoice, memory: ServingMemory, catalog: Catalog
) -> RegionPlan:
    """One region's replicas, spot split, warm pool and failover headroom on its instance type."""
    instance_type = r.instance_type or choice.chosen
    pinned = r.instance_type is not None or spec.instance.type != "auto"
    extra = _region_extra(spec, memory, catalog, r.region, instance_type, pinned)
    zones = r.availability_zones or default_zones(r.region)
    return fleet_region(
        spec, r, instance_type, catalog.instance(instance_type) if instance_type else None, zones, extra
    )


def fleet_region(
    spec: InferenceSpec,
    r: Any,
    instance_type: str | None,
    info: InstanceType | None,
    zones: list[str],
    extra: dict[str, Any],
) -> RegionPlan:
    """Region `r`'s replicas, spot split, warm pool and N+1 failover headroom on `instance_type` (`info`), with the
    figures `extra` derived from it (replica_figures and the spot types; empty when the type is unknown): a step
    every cloud's fleet planner takes, on its own zones."""
    return region_plan(
        r.region,
        instance_type,
        info.accelerator if info else None,
        info.accelerator_count if info else 0,
        zones,
        r.min_replicas,
        r.max_replicas,
        r.peak_rps,
        spec.throughput_of(r),
        spec.spot_burst_share,
        spec.cold_start.warm_pool,
        extra["cold_start"].total_seconds if extra else FALLBACK_COLD_START_SECONDS,
        spec.cold_start.demand_ramp_minutes,
        failover=failover_replicas(r.peak_rps, [o.peak_rps for o in spec.regions if o is not r], spec.throughput_of(r))
        if spec.failover == "n_plus_one"
        else None,
        **extra,
    )


def region_loads(spec: InferenceSpec, regions: list[RegionPlan]) -> list[RegionLoad]:
    """Each region's peak, per-replica throughput and planned maximum: what failover and fleet losses weigh."""
    return [
        RegionLoad(r.region, r.peak_rps, spec.throughput_of(r), rp.max_replicas)
        for r, rp in zip(spec.regions, regions, strict=True)
    ]


def _demands(spec: InferenceSpec, regions: list[RegionPlan], catalog: Catalog) -> list[InstanceDemand]:
    """The instances each region may run at once, by purchase option, for the quota plan."""

    def largest(types: list[str]) -> str | None:
        infos = [i for i in (catalog.instance(t) for t in types) if i]
        return max(infos, key=lambda i: i.vcpu).name if infos else None

    # A Kubernetes rolling update at max_replicas runs KUBERNETES_SURGE pods more, each on its own node.
    surge = KUBERNETES_SURGE if spec.platform == "kubernetes" else 0
    demands = []
    for rp in regions:
        if rp.instance_type:
            demands += [
                InstanceDemand(rp.region, rp.instance_type, "on_demand", rp.max_on_demand + surge),
                # The burst group may launch any of its overrides: count the largest, as the policy does.
                InstanceDemand(rp.region, largest(rp.spot_types) or rp.instance_type, "spot", rp.max_spot),
                # The on-demand overflow group takes the burst share when spot is short (components/replicas.py).
                InstanceDemand(rp.region, rp.instance_type, "on_demand", rp.max_spot),
            ]
    return demands


__all__ = [
    "DEFAULT_DRAIN_SECONDS",
    "FALLBACK_COLD_START_SECONDS",
    "MAX_DRAIN_SECONDS",
    "MIN_DRAIN_SECONDS",
    "InferencePlan",
    "default_zones",
    "fleet_region",
    "instance_choice",
    "plan_inference",
    "region_loads",
    "replica_figures",
    "replica_memory",
]
