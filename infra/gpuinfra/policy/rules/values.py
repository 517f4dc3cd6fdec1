"""Reading resource properties the way both the CLI and the in-process runner hand them over.

Properties are wrapped by `pulumi_policy.proxy.unknown_checking_proxy`: reading a value Pulumi cannot
know during preview raises `UnknownValueError`, which the host turns into an advisory "can't run
policy during preview". Numbers arrive as floats under the CLI (protobuf) and as ints in-process, and
provider settings (`region`, `allowedAccountIds`, `assumeRoles`, `defaultTags`) arrive JSON-encoded:
these helpers absorb both, so messages read the same either way.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from pulumi_policy import PolicyResource, StackValidationArgs
from pulumi_policy.proxy import UnknownValueError

from gpuinfra.graph import tokens, views
from gpuinfra.graph.launchers import node_pool
from gpuinfra.graph.views import account_of_arn, as_int, assumed_roles, decoded, listed, statements

T = TypeVar("T")


def has(props: Mapping[str, Any], key: str) -> bool:
    """Whether `key` is set, even to a value unknown during preview (which reading would raise on)."""
    try:
        return key in props
    except UnknownValueError:
        return True


def get(props: Any, *path: str | int, default: Any = None) -> Any:
    """props[a][b]..., or `default` where a level is missing or None. Unknown values still raise."""
    node = props
    for key in path:
        if node is None:
            return default
        if isinstance(key, int):
            if not isinstance(node, Sequence) or isinstance(node, str) or key >= len(node):
                return default
        elif not isinstance(node, Mapping):
            return default
        try:
            node = node[key]
        except KeyError:
            return default
    return default if node is None else node


def num(value: Any) -> str:
    """A number as people write it: 16, not 16.0 (the CLI hands every number over as a float)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def truthy(value: Any) -> bool:
    """Booleans, and the "true"/"false" strings launch templates use."""
    if isinstance(value, str):
        return value.strip().lower() == "true"
    return bool(value)


# ---- providers ------------------------------------------------------------------------------------
def provider_region(props: Mapping[str, Any] | None) -> str | None:
    return views.location(props).region


def provider_account_ids(props: Mapping[str, Any] | None) -> list[str]:
    """Accounts a provider is pinned to (allowedAccountIds), else the accounts of the roles it assumes."""
    return views.provider_accounts(props) if props is not None else []


def default_tags(props: Mapping[str, Any] | None) -> dict[str, str]:
    if props is None:
        return {}
    tags = decoded(get(props, "defaultTags", default={})) or {}
    return dict(tags.get("tags") or {}) if isinstance(tags, Mapping) else {}


# ---- tags -----------------------------------------------------------------------------------------
def own_tags(resource_type: str, props: Mapping[str, Any]) -> dict[str, str]:
    """A resource's explicit tags; an Auto Scaling group's only if propagated to its instances."""
    if resource_type == tokens.ASG:
        return {
            str(t.get("key")): str(t.get("value"))
            for t in get(props, "tags", default=[])
            if isinstance(t, Mapping) and truthy(t.get("propagateAtLaunch", True))
        }
    tags = get(props, "tags", default={})
    return {str(k): str(v) for k, v in tags.items()} if isinstance(tags, Mapping) else {}


def workload_label(props: Mapping[str, Any]) -> str | None:
    """A Kubernetes object's workload label."""
    found = get(props, "metadata", "labels", tokens.WORKLOAD_LABEL)
    return None if found is None else str(found)


def carries_labels(resource_type: str) -> bool:
    """Kubernetes objects the stack owns. Helm releases are not objects (their charts' objects are the chart's),
    and `...Patch` resources set a few fields of objects someone else owns (e.g. a site's nodes)."""
    return (
        resource_type.startswith("kubernetes:")
        and not resource_type.startswith("kubernetes:helm.sh/")
        and not resource_type.endswith("Patch")
    )


def effective_tags(
    resource_type: str, props: Mapping[str, Any], provider_props: Mapping[str, Any] | None
) -> dict[str, str]:
    """Provider default tags overlaid with the resource's own; ASGs take no default tags."""
    if resource_type == tokens.ASG:
        return own_tags(resource_type, props)
    return {**default_tags(provider_props), **own_tags(resource_type, props)}


