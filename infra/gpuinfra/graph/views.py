"""Questions several stages ask of the same resources, answered once: what an Auto Scaling group, EKS node group
or AWS PCS compute node group launches and how it splits on-demand and spot, where a provider deploys, how many
EFA interfaces a launch template attaches, whether an IAM statement allows everything.

Policies, cost and the report each call these, so they cannot describe one group three ways. Every function
takes plain Mappings of a resource's inputs: the graph's dicts (`Resource.inputs`) or the policy SDK's
unknown-checking proxies (`PolicyResource.props`), where reading a value unknown during preview raises
`UnknownValueError` (the policy then "can't run during preview", as under the CLI). Numbers may arrive as
floats (the CLI's protobuf) or ints (the engine); provider settings may arrive JSON-encoded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from gpuinfra.graph.model import SECRET, is_known
from gpuinfra.plan.capacity import split_capacity

MARKETS = ("spot", "capacity-block")
"""The launch template market types that change what a group costs and which quota it draws on."""
EFA_TYPES = ("efa", "efa-only")
"""Network interface types that attach an EFA device (EC2 API: NetworkInterface.InterfaceType)."""
_ACCOUNT_IN_ARN = re.compile(r"^arn:aws[\w-]*:iam::(\d{12}):")


def as_int(value: Any, default: int = 0) -> int:
    """An integer setting, from an int or the float the CLI hands over; `default` when absent or unknown."""
    if value is None or isinstance(value, bool):
        return default
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return default


def text(value: Any) -> str | None:
    """A string setting that is set and known (not the unknown sentinel, not a blinded secret)."""
    return value if isinstance(value, str) and value and is_known(value) and value != SECRET else None


def decoded(value: Any) -> Any:
    """Provider settings and policy documents are JSON-encoded strings in the engine's graph and objects in a
    state file; accept both (a string that is not JSON stays as it is)."""
    if isinstance(value, str) and value[:1] in "[{":
        return _parsed(value)
    return value


@lru_cache(maxsize=256)
def _parsed(value: str) -> Any:
    """Parsed once per distinct string: every resource of a provider asks for the same settings. Callers must
    not mutate the result."""
    try:
        return json.loads(value)
    except (ValueError, RecursionError):  # not JSON, or nested past the decoder's recursion: it stays a string
        return value


def mappings(value: Any) -> list[Mapping[str, Any]]:
    """The mappings of a list setting (a list proxy under the policy SDK); nothing for anything else."""
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [item for item in value if isinstance(item, Mapping)]
    return []


# ---- Auto Scaling groups and their launch templates ------------------------------------------------
def instance_types(group: Mapping[str, Any], templates: Iterable[Mapping[str, Any]] = ()) -> list[str]:
    """What a compute group launches, in priority order: an Auto Scaling group's mixed instances policy
    overrides, or an EKS node group's `instanceTypes`; else its launch templates' instance type."""
    policy = group.get("mixedInstancesPolicy") or {}
    launch = policy.get("launchTemplate") if isinstance(policy, Mapping) else None
    overrides = mappings(launch.get("overrides") if isinstance(launch, Mapping) else None)
    found = [t for t in (text(o.get("instanceType")) for o in overrides) if t]
    listed_types = group.get("instanceTypes")
    if not found and isinstance(listed_types, Sequence) and not isinstance(listed_types, str):
        found = [t for t in (text(v) for v in listed_types) if t]
    if not found:  # an AWS PCS compute node group
        found = [t for t in (text(c.get("instanceType")) for c in mappings(decoded(group.get("instanceConfigs")))) if t]
    return found or [t for t in (text(lt.get("instanceType")) for lt in templates) if t]


NODE_GROUP_MARKETS = {"SPOT": "spot", "CAPACITY_BLOCK": "capacity-block"}
"""EKS node group capacityType values (EKS API: CapacityTypes) and AWS PCS purchaseOption values
(AWS::PCS::ComputeNodeGroup PurchaseOption) as launch template market types."""


def market(templates: Iterable[Mapping[str, Any]], group: Mapping[str, Any] | None = None) -> str | None:
    """'spot' or 'capacity-block' when an EKS node group's capacityType or a launch template's market options
    ask for it, else None (on-demand)."""
    if group is not None:
        for key in ("capacityType", "purchaseOption"):
            if group.get(key) in NODE_GROUP_MARKETS:
                return NODE_GROUP_MARKETS[str(group.get(key))]
    for lt in templates:
        options = lt.get("instanceMarketOptions")
        kind = options.get("marketType") if isinstance(options, Mapping) else None
        if kind in MARKETS:
            return str(kind)
    return None


def distribution(group: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The mixed instances policy's instances distribution, if the group has one."""
    policy = group.get("mixedInstancesPolicy")
    found = policy.get("instancesDistribution") if isinstance(policy, Mapping) else None
    return found if isinstance(found, Mapping) else None


