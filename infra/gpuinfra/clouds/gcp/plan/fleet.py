"""The Google fleet's plan: the same InferencePlan AWS's fleet gets, computed by the same cloud-neutral steps
(serving memory, instance choice, cold start, the replica's roofline, region capacity, failover), run on Google's
machine types and prices (gcp_catalog), with quota needs in Compute Engine's units.

What differs from AWS is stated where it enters: a Spot VM gets at most 30 s of notice (the cloud registry's
spot_notice_seconds), so a Spot replica's drain is that window, not the time its longest answer takes; and a
region's zones are the ones the catalog lists G2 in, unless the spec names its own."""

from __future__ import annotations

from typing import Any

from gpuinfra.catalog import Catalog
from gpuinfra.clouds import cloud
from gpuinfra.clouds.gcp.catalog import gcp_book, gcp_catalog
from gpuinfra.clouds.gcp.plan.quotas import GpuDemand, gpu_quota_needs
from gpuinfra.clouds.gcp.spec import GcpInferenceSpec, GcpProject
from gpuinfra.plan.failover import failover_rows, fleet_losses
from gpuinfra.plan.inference import (
    InferencePlan,
    fleet_region,
    instance_choice,
    region_loads,
    replica_figures,
    replica_memory,
)
from gpuinfra.plan.memory import ServingMemory
from gpuinfra.plan.quotas import QuotaNeed
from gpuinfra.plan.serving import InstanceChoice, RegionPlan
from gpuinfra.plan.tokens import serving_economics
from gpuinfra.spec import Organization

SPOT_NOTICE_SECONDS = cloud("gcp").spot_notice_seconds


def fleet_choice(spec: GcpInferenceSpec, memory: ServingMemory, catalog: Catalog) -> InstanceChoice:
    """The machine type `auto` picks: the cheapest G2 type priced in every region without its own type."""
    return instance_choice(spec, memory, catalog, lambda r: r.machine_type, "cuda")  # type: ignore[arg-type]


def region_figures(spec: GcpInferenceSpec, memory: ServingMemory, machine: str, catalog: Catalog) -> dict[str, Any]:
    """Cold start, the replica's roofline and the drain of one region's machine type (empty when unknown): a Spot
    VM's drain is at least its notice."""
    info = catalog.instance(machine)
    if info is None:
        return {}
    figures = replica_figures(spec, memory, info, catalog, SPOT_NOTICE_SECONDS)  # type: ignore[arg-type]
    return {**figures, "spot_types": [info.name]}


def fleet_regions(
    spec: GcpInferenceSpec, memory: ServingMemory, choice: InstanceChoice, catalog: Catalog
) -> list[RegionPlan]:
    """Each region on its machine type, in the zones it names or those the catalog lists G2 in."""
    book = gcp_book()
    plans = []
    for r in spec.regions:
        machine = r.machine_type or choice.chosen
        extra = region_figures(spec, memory, machine, catalog) if machine else {}
        info = catalog.instance(machine) if machine else None
        zones = list(r.zones) or list(book.zones_of(r.region))
        plans.append(fleet_region(spec, r, machine, info, zones, extra))  # type: ignore[arg-type]
    return plans


def fleet_quotas(spec: GcpInferenceSpec, org: Organization, regions: list[RegionPlan]) -> list[QuotaNeed]:
    """GPUs at full size: each region's on-demand group at its maximum and its Spot group at its maximum."""
    project = org.accounts.get(spec.account)
    if not isinstance(project, GcpProject):
        return []  # the validators refuse a fleet whose project is not a Google project
    demands = []
    for rp in regions:
        per_vm = rp.accelerators_per_instance
        demands += [
            GpuDemand(rp.region, "on_demand", rp.max_on_demand * per_vm),
            GpuDemand(rp.region, "spot", rp.max_spot * per_vm),
        ]
    return gpu_quota_needs(demands, gcp_book(), spec.account, project.id, project.quotas)


def plan_fleet(spec: GcpInferenceSpec, org: Organization, catalog: Catalog) -> InferencePlan:
    """The outline: memory, the machine type, each region's capacity, quotas, economics, failover."""
    google = gcp_catalog(catalog)
    memory = replica_memory(spec.model)
    choice = fleet_choice(spec, memory, google)
    regions = fleet_regions(spec, memory, choice, google)
    loads = region_loads(spec, regions)  # type: ignore[arg-type]
    return InferencePlan(
        memory=memory,
        choice=choice,
        regions=regions,
        quotas=fleet_quotas(spec, org, regions),
        economics=serving_economics(spec, memory, regions, google),  # type: ignore[arg-type]
        failover=failover_rows(loads),
        fleet_losses=fleet_losses(loads),
    )


__all__ = ["SPOT_NOTICE_SECONDS", "plan_fleet"]