# ---- stacks ---------------------------------------------------------------------------------------
class StackView:
    """Indexes over one AnalyzeStack call's resources, built once and shared by every stack policy."""

    def __init__(self, resources: Sequence[PolicyResource]) -> None:
        self.resources = resources
        self.by_urn = {r.urn: r for r in resources}
        self._by_type: dict[str, list[PolicyResource]] = defaultdict(list)
        self._dependents: dict[str, list[PolicyResource]] = defaultdict(list)
        self._memo: dict[str, Any] = {}
        for r in resources:
            self._by_type[r.resource_type].append(r)
            for d in r.dependencies:
                self._dependents[d.urn].append(r)

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """`compute()` once per view: two policies judging one derivation (quota needs) share it."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]  # type: ignore[no-any-return]

    def of_type(self, *types: str) -> list[PolicyResource]:
        return [r for t in types for r in self._by_type.get(t, [])]

    def with_prefix(self, prefix: str) -> list[PolicyResource]:
        return [r for t, rs in self._by_type.items() if t.startswith(prefix) for r in rs]

    def dependencies_of(self, resource: PolicyResource, *types: str) -> list[PolicyResource]:
        return [d for d in resource.dependencies if not types or d.resource_type in types]

    def dependents_of(self, resource: PolicyResource, *types: str) -> list[PolicyResource]:
        """Resources that depend on `resource` (e.g. the bucket's encryption configuration), of the given types."""
        return [r for r in self._dependents.get(resource.urn, []) if not types or r.resource_type in types]

    @staticmethod
    def region_of(resource: PolicyResource) -> str | None:
        if resource.resource_type == tokens.KARPENTER_NODE_POOL:  # its Kubernetes provider names no region
            return node_pool(resource.props).region
        return get(resource.props, "region") or provider_region(resource.provider.props if resource.provider else None)

    def account_of(self, resource: PolicyResource) -> str | None:
        """The account a resource is deployed into: its provider's; a Karpenter NodePool's nodes, the account the
        stack's AWS providers in its region are pinned to (when they agree on one)."""
        if resource.resource_type == tokens.KARPENTER_NODE_POOL:
            region = self.region_of(resource)
            found = {
                a
                for p in self.of_type(tokens.AWS_PROVIDER)
                if provider_region(p.props) == region
                for a in provider_account_ids(p.props)
            }
            return found.pop() if region and len(found) == 1 else None
        accounts = provider_account_ids(resource.provider.props if resource.provider else None)
        return accounts[0] if accounts else None

    def templates(self, group: PolicyResource) -> list[Mapping[str, Any]]:
        return [lt.props for lt in self.dependencies_of(group, tokens.LAUNCH_TEMPLATE)]

    def instance_types(self, group: PolicyResource) -> list[str]:
        """What a compute group launches (graph.views.instance_types)."""
        return views.instance_types(group.props, self.templates(group))

    def market_of(self, group: PolicyResource) -> str | None:
        """The market a group's capacity type or launch template forces (spot, capacity-block), if any."""
        return views.market(self.templates(group), group.props)


_VIEWS: list[tuple[Sequence[PolicyResource], StackView]] = []


def view(args: StackValidationArgs) -> StackView:
    """The StackView of this call's resources (the in-process runner hands every policy the same list)."""
    for resources, built in _VIEWS:
        if resources is args.resources:
            return built
    built = StackView(args.resources)
    _VIEWS[:] = [*_VIEWS[-1:], (args.resources, built)]
    return built


def names(resources: Iterable[PolicyResource]) -> str:
    return ", ".join(sorted(r.name for r in resources))


__all__ = [
    "StackView",
    "account_of_arn",
    "as_int",
    "assumed_roles",
    "carries_labels",
    "decoded",
    "default_tags",
    "effective_tags",
    "get",
    "has",
    "listed",
    "names",
    "num",
    "own_tags",
    "provider_account_ids",
    "provider_region",
    "statements",
    "truthy",
    "view",
    "workload_label",
]
