"""Compute that launches instances is bounded: quotas and budgets count each launcher at its maximum, so a launcher
without one (a Karpenter NodePool without limits, or without the instance types its limits count) is refused.

Auto Scaling groups, EKS and PCS node groups state their maximum size (a required field); a NodePool's maximum is
what its `spec.limits` allow of the types its requirements name (graph/launchers.py). A SageMaker endpoint
configuration's is each variant's most instances (graph/sagemaker.py); its ML instances draw on SageMaker's own
quotas, per instance type and use ("ml.g5.12xlarge for endpoint usage", Service Quotas), which the organization
file does not state, so no grant can be checked: it is refused as a quota the pack cannot judge. So are every
other SageMaker type that launches ML instances (a training or tuning job, a HyperPod cluster, a notebook, a
processing or monitoring job: SAGEMAKER_LAUNCHERS, held against the provider schemas by
tests/policies/test_launchers.py), and an EKS cluster in Auto Mode (`computeConfig.enabled`: EKS launches nodes for
any pending pod through its built-in node pools, bounded by no maximum the cluster states; EKS User Guide, "Automate
cluster infrastructure with EKS Auto Mode").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pulumi_policy import ResourceValidationArgs

from gpuinfra.graph import tokens
from gpuinfra.graph.fleets import FLEET_TYPES, fleet
from gpuinfra.graph.launchers import bound_problem, node_pool, size_of
from gpuinfra.graph.sagemaker import (
    ENDPOINT_CONFIGURATION,
    SAGEMAKER_LAUNCHERS,
    TRAINING_JOB,
    Variant,
    training_groups,
    variants,
)
from gpuinfra.graph.views import mappings
from gpuinfra.policy.rules.declare import MANDATORY, ReportViolation, resource_policy


@resource_policy(
    "quota-launches-bounded",
    "Every resource that launches instances has a maximum quotas and budgets can count: a Karpenter NodePool names "
    "its instance types and limits that bound how many of each it launches; an EC2 Fleet or Spot Fleet request its "
    "target capacity and instance types; a SageMaker endpoint configuration is refused, its quotas (SageMaker's own, "
    "per ML instance type) being ones the organization file cannot grant.",
    MANDATORY,
    types=(tokens.KARPENTER_NODE_POOL, *FLEET_TYPES, *SAGEMAKER_LAUNCHERS, tokens.EKS_CLUSTER),
)
def launches_bounded(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type in SAGEMAKER_LAUNCHERS:
        for variant_problem in sagemaker_problems(args):
            report_violation(f"{args.name}: {variant_problem}")
        return
    if args.resource_type == tokens.EKS_CLUSTER:
        compute = args.props.get("computeConfig") or {}
        if compute.get("enabled") is True:
            report_violation(
                f"{args.name} runs in EKS Auto Mode (computeConfig.enabled): EKS launches nodes for any pending pod "
                f"through its node pools ({', '.join(compute.get('nodePools') or ()) or 'none named'}), bounded by no "
                "maximum the cluster states, so no quota or budget can count them; give the cluster node groups "
                "(or Karpenter NodePools with limits) instead"
            )
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
    """Each variant or instance group: unbounded (no count the pack can read), else counted but its SageMaker quota
    unjudgeable; any other SageMaker launcher: its quota unjudgeable."""
    if args.resource_type not in (ENDPOINT_CONFIGURATION, TRAINING_JOB):
        return [
            f"launches ML instances ({args.resource_type}) on SageMaker's own quotas, per ML instance type and use, "
            "which the organization file does not state: cannot judge; run the work on the stack's EC2, Batch or "
            "Kubernetes compute, whose quotas the pack counts"
        ]
    if args.resource_type == TRAINING_JOB:
        groups = training_groups(args.props)
        return _ml_problems(groups, lambda g: f"instance group {g.name}" if g.name else "the training job", TRAINING)
    out = _ml_problems(variants(args.props), lambda v: f"variant {v.name or '(unnamed)'}", ENDPOINT)
    if not mappings(args.props.get("productionVariants")):
        out.append("its production variants cannot be read (productionVariants), so nothing counts what it launches")
    return out


@dataclass(frozen=True)
class MlUse:
    """How a SageMaker launcher states its count, and the quota its instances draw on."""

    fields: str
    runs: str
    usage: str
    advice: str


ENDPOINT = MlUse(
    "instanceType, initialInstanceCount, managedInstanceScaling.maxInstanceCount",
    "runs up to {most} x {kind} (before autoscaling targets)",
    "endpoint usage",
    "run the model on the fleet's EC2 or Kubernetes groups, whose quotas the pack counts",
)
TRAINING = MlUse(
    "resourceConfig.instanceType, instanceCount, instanceGroups",
    "runs {most} x {kind}",
    "training job usage",
    "train on the stack's PCS, EKS or Batch compute, whose quotas the pack counts",
)


def _ml_problems(groups: list[Variant], name: Callable[[Variant], str], use: MlUse) -> list[str]:
    """Each group: unbounded (no count the pack can read), else counted but its SageMaker quota unjudgeable."""
    out = []
    for g in groups:
        if g.most is None or g.instance_type is None:
            out.append(f"{name(g)} launches instances without a count the pack can read ({use.fields})")
            continue
        out.append(
            f"{name(g)} {use.runs.format(most=g.most, kind=g.instance_type)}, on SageMaker's own quota for "
            f"{g.instance_type} {use.usage}, which the organization file does not state: cannot judge; {use.advice}"
        )
    return out


__all__ = ["SAGEMAKER_LAUNCHERS", "fleet_problem", "launches_bounded", "sagemaker_problems"]
