"""EC2 Auto Scaling and EKS node group rules: sizes in order, and where a warm pool cannot go."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from typing import Any

from gpuinfra.catalog import Catalog
from gpuinfra.clouds.aws.preflight.rules.base import Violation, judgeable_number, rule
from gpuinfra.graph import Graph, Resource, tokens
from gpuinfra.plan.rollout import rollback_blocker

ASG = tokens.ASG
SCHEDULE = tokens.ASG_SCHEDULE
LT = tokens.LAUNCH_TEMPLATE
WARM_POOLS = "https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-warm-pools.html"
ROLLBACK = "https://docs.aws.amazon.com/autoscaling/ec2/userguide/instance-refresh-rollback.html"


def _order(r: Resource, sizes: list[tuple[str, Any]]) -> Iterator[Violation]:
    """min <= desired <= max over the sizes that are set (and known), none negative."""
    known = [(path, v) for path, v in sizes if judgeable_number(v)]
    for path, v in known:
        if v < 0:
            yield Violation(r, path, v, f"{path} is negative")
    for (low_path, low), (high_path, high) in pairwise(known):
        if low > high:
            yield Violation(r, high_path, high, f"{low_path}={low} exceeds {high_path}={high}")


@rule(
    "PF-ASG-SIZE",
    "minimum <= desired <= maximum, in every group, node group and scheduled action",
    "Amazon EC2 Auto Scaling API Reference, CreateAutoScalingGroup (DesiredCapacity) and "
    "PutScheduledUpdateGroupAction; Amazon EKS API Reference, NodegroupScalingConfig",
)
def sizes(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    groups = {g.inputs.get("name"): g for g in graph.of_type(ASG)}
    for g in groups.values():
        i = g.inputs
        yield from _order(
            g,
            [
                ("minSize", i.get("minSize")),
                ("desiredCapacity", i.get("desiredCapacity")),
                ("maxSize", i.get("maxSize")),
            ],
        )
        warm = i.get("warmPool") or {}
        prepared = warm.get("maxGroupPreparedCapacity")
        if judgeable_number(prepared) and prepared != -1:
            yield from _order(
                g, [("warmPool.minSize", warm.get("minSize", 0)), ("warmPool.maxGroupPreparedCapacity", prepared)]
            )
    for s in graph.of_type(SCHEDULE):
        i = {k: v for k, v in s.inputs.items() if v != -1}
        group = groups.get(s.inputs.get("autoscalingGroupName"))
        base = group.inputs if group is not None else {}
        # A scheduled action changes only the sizes it sets; the others stay the group's.
        merged = [
            ("minSize", i.get("minSize", base.get("minSize"))),
            ("desiredCapacity", i.get("desiredCapacity")),
            ("maxSize", i.get("maxSize", base.get("maxSize"))),
        ]
        yield from _order(s, merged)
    for ng in graph.of_type(tokens.EKS_NODE_GROUP):
        c = ng.inputs.get("scalingConfig") or {}
        paths = ("scalingConfig.minSize", "scalingConfig.desiredSize", "scalingConfig.maxSize")
        yield from _order(ng, list(zip(paths, (c.get("minSize"), c.get("desiredSize"), c.get("maxSize")), strict=True)))


def launches_spot(graph: Graph, group: Resource) -> bool:
    """Spot through a mixed instances policy or a launch template's market options."""
    for lt in graph.dependencies_of(group, LT):
        market = (lt.inputs.get("instanceMarketOptions") or {}).get("marketType")
        if market == "spot":
            return True
    return False


@rule(
    "PF-ASG-WARMPOOL",
    "a warm pool cannot be added to a group that has a mixed instances policy or launches Spot Instances",
    f"Amazon EC2 Auto Scaling User Guide, warm pools: limitations ({WARM_POOLS})",
)
def warm_pools(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for g in graph.of_type(ASG):
        if not g.inputs.get("warmPool"):
            continue
        if g.inputs.get("mixedInstancesPolicy"):
            yield Violation(g, "warmPool", g.inputs["warmPool"], "warm pool on a group with a mixed instances policy")
        elif launches_spot(graph, g):
            yield Violation(g, "warmPool", g.inputs["warmPool"], "warm pool on a group that launches Spot Instances")


@rule(
    "PF-EKS-NODEGROUP",
    "with a launch template, a node group takes no diskSize or remoteAccess, and no amiType when the "
    "template names an AMI",
    "Amazon EKS API Reference, CreateNodegroup (launchTemplate, diskSize, remoteAccess, amiType)",
)
def node_groups(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for ng in graph.of_type(tokens.EKS_NODE_GROUP):
        if not ng.inputs.get("launchTemplate"):
            continue
        for key in ("diskSize", "remoteAccess"):
            if ng.inputs.get(key):
                yield Violation(ng, key, ng.inputs[key], f"{key} with a launch template")
        if ng.inputs.get("amiType") and any(lt.inputs.get("imageId") for lt in graph.dependencies_of(ng, LT)):
            yield Violation(ng, "amiType", ng.inputs["amiType"], "amiType with a launch template that names an AMI")


def _template_version(group: Resource) -> Any:
    spec = group.inputs.get("launchTemplate") or (
        ((group.inputs.get("mixedInstancesPolicy") or {}).get("launchTemplate") or {}).get(
            "launchTemplateSpecification"
        )
        or {}
    )
    return spec.get("version")


@rule(
    "PF-ASG-ROLLBACK",
    "an instance refresh cannot roll back a group whose launch template uses a Systems Manager parameter for "
    "its ImageId, or whose version is $Latest or $Default",
    f"Amazon EC2 Auto Scaling API Reference, RollbackInstanceRefresh and RefreshPreferences.AutoRollback; user "
    f"guide, undo changes with a rollback ({ROLLBACK})",
)
def rollback(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for g in graph.of_type(ASG):
        preferences = (g.inputs.get("instanceRefresh") or {}).get("preferences") or {}
        if preferences.get("autoRollback") is not True:
            continue
        version = _template_version(g)
        images = [lt.inputs.get("imageId") for lt in graph.dependencies_of(g, LT)]
        for image in [i for i in images if isinstance(i, str)] or [""]:
            why = rollback_blocker(image, version if isinstance(version, str) else None)
            if why:
                yield Violation(g, "instanceRefresh.preferences.autoRollback", True, f"auto rollback: {why}")


__all__ = ["launches_spot"]
