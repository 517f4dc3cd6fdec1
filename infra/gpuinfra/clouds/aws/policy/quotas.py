"""What a stack's AWS resources hold of EC2's quotas at maximum size, read from the graph: the registry's
`quota_usage` part of AWS, which the shared `quota-within-grant` (policy/rules/quotas.py) asks for.

Every compute group (Auto Scaling group, EKS node group, PCS node group, Karpenter NodePool, Batch environment, EC2
and Spot Fleet: policy/rules/groups.py) at its maximum, split on-demand and spot as it splits them, plus every
instance; each counted against the EC2 quota code of its family and purchase (AWS's catalog: clouds/aws/catalog/).
The increases a stack requests are its `aws.servicequotas.ServiceQuota` resources for EC2 (emitted when the
account sets `request_quota_increases`): AWS approves them later, so the rule reports them apart.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from gpuinfra.catalog import Catalog
from gpuinfra.clouds.aws.catalog import quota_book
from gpuinfra.graph import tokens
from gpuinfra.plan.quotas import InstanceDemand
from gpuinfra.policy.rules.groups import Group, groups
from gpuinfra.policy.rules.quotas import QuotaUsage, Users
from gpuinfra.policy.rules.values import StackView, as_int, get

SERVICE_CODE = "ec2"
"""The Service Quotas service code of EC2's instance quotas (the only codes the organization file grants)."""


def _group_demands(group: Group, region: str, catalog: Catalog) -> Iterator[InstanceDemand]:
    """A group at maximum size, on-demand and spot apart; per quota code, counted at the widest type the
    group may launch (any of its types could fill it). Capacity blocks count against no quota."""
    book = quota_book()
    types = [t for t in group.instance_types if catalog.instance(t) is not None]
    for purchase, count in (("on_demand", group.on_demand), ("spot", group.spot)):
        widest: dict[str | None, str] = {}
        for name in types:
            info = catalog.instance(name)
            assert info is not None
            code = book.code(info.family, purchase)  # type: ignore[arg-type]
            key = code.code if code else None
            if key not in widest or info.vcpu > catalog.instance(widest[key]).vcpu:  # type: ignore[union-attr]
                widest[key] = name
        for name in widest.values():
            yield InstanceDemand(region, name, purchase, count)  # type: ignore[arg-type]


def _usages(stack: StackView, catalog: Catalog) -> tuple[dict[str, list[InstanceDemand]], Users]:
    """What the stack runs at maximum size, per account id; and who uses each (account, region, code)."""
    book = quota_book()
    demands: dict[str, list[InstanceDemand]] = defaultdict(list)
    users: Users = defaultdict(set)
    by_urn = {g.urn: g for g in groups(stack)}
    for resource in [*(g.resource for g in by_urn.values()), *stack.of_type(tokens.INSTANCE)]:
        account_id, region = stack.account_of(resource), stack.region_of(resource)
        if account_id is None or region is None:
            continue
        if resource.urn in by_urn:
            found = list(_group_demands(by_urn[resource.urn], region, catalog))
        else:
            spot = get(resource.props, "instanceMarketOptions", "marketType") == "spot"
            found = [
                InstanceDemand(region, str(get(resource.props, "instanceType")), "spot" if spot else "on_demand", 1)
            ]
        for demand in found:
            info = catalog.instance(demand.instance_type)
            if info is None or demand.count <= 0:
                continue
            code = book.code(info.family, demand.purchase)
            demands[account_id].append(demand)
            users[(account_id, region, code.code if code else None)].add((resource.name, resource.urn))
    return demands, users


def _requests(stack: StackView) -> dict[tuple[str, str, str], int]:
    """Quota increases the stack asks for: (account, region, code) -> requested vCPUs."""
    out: dict[tuple[str, str, str], int] = {}
    for request in stack.of_type(tokens.SERVICE_QUOTA):
        account_id, region = stack.account_of(request), stack.region_of(request)
        if get(request.props, "serviceCode") != SERVICE_CODE or account_id is None or region is None:
            continue
        key = (account_id, region, str(get(request.props, "quotaCode")))
        out[key] = max(out.get(key, 0), as_int(get(request.props, "value")))
    return out


def quota_usage(stack: StackView, catalog: Catalog) -> QuotaUsage:
    """The stack's EC2 quota holdings and increase requests, as the shared rule judges them."""
    demands, users = _usages(stack, catalog)
    return QuotaUsage(demands=dict(demands), users=users, requests=_requests(stack))


__all__ = ["SERVICE_CODE", "quota_usage"]
