"""Compute groups as policies see them: Auto Scaling groups and EKS managed node groups alike.

Quotas count them at maximum size, training wants them in one zone and a cluster placement group, and
spot needs checkpointing: each question is asked of a `Group`, whichever resource type launches it.
The on-demand/spot split is the planner's `split_capacity`, the one function an ASG's split follows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_policy import PolicyResource

from infra.plan.capacity import split_capacity

from .values import ASG, LAUNCH_TEMPLATE, StackView, as_int, get, has

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
PLACEMENT_GROUP = "aws:ec2/placementGroup:PlacementGroup"
SUBNET = "aws:ec2/subnet:Subnet"
GROUP_TYPES = (ASG, NODE_GROUP)


@dataclass(frozen=True)
class Group:
    resource: PolicyResource
    instance_types: tuple[str, ...]
    max_size: int
    on_demand: int
    """On-demand instances at maximum size."""
    spot: int
    capacity_block: bool
    """Bought up front as an EC2 Capacity Block: no On-Demand or Spot quota, no reclaims."""
    declares_placement: bool
    """The group (or its launch template) names a placement group."""
    placement_groups: tuple[PolicyResource, ...]
    subnets: tuple[PolicyResource, ...]

    @property
    def name(self) -> str:
        return self.resource.name

    @property
    def urn(self) -> str:
        return self.resource.urn


def split(props: Mapping[str, Any], size: int, market: str | None) -> tuple[int, int]:
    """(on-demand, spot) of an Auto Scaling group running `size` instances."""
    distribution = get(props, "mixedInstancesPolicy", "instancesDistribution")
    if distribution is not None:
        return split_capacity(
            size,
            as_int(get(distribution, "onDemandBaseCapacity")),
            as_int(get(distribution, "onDemandPercentageAboveBaseCapacity"), 100),
        )
    return (0, size) if market == "spot" else (size, 0)


def groups(stack: StackView) -> list[Group]:
    """Every compute group of the stack (computed once per stack view)."""
    return stack.memo("groups", lambda: [_group(stack, r) for r in stack.of_type(*GROUP_TYPES)])


def _group(stack: StackView, resource: PolicyResource) -> Group:
    props = resource.props
    templates = stack.dependencies_of(resource, LAUNCH_TEMPLATE)
    placements = [pg for lt in templates for pg in stack.dependencies_of(lt, PLACEMENT_GROUP)]
    named = any(get(lt.props, "placement", "groupName") for lt in templates)
    if resource.resource_type == ASG:
        market = stack.market_of(resource)
        size = as_int(get(props, "maxSize"))
        on_demand, spot = split(props, size, market)
        types = stack.instance_types(resource)
        placements += stack.dependencies_of(resource, PLACEMENT_GROUP)
        named = named or has(props, "placementGroup")
        block = market == "capacity-block"
    else:
        capacity = str(get(props, "capacityType", default="ON_DEMAND"))
        size = as_int(get(props, "scalingConfig", "maxSize"))
        on_demand, spot = (0, size) if capacity == "SPOT" else (size, 0)
        types = [str(t) for t in get(props, "instanceTypes", default=[])] or [
            str(get(lt.props, "instanceType")) for lt in templates if get(lt.props, "instanceType")
        ]
        block = capacity == "CAPACITY_BLOCK"
    if block:
        on_demand = spot = 0
    return Group(
        resource,
        tuple(types),
        size,
        on_demand,
        spot,
        block,
        named,
        tuple(placements),
        tuple(stack.dependencies_of(resource, SUBNET)),
    )


__all__ = ["GROUP_TYPES", "NODE_GROUP", "PLACEMENT_GROUP", "SUBNET", "Group", "groups", "split"]
