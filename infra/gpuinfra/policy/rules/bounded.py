"""Compute that launches instances is bounded: quotas and budgets count each launcher at its maximum, so a launcher
without one (a Karpenter NodePool without limits, or without the instance types its limits count) is refused.

Auto Scaling groups, EKS and PCS node groups state their maximum size (a required field); a NodePool's maximum is
what its `spec.limits` allow of the types its requirements name (graph/launchers.py).
"""

from __future__ import annotations

from pulumi_policy import ResourceValidationArgs

from gpuinfra.cost.node_pools import size_of
from gpuinfra.graph import tokens
from gpuinfra.graph.launchers import bound_problem, node_pool
from gpuinfra.policy.rules.declare import MANDATORY, ReportViolation, resource_policy


@resource_policy(
    "quota-launches-bounded",
    "Every resource that launches instances has a maximum quotas and budgets can count: a Karpenter NodePool names "
    "its instance types and limits that bound how many of each it launches.",
    MANDATORY,
    types=(tokens.KARPENTER_NODE_POOL,),
)
def launches_bounded(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    problem = bound_problem(node_pool(args.props), size_of)
    if problem is not None:
        report_violation(
            f"{args.name} launches instances without a maximum: {problem}; no quota or budget can count what it "
            "may launch"
        )


__all__ = ["launches_bounded"]
