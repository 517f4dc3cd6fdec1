"""Run CrossGuard policies over a resource graph in-process, with the semantics of the Pulumi CLI.

This mirrors `pulumi_policy.policy._PolicyAnalyzerServicer.Analyze` / `AnalyzeStack` (pulumi-policy
1.21) without gRPC: DISABLED policies are skipped, REMEDIATE is reported as MANDATORY, each policy
gets its reconciled config (empty config -> `{}`), `args.not_applicable()` is recorded, and an
`UnknownValueError` becomes an ADVISORY "can't run policy ... during preview" diagnostic. Like the
engine, a resource policy's violation is attributed to the analyzed resource unless the policy names
another URN.

What differs, on purpose, for speed: nothing goes through protobuf. Each resource's inputs are wrapped
once (on first use) with a lazy equivalent of `unknown_checking_proxy` (proxy.py: same errors, same
paths) and shared by every policy, resource policies run only on the types they declare
(`applies_to`), and every stack policy sees the same resource list.
A policy that raises anything else fails the gRPC call under the CLI; here it becomes a MANDATORY
violation saying the policy crashed, so a broken policy can never pass silently.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from inspect import isawaitable
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyCustomTimeouts,
    PolicyProviderResource,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.policy import _NotApplicableError
from pulumi_policy.proxy import UnknownValueError

from gpuinfra.findings import Finding, Level
from gpuinfra.graph import Graph, Resource
from gpuinfra.policy.config import PolicyConfig
from gpuinfra.policy.proxy import lazy_unknown_checking_proxy

NOT_PRICED: Any = object()
"""`monthly_cost` when the host has not priced the stack (the budget policy then prices it)."""
SERVED_VERSION = "0.0.1"
"""The version `pulumi_policy.PolicyPack` serves and writes into "can't run policy" messages (the CLI
shows PulumiPolicy.yaml's version elsewhere, but not inside that text)."""


def violation(policy: Policy, level: EnforcementLevel, urn: str, message: str, unknown: bool = False) -> Finding:
    """A policy's verdict as the one finding type: the policy's name is its rule, its enforcement level one of
    the levels (advisory a warning, mandatory an error), the resource its urn ("" for the stack as a whole), the
    message what the policy reported (or the "can't run policy" text)."""
    return Finding(
        policy.name,
        Level.of(level.value),
        "",
        message,
        stage="policy",
        urn=urn,
        description=policy.description or "",
        unknown=unknown,
    )


def diagnostic(finding: Finding) -> str:
    """The message as the analyzer sends it to the engine (description, then the policy's message)."""
    if finding.unknown or not finding.message:
        return finding.message or finding.description
    return f"{finding.description}\n{finding.message}"


@dataclass(frozen=True, order=True)
class NotApplicable:
    policy: str
    reason: str
    urn: str = ""


@dataclass
class PolicyRun:
    pack: str
    levels: dict[str, str]
    """Each policy's effective enforcement level."""
    kinds: dict[str, str]
    """Each policy's kind: resource or stack."""
    violations: list[Finding] = field(default_factory=list)
    """Each violation, a finding of stage policy (named after the resource it names, when the graph has it)."""
    not_applicable: list[NotApplicable] = field(default_factory=list)
    evaluated: set[str] = field(default_factory=set)
    """Policies that ran at least once (a resource policy runs only on resources of its types)."""

    @property
    def mandatory(self) -> list[Finding]:
        return [v for v in self.violations if v.blocking]


class _Wrapped:
    """Each resource's proxied props and provider, built on first use and shared by every policy."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._props: dict[str, Mapping[str, Any]] = {}
        self._providers: dict[str, PolicyProviderResource | None] = {}

    def props(self, resource: Resource) -> Mapping[str, Any]:
        found = self._props.get(resource.urn)
        if found is None:
            found = self._props[resource.urn] = lazy_unknown_checking_proxy(resource.inputs)
        return found

    def provider(self, resource: Resource) -> PolicyProviderResource | None:
        urn = resource.provider
        if not urn:
            return None
        if urn not in self._providers:
            source = self.graph.by_urn.get(urn)
            self._providers[urn] = (
                None
                if source is None
                else PolicyProviderResource(source.type, self.props(source), source.urn, source.name)
            )
        return self._providers[urn]


def _options(resource: Resource) -> PolicyResourceOptions:
    return PolicyResourceOptions(resource.protect, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], resource.parent)


class _StackResource(PolicyResource):
    """A PolicyResource whose props are wrapped only when a stack policy reads them."""

    def __init__(self, source: Resource, wrapped: _Wrapped) -> None:
        # No super().__init__: props and opts are properties, built only when a policy reads them.
        self._source = source
        self._wrapped = wrapped
        self.resource_type = source.type
        self.urn = source.urn
        self.name = source.name
        self.provider = wrapped.provider(source)
        self.parent = None
        self.dependencies = []
        self.property_dependencies = {}

    @property
    def props(self) -> Mapping[str, Any]:  # type: ignore[override]
        return self._wrapped.props(self._source)

    @property
    def opts(self) -> PolicyResourceOptions:  # type: ignore[override]
        return _options(self._source)


class GraphStackArgs(StackValidationArgs):
    """StackValidationArgs that also carry the graph, and the stack's monthly cost when the host priced it,
    so the budget policy neither rebuilds the graph from the resources nor prices it twice."""

    def __init__(
        self,
        resources: list[PolicyResource],
        graph: Graph,
        config: Mapping[str, Any] | None,
        stack_tags: Mapping[str, str] | None,
        monthly_cost: Any,
    ) -> None:
        super().__init__(resources, config, stack_tags)
        self.graph = graph
        if monthly_cost is not NOT_PRICED:
            self.monthly_cost = monthly_cost


def effective_level(policy: Policy, config: Mapping[str, PolicyConfig]) -> EnforcementLevel:
    """The configured level, else the policy's own, else the pack default (advisory)."""
    if policy.name in config and config[policy.name].level:
        return EnforcementLevel(config[policy.name].level)
    return policy.enforcement_level or EnforcementLevel.ADVISORY


def run_pack(
    graph: Graph,
    policies: Sequence[Policy],
    config: Mapping[str, PolicyConfig],
    *,
    pack: str,
    stack_tags: Mapping[str, str] | None = None,
    monthly_cost: Any = NOT_PRICED,
) -> PolicyRun:
    """Every resource policy on every resource it applies to, then every stack policy on the stack."""
    collecting = gc.isenabled()
    gc.disable()  # a run allocates many short-lived acyclic objects; collecting meanwhile costs ~30%
    try:
        return _run(graph, policies, config, pack, stack_tags, monthly_cost)
    finally:
        if collecting:
            gc.enable()


def _run(
    graph: Graph,
    policies: Sequence[Policy],
    config: Mapping[str, PolicyConfig],
    pack: str,
    stack_tags: Mapping[str, str] | None,
    monthly_cost: Any,
) -> PolicyRun:
    levels = {p.name: effective_level(p, config) for p in policies}
    run = PolicyRun(
        pack=pack,
        levels={n: lv.value for n, lv in levels.items()},
        kinds={p.name: "stack" if isinstance(p, StackValidationPolicy) else "resource" for p in policies},
    )
    wrapped = _Wrapped(graph)
    props_of = {
        p.name: dict(config[p.name].properties) if p.name in config and config[p.name].properties else None
        for p in policies
    }
    active = [p for p in policies if levels[p.name] is not EnforcementLevel.DISABLED]
    resource_policies = [p for p in active if isinstance(p, ResourceValidationPolicy)]
    by_type: dict[str, list[ResourceValidationPolicy]] = {}
    for resource in graph.resources:
        applicable = by_type.get(resource.type)
        if applicable is None:
            applicable = by_type[resource.type] = [p for p in resource_policies if _applies(p, resource.type)]
        for policy in applicable:
            if not policy.has_validation():
                run.not_applicable.append(
                    NotApplicable(policy.name, "Policy does not implement validate", resource.urn)
                )
                continue
            args = ResourceValidationArgs(
                resource.type,
                wrapped.props(resource),
                resource.urn,
                resource.name,
                _options(resource),
                wrapped.provider(resource),
                props_of[policy.name],
                stack_tags,
            )
            _call(run, policy, _reported(levels[policy.name]), args, pack, resource.urn)
    stack_policies = [p for p in active if isinstance(p, StackValidationPolicy)]
    if stack_policies:
        resources = _stack_resources(graph, wrapped)
        for stack_policy in stack_policies:
            stack_args = GraphStackArgs(resources, graph, props_of[stack_policy.name], stack_tags, monthly_cost)
            _call(run, stack_policy, _reported(levels[stack_policy.name]), stack_args, pack, "")
    run.violations = [_named(v, graph) for v in run.violations]
    return run


def _named(finding: Finding, graph: Graph) -> Finding:
    """The finding with the name of the resource it names (the report's and the review's `where`)."""
    found = graph.by_urn.get(finding.urn)
    return replace(finding, name=found.name) if found is not None else finding


def _applies(policy: ResourceValidationPolicy, resource_type: str) -> bool:
    applies: Callable[[str], bool] | None = getattr(policy, "applies_to", None)
    return applies(resource_type) if applies is not None else True


def _reported(level: EnforcementLevel) -> EnforcementLevel:
    """A violation of a remediating policy that still fires is reported as mandatory."""
    return EnforcementLevel.MANDATORY if level is EnforcementLevel.REMEDIATE else level


def stack_resources(graph: Graph) -> list[PolicyResource]:
    """The graph's resources as a stack policy sees them (parents and dependencies linked)."""
    return _stack_resources(graph, _Wrapped(graph))


def _stack_resources(graph: Graph, wrapped: _Wrapped) -> list[PolicyResource]:
    resources: list[PolicyResource] = [_StackResource(r, wrapped) for r in graph.resources]
    by_urn = {r.urn: r for r in resources}
    for source, target in zip(graph.resources, resources, strict=True):
        target.parent = by_urn.get(source.parent or "")
        target.dependencies = [by_urn[d] for d in source.dependencies if d in by_urn]
    return resources


def _call(run: PolicyRun, policy: Policy, level: EnforcementLevel, args: Any, pack: str, subject: str) -> None:
    run.evaluated.add(policy.name)

    def report_violation(message: str, urn: str | None = None) -> None:
        if message and not isinstance(message, str):
            raise TypeError("Expected message to be a string")
        run.violations.append(violation(policy, level, urn or subject, message or ""))

    try:
        result = policy.validate(args, report_violation)  # type: ignore[attr-defined]
        if isawaitable(result):
            loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(result)  # type: ignore[arg-type]
            finally:
                loop.close()
    except UnknownValueError as exc:
        run.violations.append(
            violation(
                policy,
                EnforcementLevel.ADVISORY,
                subject,
                f"can't run policy '{policy.name}' from policy pack '{pack}@v{SERVED_VERSION}' during preview: "
                f"{exc.message}",
                unknown=True,
            )
        )
    except _NotApplicableError as exc:
        run.not_applicable.append(NotApplicable(policy.name, exc.reason or "", subject))
    except Exception as exc:  # a broken policy must not pass silently
        run.violations.append(
            violation(policy, EnforcementLevel.MANDATORY, subject, f"policy crashed: {type(exc).__name__}: {exc}")
        )


__all__ = [
    "NOT_PRICED",
    "SERVED_VERSION",
    "GraphStackArgs",
    "NotApplicable",
    "PolicyRun",
    "diagnostic",
    "effective_level",
    "run_pack",
    "stack_resources",
    "violation",
]