def capacity_terms(group: Mapping[str, Any], kind: str | None) -> tuple[int, int]:
    """(on-demand base capacity, on-demand percentage above base) of a group: its instances distribution,
    else all spot when its launch template asks for spot, else all on-demand (EC2 Auto Scaling defaults:
    OnDemandBaseCapacity 0, OnDemandPercentageAboveBaseCapacity 100)."""
    terms = distribution(group)
    if terms is not None:
        return as_int(terms.get("onDemandBaseCapacity")), as_int(terms.get("onDemandPercentageAboveBaseCapacity"), 100)
    return (0, 0) if kind == "spot" else (0, 100)


def split(group: Mapping[str, Any], size: int, kind: str | None) -> tuple[int, int]:
    """(on-demand, spot) of `size` instances of a group, by the planner's `split_capacity` (the rounding EC2
    Auto Scaling applies), so the plan, the quota policy and the cost agree on the mix."""
    base, percent = capacity_terms(group, kind)
    return split_capacity(size, base, percent)


LB_ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-"
"""Prefix of the AWS Load Balancer Controller's Service annotations."""


def internet_facing_service(props: Mapping[str, Any]) -> bool:
    """A Service of type LoadBalancer the AWS load balancer controller makes internet-facing (its default for
    Services is internal unless the scheme annotation says otherwise; the legacy in-tree one is public)."""
    spec = props.get("spec") or {}
    if not isinstance(spec, Mapping) or spec.get("type") != "LoadBalancer":
        return False
    annotations = (props.get("metadata") or {}).get("annotations") or {}
    scheme = annotations.get(LB_ANNOTATION + "scheme")
    return scheme == "internet-facing" or (scheme is None and annotations.get(LB_ANNOTATION + "type") is None)


def node_group_size(group: Mapping[str, Any]) -> tuple[int, int] | None:
    """(min, max) instances of an AWS PCS compute node group (scalingConfiguration), None when unknown."""
    scaling = decoded(group.get("scalingConfiguration"))
    if not isinstance(scaling, Mapping):
        return None
    low, high = scaling.get("minInstanceCount"), scaling.get("maxInstanceCount")
    if low is None or high is None or not (is_known(low) and is_known(high)):
        return None
    return as_int(low), as_int(high)


def efa_interfaces(template: Mapping[str, Any]) -> int:
    """Network interfaces of a launch template that attach an EFA device."""
    return sum(1 for ni in mappings(template.get("networkInterfaces")) if ni.get("interfaceType") in EFA_TYPES)


# ---- providers ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Location:
    """Where an aws provider deploys: its region and account (None when the provider does not say)."""

    region: str | None
    account: str | None


def assumed_roles(provider: Mapping[str, Any]) -> list[str]:
    """ARNs of the roles an aws provider assumes (`assumeRoles`, or the older single `assumeRole`)."""
    roles = decoded(provider.get("assumeRoles")) or decoded(provider.get("assumeRole")) or []
    if isinstance(roles, Mapping):
        roles = [roles]
    return [str(r.get("roleArn")) for r in mappings(roles) if text(r.get("roleArn"))]


def account_of_arn(arn: str) -> str:
    """The account id field of an ARN ('' for global or malformed ARNs)."""
    parts = str(arn).split(":")
    return parts[4] if len(parts) > 5 else ""


def provider_accounts(provider: Mapping[str, Any]) -> list[str]:
    """Accounts an aws provider is pinned to (allowedAccountIds), else the accounts of the roles it assumes."""
    pinned = decoded(provider.get("allowedAccountIds"))
    listed_ids = pinned if isinstance(pinned, Sequence) and not isinstance(pinned, str) else []
    accounts = [a for a in (text(p) for p in listed_ids) if a]
    return accounts or [a for a in (account_of_arn(r) for r in assumed_roles(provider)) if a]


def location(provider: Mapping[str, Any] | None, default_region: str | None = None) -> Location:
    """Region and account of an aws provider."""
    if provider is None:
        return Location(default_region, None)
    accounts = provider_accounts(provider)
    return Location(text(provider.get("region")) or default_region, accounts[0] if accounts else None)


# ---- IAM ----------------------------------------------------------------------------------------
def listed(value: Any) -> list[Any]:
    """IAM's "string or list" fields as a list."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return list(value)


def allows_everything(statement: Mapping[str, Any]) -> bool:
    """An Allow of every action on every resource: what no gpuinfra policy document may contain."""
    if statement.get("Effect") != "Allow":
        return False
    actions, resources = listed(statement.get("Action")), listed(statement.get("Resource"))
    return any(a in ("*", "*:*") for a in actions) and "*" in resources


def statements(document: Any) -> list[Mapping[str, Any]]:
    """The statements of an IAM, bucket or key policy document (a JSON string or already parsed)."""
    parsed = decoded(document)
    if not isinstance(parsed, Mapping):
        return []
    found = parsed.get("Statement", [])
    return [found] if isinstance(found, Mapping) else mappings(found)


__all__ = [
    "EFA_TYPES",
    "MARKETS",
    "NODE_GROUP_MARKETS",
    "Location",
    "account_of_arn",
    "allows_everything",
    "as_int",
    "assumed_roles",
    "capacity_terms",
    "decoded",
    "distribution",
    "efa_interfaces",
    "instance_types",
    "listed",
    "location",
    "mappings",
    "market",
    "node_group_size",
    "provider_accounts",
    "split",
    "statements",
    "text",
]
