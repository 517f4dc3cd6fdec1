"""Compute groups as policies see them: Auto Scaling groups, EKS managed node groups, AWS PCS compute node groups,
Karpenter NodePools (at the count their limits allow: graph/launchers.py), AWS Batch compute environments (at
the count their maxVcpus allows: graph/launchers.py), EC2 Fleets and Spot Fleet requests (at their target capacity:
graph/fleets.py) alike.

Quotas count them at maximum size, training wants them in one zone and a cluster placement group, and
spot needs checkpointing: each question is asked of a `Group`, whichever resource type launches it.
What a group launches and how it splits on-demand and spot are graph.views' answers, shared with cost and the report.
"""

from __future__ import annotations

from dataclasses import dataclass

from pulumi_policy import PolicyResource

from gpuinfra.graph import tokens, views
from gpuinfra.graph.fleets import FLEET_TYPES, fleet
from gpuinfra.graph.launchers import batch_bounds, node_pool, size_of
from gpuinfra.policy.rules.values import StackView, as_int, get, has

GROUP_TYPES = (
    tokens.ASG,
    tokens.EKS_NODE_GROUP,
    tokens.PCS_NODE_GROUP,
    tokens.KARPENTER_NODE_POOL,
    tokens.BATCH_COMPUTE_ENVIRONMENT,
    tokens.EC2_FLEET,
    tokens.SPOT_FLEET,
)


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


def groups(stack: StackView) -> list[Group]:
    """Every compute group of the stack (computed once per stack view)."""
    return stack.memo("groups", lambda: [_group(stack, r) for r in stack.of_type(*GROUP_TYPES)])


def _group(stack: StackView, resource: PolicyResource) -> Group:
    props = resource.props
    templates = stack.dependencies_of(resource, tokens.LAUNCH_TEMPLATE)
    placements = [pg for lt in templates for pg in stack.dependencies_of(lt, tokens.PLACEMENT_GROUP)]
    named = any(get(lt.props, "placement", "groupName") for lt in templates)
    market = stack.market_of(resource)
    types = stack.instance_types(resource)
    block = market == "capacity-block"
    if resource.resource_type == tokens.ASG:
        size = as_int(get(props, "maxSize"))
        on_demand, spot = views.split(props, size, market)
        placements += stack.dependencies_of(resource, tokens.PLACEMENT_GROUP)
        named = named or has(props, "placementGroup")
    elif resource.resource_type == tokens.KARPENTER_NODE_POOL:
        bounds = node_pool(props)
        types = list(bounds.instance_types)
        size = max((bounds.most(size_of(t)) or 0 for t in types), default=0)
        on_demand, spot = (size, 0) if bounds.on_demand else (0, size)
    elif resource.resource_type == tokens.BATCH_COMPUTE_ENVIRONMENT:
        batch_types, most, batch_market = batch_bounds(props)
        types, size = batch_types, most or 0
        on_demand, spot = (0, size) if batch_market == "spot" else (size, 0)
    elif resource.resource_type in FLEET_TYPES:
        held = fleet(resource.resource_type, props, [lt.props for lt in templates], size_of)
        types, size = list(held.instance_types), held.most or 0
        on_demand, spot = held.on_demand, size - held.on_demand
    elif resource.resource_type == tokens.PCS_NODE_GROUP:
        size = (views.node_group_size(props) or (0, 0))[1]
        on_demand, spot = views.split({}, size, market)
    else:
        size = as_int(get(props, "scalingConfig", "maxSize"))
        on_demand, spot = views.split({}, size, market)
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
        tuple(stack.dependencies_of(resource, tokens.SUBNET)),
    )


__all__ = ["GROUP_TYPES", "Group", "groups"]
