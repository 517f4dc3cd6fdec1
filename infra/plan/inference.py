"""The inference plan: instance choice, per-region replicas, spot split, warm pools, quota needs."""

from __future__ import annotations

from typing import Literal

from infra.catalog import Catalog
from infra.plan.memory import Plain, ServingMemory, serving_memory
from infra.plan.quotas import QuotaNeed, Usage, quota_needs
from infra.plan.serving import InstanceChoice, RegionPlan, choose_instance, cold_start_seconds, region_plan
from infra.spec import InferenceSpec, Organization


class InferencePlan(Plain):
    workload: Literal["inference"] = "inference"
    memory: ServingMemory
    choice: InstanceChoice
    regions: list[RegionPlan]
    quotas: list[QuotaNeed]


def default_zones(region: str) -> list[str]:
    return [f"{region}a", f"{region}b"]


def plan_inference(spec: InferenceSpec, org: Organization, catalog: Catalog) -> InferencePlan:
    m = spec.model
    memory = serving_memory(
        m.parameters_billion,
        m.precision,
        m.kv_cache.layers,
        m.kv_cache.kv_heads,
        m.kv_cache.head_dim,
        m.kv_cache.precision,
        m.context_length_tokens,
        m.max_concurrent_sequences,
    )
    fleet_regions = [r.region for r in spec.regions if r.instance_type is None] or [r.region for r in spec.regions]
    choice = choose_instance(
        spec.instance.type, spec.instance.gpu, memory, m.gpu_memory_utilization, fleet_regions, catalog
    )
    cold = cold_start_seconds(memory.weights_bytes, spec.cold_start.download_gb_s, spec.cold_start.weights_load_seconds)

    def accelerator(instance_type: str | None) -> tuple[str | None, int]:
        info = catalog.instance(instance_type) if instance_type else None
        return (info.accelerator, info.accelerator_count) if info else (None, 0)

    regions = [
        region_plan(
            r.region,
            r.instance_type or choice.chosen,
            *accelerator(r.instance_type or choice.chosen),
            r.availability_zones or default_zones(r.region),
            r.min_replicas,
            r.max_replicas,
            r.peak_rps,
            spec.throughput_rps_per_replica,
            spec.spot_burst_share,
            spec.cold_start.warm_pool,
            cold,
            spec.cold_start.demand_ramp_minutes,
        )
        for r in spec.regions
    ]
    usages = []
    for rp in regions:
        if rp.instance_type:
            usages += [
                Usage(rp.region, rp.instance_type, "on_demand", rp.max_on_demand),
                Usage(rp.region, rp.instance_type, "spot", rp.max_spot),
            ]
    account = org.accounts.get(spec.account)
    quotas = quota_needs(usages, catalog, spec.account, account.id, account.quotas) if account else []
    return InferencePlan(memory=memory, choice=choice, regions=regions, quotas=quotas)


__all__ = ["InferencePlan", "default_zones", "plan_inference"]
