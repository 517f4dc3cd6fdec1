"""On-premises training: systems that belong in racks, named nodes, and the site's GPU allotment."""

from __future__ import annotations

from collections.abc import Iterator

from infra.catalog import Catalog
from infra.plan import TrainingPlan
from infra.plan.quotas import site_gpus_over
from infra.spec import TrainingSpec
from infra.validators.base import Failure, Level, rule


@rule(Level.ERROR)
def instance_not_for_provider(spec: TrainingSpec, catalog: Catalog) -> Iterator[Failure]:
    """EC2 types run on aws; on-premises systems (e.g. dgx-h100.system) run in one's own racks."""
    info = catalog.instance(spec.compute.instance_type)
    if info is None:
        return
    if spec.provider == "aws" and info.onprem:
        yield Failure(
            f"{info.name} is an on-premises system, not an EC2 instance type",
            ("compute", "instance_type"),
            "use an EC2 type such as p5.48xlarge, or provider onprem",
        )
    if spec.provider == "onprem" and not info.onprem:
        systems = sorted(i.name for i in catalog.instance_types if i.onprem)
        yield Failure(
            f"{info.name} is an EC2 instance type; on premises name the racked system",
            ("compute", "instance_type"),
            f"use one of {', '.join(systems)}",
        )


@rule(Level.ERROR)
def node_names_mismatch(spec: TrainingSpec) -> Iterator[Failure]:
    """Every node of the cluster needs a name to get its rack labels, and no name twice."""
    if spec.onprem is None:
        return
    names = spec.onprem.names(spec.compute.node_count)
    if len(names) != spec.compute.node_count:
        yield Failure(
            f"{len(names)} node names for node_count {spec.compute.node_count}",
            ("onprem", "node_names"),
            "list exactly one name per node, in rack order",
        )
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        yield Failure(f"node names repeat: {', '.join(duplicates)}", ("onprem",), "give every node its own name")


@rule(Level.ERROR)
def site_gpus_exceed_allotment(spec: TrainingSpec, plan: TrainingPlan) -> Iterator[Failure]:
    """The cluster's GPUs exceed what the organization grants the site: blocking, with the verdict the policy
    quota-site-gpus shares (plan.quotas.site_gpus_over)."""
    if site_gpus_over(plan.gpus, plan.site_gpu_allotment) and plan.site_gpu_allotment is not None:
        yield Failure(
            f"site {spec.site} grants {plan.site_gpu_allotment} GPUs; the cluster queue would hold {plan.gpus}",
            ("compute", "node_count"),
            f"raise onprem_sites.{spec.site}.gpu_allotment or use at most "
            f"{plan.site_gpu_allotment // max(plan.gpus_per_node, 1)} nodes",
        )


__all__ = ["instance_not_for_provider", "node_names_mismatch", "site_gpus_exceed_allotment"]
