"""A Google training cluster's quota needs, in Compute Engine's units: GPUs of the machine's family per region
(on-demand nodes against NVIDIA_<GPU>_GPUS, Spot and flex-start nodes against the PREEMPTIBLE_ pool: flex-start
VMs "consume preemptible quota") and every GPU against GPUS_ALL_REGIONS, as the fleet's needs are counted
(plan/quotas.py), so the workspace folds a project's training and other stacks together. Nodes that consume a
reservation need no quota: the reservation holds it."""

from __future__ import annotations

from gpuinfra.catalog import InstanceType
from gpuinfra.clouds.gcp.catalog import gcp_book
from gpuinfra.clouds.gcp.catalog.training import training_book
from gpuinfra.clouds.gcp.plan.quotas import GLOBAL
from gpuinfra.clouds.gcp.spec import GcpProject
from gpuinfra.clouds.gcp.spec.training import GcpTrainingSpec
from gpuinfra.plan.quotas import QuotaNeed
from gpuinfra.spec import Organization

POOL = {"on_demand": "on_demand", "spot": "preemptible", "flex_start": "preemptible"}
"""Which of a family's metrics a consumption model draws on (a reservation: none)."""


def training_quota_needs(spec: GcpTrainingSpec, org: Organization, info: InstanceType) -> list[QuotaNeed]:
    """The GPUs the cluster holds at full size, per metric, against the project's grant."""
    project = org.accounts.get(spec.account)
    family = training_book().quotas.get(info.accelerator or "")
    model = spec.compute.capacity.model
    if not isinstance(project, GcpProject) or family is None or model not in POOL:
        return []
    gpus = spec.compute.node_count * info.accelerator_count
    region = spec.compute.region
    pool = POOL[model]
    metric = family.on_demand if pool == "on_demand" else family.preemptible
    purchase = "on_demand" if pool == "on_demand" else "spot"
    every = gcp_book().quota_metric("any", GLOBAL).metric
    rows = [
        (region, metric, purchase, f"{info.accelerator} GPUs, {'preemptible' if purchase == 'spot' else 'on-demand'}"),
        (GLOBAL, every, "on_demand", "GPUs, all regions"),
    ]
    return [
        QuotaNeed(
            account=spec.account,
            account_id=project.id,
            region=scope,
            code=code,
            name=name,
            purchase=kind,  # type: ignore[arg-type]
            vcpus=gpus,
            granted=project.quotas.get(scope, {}).get(code),
        )
        for scope, code, kind, name in rows
    ]


__all__ = ["training_quota_needs"]
