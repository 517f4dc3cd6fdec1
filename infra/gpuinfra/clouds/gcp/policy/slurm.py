"""Google's pack rule for the managed Slurm path: a Cluster Director cluster launches a bounded number of GPU nodes
(each nodeset's static count plus its most dynamic nodes), and its GPUs at that bound are the ones the plan counted
(as quota-gcp-node-pools-bounded holds GKE's node pools)."""

from __future__ import annotations

from typing import Any

from pulumi_policy import StackValidationArgs
from pulumi_policy.deserialize import serialize_properties

from gpuinfra.clouds.gcp.catalog.training import training_book
from gpuinfra.clouds.gcp.cost.slurm import CLUSTER, nodesets
from gpuinfra.clouds.gcp.spec import GcpProject
from gpuinfra.graph.values import plain
from gpuinfra.policy.facts import require
from gpuinfra.policy.rules.declare import MANDATORY, ReportViolation, stack_policy
from gpuinfra.policy.rules.values import view


def cluster_gpus(props: dict[str, Any]) -> tuple[int, list[str]]:
    """The GPUs the cluster's nodesets launch at most, and the nodesets whose machine type the catalog does not
    know (their GPUs cannot be counted: refused, never taken as none)."""
    book = training_book()
    counted, unknown = 0, []
    for machine, _, _, most in nodesets(props):
        found = book.machine(machine or "")
        if found is None:
            unknown.append(str(machine))
        else:
            counted += most * found.gpus
    return counted, unknown


@stack_policy(
    "quota-gcp-slurm-bounded",
    "Every Cluster Director cluster of a Google stack launches a bounded number of GPU nodes (its nodesets' static "
    "and dynamic maxima, of machine types the catalog knows), and its GPUs at those maxima are the ones the plan "
    "counted.",
    MANDATORY,
)
def gcp_slurm_bounded(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args)
    clusters = view(args).of_type(CLUSTER)
    if not isinstance(facts.account, GcpProject) or not clusters:
        args.not_applicable("applies to Google stacks with a Cluster Director cluster")
        return
    counted = 0
    for cluster in clusters:
        gpus, unknown = cluster_gpus(plain(serialize_properties(cluster.props)))
        for machine in unknown:
            what = f"{cluster.name} runs nodes of {machine}, whose GPUs the catalog does not know"
            report_violation(what, cluster.urn)
        counted += gpus
    planned = getattr(facts.plan, "gpus", None)
    if isinstance(planned, int) and counted > planned:
        report_violation(f"the Slurm nodesets launch up to {counted} GPUs, more than the {planned} the plan counted")


__all__ = ["cluster_gpus", "gcp_slurm_bounded"]
