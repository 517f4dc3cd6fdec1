"""Everything the evaluator needs, read from the graphs: roles with their identity policies and boundaries,
bucket policies, key policies, KMS grants, which key encrypts which bucket, and where each lives."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuinfra.graph import Graph, Resource, is_known, tokens
from gpuinfra.graph.views import decoded, location, mappings, text
from gpuinfra.preflight.access.decide import Grant, Principal
from gpuinfra.preflight.access.statements import Statement, UnreadablePolicy, parse

KMS_GRANT = "aws:kms/grant:Grant"
IAM_ROLE_POLICY_TYPES = (tokens.IAM_ROLE_POLICY,)
ATTACHMENT_TYPES = (tokens.IAM_ROLE_POLICY_ATTACHMENT,)


@dataclass
class Role:
    principal: Principal
    resource: Resource
    identity: list[Statement] = field(default_factory=list)
    boundary: list[Statement] | None = None
    unknown: list[str] = field(default_factory=list)
    """Policies attached but not readable here (AWS managed policies, unknown documents)."""


@dataclass
class KeyPolicy:
    arn: str
    name: str
    account: str | None
    statements: tuple[Statement, ...] | None
    """None: the document is unknown or unreadable."""


@dataclass
class Bucket:
    name: str
    account: str | None
    region: str | None
    policy: tuple[Statement, ...] | None = None
    policy_name: str = ""
    key_arn: str | None = None
    bucket_key: bool = False


@dataclass
class LogGroupPolicy:
    """A CloudWatch Logs resource policy attached to one log group (PutResourcePolicy with resourceArn)."""

    group_arn: str
    name: str
    statements: tuple[Statement, ...] | None


@dataclass
class World:
    roles: dict[str, Role] = field(default_factory=dict)
    buckets: dict[str, Bucket] = field(default_factory=dict)
    keys: dict[str, KeyPolicy] = field(default_factory=dict)
    grants: list[Grant] = field(default_factory=list)
    log_groups: dict[str, LogGroupPolicy] = field(default_factory=dict)
    """Log-group resource policies by the group's ARN (without a trailing `:*`)."""
    problems: list[str] = field(default_factory=list)


def _where(graph: Graph, r: Resource) -> tuple[str | None, str | None]:
    provider = graph.provider_of(r)
    loc = location(provider.inputs if provider else None)
    return loc.region, loc.account


def _statements(value: Any, origin: str) -> tuple[Statement, ...] | None:
    if not is_known(value):
        return None
    try:
        return parse(decoded(value), origin)
    except UnreadablePolicy:
        return None


def _roles(graph: Graph, world: World) -> None:
    by_name: dict[str, Role] = {}
    for r in graph.of_type(tokens.IAM_ROLE):
        _, account = _where(graph, r)
        name = text(r.inputs.get("name")) or r.name
        path = text(r.inputs.get("path")) or "/"
        role = Role(Principal(f"arn:aws:iam::{account}:role{path}{name}", account), r)
        for n, inline in enumerate(mappings(r.inputs.get("inlinePolicies"))):
            found = _statements(inline.get("policy"), f"inline policy {n} of role {r.name}")
            role.identity += found or []
        for arn in r.inputs.get("managedPolicyArns") or []:
            role.unknown.append(str(arn))
        boundary = r.inputs.get("permissionsBoundary")
        if boundary:
            role.boundary = _policy_by_arn(graph, r, boundary, role)
        world.roles[r.name] = role
        by_name[r.urn] = role
    for p in graph.of_type(*IAM_ROLE_POLICY_TYPES, *ATTACHMENT_TYPES):
        owner = next((by_name[u] for u in p.dependencies if u in by_name), None)
        if owner is None:
            continue
        if p.type in IAM_ROLE_POLICY_TYPES:
            found = _statements(p.inputs.get("policy"), f"role policy {p.name} (stack {graph.stack})")
            if found is None:
                owner.unknown.append(p.name)
            owner.identity += found or []
        else:
            owner.identity += _policy_by_arn(graph, p, p.inputs.get("policyArn"), owner) or []


def _policy_by_arn(graph: Graph, user: Resource, arn: Any, role: Role) -> list[Statement] | None:
    """A customer managed policy of the graph the resource depends on; else its ARN is noted as unreadable."""
    for dep in graph.dependencies_of(user, tokens.IAM_POLICY):
        found = _statements(dep.inputs.get("policy"), f"managed policy {dep.name} (stack {graph.stack})")
        if found is not None:
            return list(found)
    role.unknown.append(str(arn))
    return None


def _buckets(graph: Graph, world: World) -> None:
    for r in graph.of_type(tokens.BUCKET, tokens.BUCKET_V2):
        name = text(r.inputs.get("bucket"))
        if name:
            region, account = _where(graph, r)
            world.buckets[name] = Bucket(name, account, region)
    for r in graph.of_type(tokens.BUCKET_POLICY):
        b = world.buckets.get(str(r.inputs.get("bucket")))
        if b is not None:
            b.policy = _statements(r.inputs.get("policy"), f"bucket policy {r.name} (stack {graph.stack})")
            b.policy_name = r.name
    for r in graph.of_type(tokens.BUCKET_SSE, tokens.BUCKET_SSE_V2):
        b = world.buckets.get(str(r.inputs.get("bucket")))
        for rule in mappings(r.inputs.get("rules")):
            default = rule.get("applyServerSideEncryptionByDefault") or {}
            key = text(default.get("kmsMasterKeyId")) if isinstance(default, Mapping) else None
            if b is not None and key:
                b.key_arn, b.bucket_key = key, bool(rule.get("bucketKeyEnabled"))
                for dep in graph.dependencies_of(r, tokens.KMS_KEY):
                    _key(graph, dep, key, world)


def _key(graph: Graph, r: Resource, arn: str, world: World) -> None:
    _, account = _where(graph, r)
    origin = f"key policy of {r.name} (stack {graph.stack})"
    world.keys[arn] = KeyPolicy(arn, r.name, account, _statements(r.inputs.get("policy"), origin))


def _grants(graph: Graph, world: World) -> None:
    for r in graph.of_type(KMS_GRANT):
        constraints = mappings(r.inputs.get("constraints"))
        c = constraints[0] if constraints else {}
        world.grants.append(
            Grant(
                f"KMS grant {r.name} (stack {graph.stack})",
                str(r.inputs.get("keyId")),
                str(r.inputs.get("granteePrincipal")),
                tuple(str(o) for o in r.inputs.get("operations") or ()),
                c.get("encryptionContextSubset"),
                c.get("encryptionContextEquals"),
            )
        )


def _log_groups(graph: Graph, world: World) -> None:
    """Group-scoped resource policies only: an account-wide one (policyName, no resourceArn) names its groups in
    its statements' Resource, which a flow's group would have to be matched against; the stacks write none."""
    for r in graph.of_type(tokens.LOG_RESOURCE_POLICY):
        arn = text(r.inputs.get("resourceArn"))
        if arn:
            arn = arn.removesuffix(":*")
            origin = f"log group policy {r.name} (stack {graph.stack})"
            world.log_groups[arn] = LogGroupPolicy(arn, r.name, _statements(r.inputs.get("policyDocument"), origin))


def read_world(graphs: Iterable[Graph]) -> World:
    world = World()
    for graph in graphs:
        _roles(graph, world)
        _buckets(graph, world)
        _grants(graph, world)
        _log_groups(graph, world)
    return world


__all__ = ["Bucket", "KeyPolicy", "LogGroupPolicy", "Role", "World", "read_world"]
