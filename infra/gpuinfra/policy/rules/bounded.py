"""Compute that launches instances is bounded: quotas and budgets count each launcher at its maximum, so a launcher
without one (a Karpenter NodePool without limits, or without the instance types its limits count) is refused.

Auto Scaling groups, EKS and PCS node groups state their maximum size (a required field); a NodePool's maximum is
what its `spec.limits` allow of the types its requirements name (graph/launchers.py). A SageMaker endpoint
configuration's is each variant's most instances (graph/sagemaker.py); its ML instances draw on SageMaker's own
quotas, per instance type and use ("ml.g5.12xlarge for endpoint usage", Service Quotas), which the organization
file does not state, so no grant can be checked: it is refused as a quota the pack cannot judge.
"""

from __future__ import annotations

from pulumi_policy import ResourceValidationArgs

from gpuinfra.graph import tokens
from gpuinfra.graph.fleets import FLEET_TYPES, fleet
from gpuinfra.graph.launchers import bound_problem, node_pool, size_of
from gpuinfra.graph.sagemaker import ENDPOINT_CONFIGURATION, variants
from gpuinfra.policy.rules.declare import MANDATORY, ReportViolation, resource_policy


@resource_policy(
    "quota-launches-bounded",
    "Every resource that launches instances has a maximum quotas and budgets can count: a Karpenter NodePool names "
    "its instance types and limits that bound how many of each it launches; an EC2 Fleet or Spot Fleet request its "
    "target capacity and instance types; a SageMaker endpoint configuration is refused, its quotas (SageMaker's own, "
    "per ML instance type) being ones the organization file cannot grant.",
    MANDATORY,
    types=(tokens.KARPENTER_NODE_POOL, *FLEET_TYPES, ENDPOINT_CONFIGURATION),
)
def launches_bounded(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type == ENDPOINT_CONFIGURATION:
        for variant_problem in sagemaker_problems(args):
            report_violation(f"{args.name}: {variant_problem}")
        return
    if args.resource_type in FLEET_TYPES:
        problem = fleet_problem(args)
    else:
        problem = bound_problem(node_pool(args.props), size_of)
    if problem is not None:
        report_violation(
            f"{args.name} launches instances without a maximum: {problem}; no quota or budget can count what it "
            "may launch"
        )


def fleet_problem(args: ResourceValidationArgs) -> str | None:
    """A fleet states a target capacity, and instance types in its overrides or launch specifications or through
    its launch template (which a resource policy cannot see: quota-within-grant, a stack policy, reads it)."""
    bounds = fleet(args.resource_type, args.props, [], size_of)
    if bounds.most is not None:
        return None
    spec = args.props.get("targetCapacitySpecification") or {}
    capacity = spec.get("totalTargetCapacity") if args.resource_type == tokens.EC2_FLEET else None
    capacity = capacity if capacity is not None else args.props.get("targetCapacity")
    if not isinstance(capacity, int | float) or isinstance(capacity, bool):
        return "its target capacity cannot be read, so nothing counts what it launches"
    if bounds.instance_types:
        return f"the catalog does not know {', '.join(bounds.instance_types)}, so nothing counts their vCPUs"
    configs = args.props.get("launchTemplateConfigs") or args.props.get("launchTemplateConfig")
    return None if configs else "it names no instance type, so nothing counts what it launches"


def sagemaker_problems(args: ResourceValidationArgs) -> list[str]:
    """Each variant: unbounded (no count the pack can read), else counted but its SageMaker quota unjudgeable."""
    out = []
    for v in variants(args.props):
        what = f"variant {v.name or '(unnamed)'}"
        if v.most is None or v.instance_type is None:
            out.append(
                f"{what} launches instances without a count the pack can read (instanceType, "
                "initialInstanceCount, managedInstanceScaling.maxInstanceCount)"
            )
            continue
        out.append(
            f"{what} runs up to {v.most} x {v.instance_type} (before autoscaling targets), on SageMaker's own quota "
            f"for {v.instance_type} endpoint usage, which the organization file does not state: cannot judge; run "
            "the model on the fleet's EC2 or Kubernetes groups, whose quotas the pack counts"
        )
    return out


__all__ = ["fleet_problem", "launches_bounded", "sagemaker_problems"]
