"""Google's pack rules for a training cluster: what its GKE node pools can launch is bounded, and is what the
plan counted against the project's quota (as quota-gcp-groups-bounded holds a fleet's instance groups)."""

from __future__ import annotations

from typing import Any

from pulumi_policy import StackValidationArgs
from pulumi_policy.deserialize import serialize_properties

from gpuinfra.clouds.gcp.spec import GcpProject
from gpuinfra.graph.values import plain
from gpuinfra.policy.facts import require
from gpuinfra.policy.rules.declare import MANDATORY, ReportViolation, stack_policy
from gpuinfra.policy.rules.values import view

NODE_POOL = "gcp:container/nodePool:NodePool"


def pool_ceiling(pool: dict[str, Any]) -> int | None:
    """The most nodes a pool launches: its autoscaler's total (or per-zone) maximum, else its fixed count;
    None when it names neither (unbounded, or unknown until apply)."""
    scaling = pool.get("autoscaling") or {}
    for key in ("totalMaxNodeCount", "maxNodeCount"):
        if isinstance(scaling.get(key), int):
            return int(scaling[key])
    count = pool.get("nodeCount")
    return int(count) if isinstance(count, int) and not scaling else None


def pool_gpus(pool: dict[str, Any]) -> int:
    """GPUs one node of the pool carries (its guest accelerators)."""
    accelerators = (pool.get("nodeConfig") or {}).get("guestAccelerators") or []
    return sum(int(a.get("count") or 0) for a in accelerators if isinstance(a, dict))


@stack_policy(
    "quota-gcp-node-pools-bounded",
    "Every GKE node pool of a Google stack launches a bounded number of nodes (a fixed count or an autoscaler's "
    "maximum), and its GPUs at those maxima are the ones the plan counted.",
    MANDATORY,
)
def gcp_node_pools_bounded(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args)
    stack = view(args)
    pools = stack.of_type(NODE_POOL)
    if not isinstance(facts.account, GcpProject) or not pools:
        args.not_applicable("applies to Google stacks with GKE node pools")
        return
    counted = 0
    for pool in pools:
        props = plain(serialize_properties(pool.props))  # the pack's lazy proxies, as plain dicts and lists
        ceiling = pool_ceiling(props)
        if ceiling is None:
            report_violation(f"{pool.name} names neither a node count nor an autoscaler maximum: unbounded", pool.urn)
            continue
        counted += ceiling * pool_gpus(props)
    planned = getattr(facts.plan, "gpus", None)
    if isinstance(planned, int) and counted > planned:
        report_violation(f"the node pools launch up to {counted} GPUs, more than the {planned} the plan counted")


__all__ = ["gcp_node_pools_bounded", "pool_ceiling", "pool_gpus"]
