"""On-premises training: systems that belong in racks, named nodes, and the site's GPU allotment."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.catalog import Catalog
from gpuinfra.plan import TrainingPlan
from gpuinfra.plan.quotas import site_gpus_over
from gpuinfra.plan.site import site_problems
from gpuinfra.spec import Organization, TrainingSpec
from gpuinfra.validators.base import Failure, Level, rule


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
            "write an EC2 type, e.g. `instance_type: p5.48xlarge` under compute, or `provider: onprem`",
        )
    if spec.provider == "onprem" and not info.onprem:
        systems = sorted(i.name for i in catalog.instance_types if i.onprem)
        yield Failure(
            f"{info.name} is an EC2 instance type; on premises name the racked system",
            ("compute", "instance_type"),
            f"write `instance_type: {systems[0]}` under compute (the racked systems: {', '.join(systems)})"
            if systems
            else "write `provider: aws`: the catalog holds no on-premises system",
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
            f"list {spec.compute.node_count} names under `onprem.node_names`, one per node in rack order, or write "
            "`node_name_pattern: node-{index:02d}` under onprem",
        )
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        yield Failure(
            f"node names repeat: {', '.join(duplicates)}",
            ("onprem",),
            f"give every node its own name in `onprem.node_names` (remove the second {duplicates[0]})",
        )


@rule(Level.ERROR)
def onprem_inventory_missing(spec: TrainingSpec) -> Iterator[Failure]:
    """Kueue places jobs by the rack labels: they must say where each system is, not follow name order."""
    if spec.onprem is not None and not spec.onprem.inventory:
        yield Failure(
            "node rack, cooling-loop and power-domain labels would be guessed from the node names' order",
            ("onprem",),
            "write `inventory: [{node: <name>, rack: <rack>, cooling_loop: <loop>, power_domain: <domain>}]` "
            "under onprem, one entry a node from the site's inventory (DCIM), in place of node_names / "
            "node_name_pattern",
        )


@rule(Level.ERROR)
def inventory_rack_over_budget(spec: TrainingSpec, catalog: Catalog) -> Iterator[Failure]:
    """The inventory's racks hold no more systems than the rack power budget allows (the plan assumed it)."""
    power = catalog.node_power(spec.compute.instance_type)
    if spec.onprem is None or spec.racks is None or power is None:
        return
    per_rack: dict[str, list[str]] = {}
    for location in spec.onprem.inventory:
        per_rack.setdefault(location.rack, []).append(location.node)
    for rack, nodes in sorted(per_rack.items()):
        kw = len(nodes) * power.max_kw
        if kw > spec.racks.power_budget_kw + 1e-9:
            yield Failure(
                f"rack {rack} holds {len(nodes)} systems ({kw:g} kW at {power.max_kw:g} kW each) over its "
                f"{spec.racks.power_budget_kw:g} kW budget",
                ("onprem", "inventory"),
                f"check `onprem.inventory` for rack {rack}, or write `power_budget_kw: {kw:g}` under racks if the "
                "rack's feeds allow it",
            )


@rule(Level.ERROR)
def spot_job_not_declared(spec: TrainingSpec, plan: TrainingPlan) -> Iterator[Failure]:
    """A Kubernetes job spans every node of its fabric domain; with spot nodes among them it must say it may run
    on spot (it then gets the spot flavor and queue)."""
    if spec.job is not None and plan.spot_nodes and not spec.job.spot:
        yield Failure(
            f"the job spans all {plan.nodes} nodes, {plan.spot_nodes} of them spot, "
            "but does not say it may run on spot",
            ("job", "spot"),
            "write `spot: true` under job (the job checkpoints and resumes), or buy every node on demand",
        )


@rule(Level.ERROR)
def site_gpus_exceed_allotment(spec: TrainingSpec, plan: TrainingPlan) -> Iterator[Failure]:
    """The cluster's GPUs exceed what the organization grants the site: blocking, with the verdict the policy
    quota-site-gpus shares (plan.quotas.site_gpus_over)."""
    if site_gpus_over(plan.gpus, plan.site_gpu_allotment) and plan.site_gpu_allotment is not None:
        yield Failure(
            f"site {spec.site} grants {plan.site_gpu_allotment} GPUs; the cluster queue would hold {plan.gpus}",
            ("compute", "node_count"),
            f"write `node_count: {plan.site_gpu_allotment // max(plan.gpus_per_node, 1)}` under compute, or raise "
            f"onprem_sites.{spec.site}.gpu_allotment in the organization file",
        )


@rule(Level.ERROR)
def site_components_missing(spec: TrainingSpec, org: Organization) -> Iterator[Failure]:
    """Kueue, JobSet and the RDMA device plugin are the site's (one of each in a shared cluster): the stack creates
    only its queues, node labels and job template, so the site must declare them at versions those objects need
    (fail closed: nothing declared is nothing there)."""
    for problem in site_problems(spec, org):
        yield Failure(f"onprem_sites.{spec.site}.{problem.field}: {problem.message}", ("site",), problem.fix)


@rule(Level.WARNING)
def site_allocatable_unknown(spec: TrainingSpec, org: Organization, catalog: Catalog) -> Iterator[Failure]:
    """Training pods fill a node: sized from the EKS AMI's kubelet reservations unless the site gives its GPU nodes'
    allocatable, and refused if that exceeds the system's capacity (the catalog's)."""
    site = org.onprem_sites.get(spec.site or "")
    if spec.provider != "onprem" or site is None or spec.job is None:
        return
    info = catalog.instance(spec.compute.instance_type)
    declared = site.node_allocatable
    if declared is None:
        yield Failure(
            f"training pods are sized by the EKS AMI's kubelet reservations, not site {spec.site}'s: a kubelet that "
            "reserves more (system-reserved, GPU or network operator daemons) leaves every pod unschedulable",
            ("site",),
            f"write `node_allocatable: {{cpu_millicores: <cpu x 1000>, memory_mib: <memory Ki / 1024>}}` under "
            f"onprem_sites.{spec.site} in the organization file, from the smallest GPU node's "
            "`kubectl get node <name> -o jsonpath='{.status.allocatable}'`",
        )
    elif info is not None and (
        declared.cpu_millicores > info.vcpu * 1000 or declared.memory_mib > info.memory_gib * 1024
    ):
        yield Failure(
            f"onprem_sites.{spec.site}.node_allocatable ({declared.cpu_millicores}m CPU, {declared.memory_mib} MiB) "
            f"exceeds a {info.name}'s capacity ({info.vcpu} vCPUs, {info.memory_gib} GiB)",
            ("site",),
            f"write `node_allocatable: {{cpu_millicores: <cpu x 1000>, memory_mib: <memory Ki / 1024>}}` under "
            f"onprem_sites.{spec.site} in the organization file, from the smallest GPU node's "
            "`kubectl get node <name> -o jsonpath='{.status.allocatable}'`",
        )


__all__ = [
    "instance_not_for_provider",
    "inventory_rack_over_budget",
    "node_names_mismatch",
    "onprem_inventory_missing",
    "site_allocatable_unknown",
    "site_components_missing",
    "site_gpus_exceed_allotment",
    "spot_job_not_declared",
]
