"""Policy test helpers: real graphs of the example stacks, mutated, run through the pack in-process.

Three ways to get a failing graph, most honest first:
- spec or organization mutations that pass the validators (e.g. a smaller budget: no validator judges it);
- `unchecked=True`: the program's components built without its validator gate, for specs the validators
  already refuse (the policy is the second line of defence: what if the gate were bypassed?);
- `graph` mutations: a resource's inputs edited after the engine ran, for settings no spec can produce
  (the components hard-code IMDSv2, encryption, ...), the way a hand-edited program would.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuinfra.account import AccountFacts
from gpuinfra.catalog import load_catalog
from gpuinfra.findings import Finding
from gpuinfra.graph import Graph, Resource
from gpuinfra.plan import build_plan
from gpuinfra.policy.facts import StackFacts
from gpuinfra.policy.pack import PolicyRun, pack_config, police
from helpers import apply, checked, example_graph, graph_for, inputs_for

GraphEdit = tuple[str, str | None, Mapping[str, Any]]
"""(resource type, resource name or None for every resource of the type, dotted-path mutations)."""


def facts_for(stack: str, spec: Mapping[str, Any] | None = None, org: Mapping[str, Any] | None = None) -> StackFacts:
    """The facts the pack judges the example by: its plan, and what the example folder's other stacks hold (the
    workspace's fold, as `gpuinfra preview` and the pack's entry hand them over)."""
    from gpuinfra.workspace import workspace_of

    inputs = inputs_for(stack, spec, org)
    catalog = load_catalog()
    held = workspace_of(inputs.stack.path, inputs.org.path).facts(inputs)
    return StackFacts.of(inputs, build_plan(inputs.spec, inputs.org.org, catalog), catalog, held)


def program_graph(
    stack: str, spec: Mapping[str, Any] | None = None, org: Mapping[str, Any] | None = None, unchecked: bool = False
) -> Graph:
    """The example's graph from the real program; `unchecked` builds the components for a spec the
    validator gate would refuse (program.build without program.load's validation)."""
    if not unchecked:
        return graph_for(stack, spec, org)
    from gpuinfra.pulumi.engine import run
    from gpuinfra.pulumi.preview import PROJECT, engine_config
    from gpuinfra.pulumi.program import build

    inputs = inputs_for(stack, spec, org)
    plan = build_plan(inputs.spec, inputs.org.org, load_catalog())
    config, secrets = engine_config(inputs)
    return run(
        lambda: build(inputs, plan), project=PROJECT, stack=inputs.stack.name, config=config, secret_keys=secrets
    )


def unchecked_graph(stack: str, spec: Mapping[str, Any] | None = None, org: Mapping[str, Any] | None = None) -> Graph:
    return program_graph(stack, spec, org, unchecked=True)


def edited(graph: Graph, edits: Iterable[GraphEdit]) -> Graph:
    """`graph` with the matching resources' inputs changed (dotted paths, helpers.DELETE removes a key)."""
    changes = list(edits)
    out = []
    for resource in graph.resources:
        inputs = resource.inputs
        for type_, name, mutations in changes:
            if resource.type == type_ and (name is None or resource.name == name):
                inputs = apply(copy.deepcopy(inputs), mutations)
        out.append(
            resource
            if inputs is resource.inputs
            else Resource(
                resource.urn,
                resource.type,
                resource.name,
                resource.parent,
                resource.provider,
                resource.custom,
                resource.dependencies,
                inputs,
            )
        )
    return Graph.of(graph.stack, graph.project, out)


def with_resources(graph: Graph, *extra: Resource) -> Graph:
    return Graph.of(graph.stack, graph.project, [*graph.resources, *extra])


def planted(graph: Graph, kind: str, name: str, inputs: dict[str, Any], depends_on: tuple[str, ...] = ()) -> Graph:
    """`graph` plus one resource of type `kind`, parented and provided like the graph's VPC or bucket."""
    anchor = next(r for r in graph.resources if r.type in ("aws:ec2/vpc:Vpc", "aws:s3/bucket:Bucket"))
    deps = tuple(r.urn for r in graph.resources if r.type in depends_on)
    extra = Resource(
        urn=f"{anchor.urn.rsplit('::', 1)[0]}${kind}::{name}",
        type=kind,
        name=name,
        parent=anchor.parent,
        provider=anchor.provider,
        dependencies=(anchor.urn, *deps),
        inputs=inputs,
    )
    return with_resources(graph, extra)


def one_of_each(graph: Graph, kinds: Iterable[str], prefix: str) -> tuple[Graph, list[Resource]]:
    """`graph` plus one resource of each type in `kinds`, without inputs (nothing bounds or names anything),
    parented and provided like the graph's VPC; and the planted resources."""
    anchor = next(r for r in graph.resources if r.type == "aws:ec2/vpc:Vpc")
    extra = [
        Resource(
            f"{anchor.urn.rsplit('::', 1)[0]}${kind}::{prefix}{i}", kind, f"{prefix}{i}", anchor.parent, anchor.provider
        )
        for i, kind in enumerate(kinds)
    ]
    return with_resources(graph, *extra), extra


@dataclass(frozen=True)
class PolicyCase:
    """One scenario: an example stack, mutated; does `policy` report a violation, with what message?"""

    policy: str
    stack: str
    fires: bool = True
    spec: dict[str, Any] = field(default_factory=dict)
    org: dict[str, Any] = field(default_factory=dict)
    edits: tuple[GraphEdit, ...] = ()
    unchecked: bool = False
    config: dict[str, Any] = field(default_factory=dict)
    message: str | None = None
    """Regex one of the policy's messages must match (when it fires)."""
    level: str | None = None
    label: str = ""
    alone: bool = False
    """Judge the stack without the repository's other stacks in its account (no account-wide totals)."""

    @property
    def id(self) -> str:
        what = self.label or ",".join([*self.spec, *self.org, *(e[0].split(":")[-1] for e in self.edits)]) or "example"
        return f"{self.policy}-{'fails' if self.fires else 'passes'}-{self.stack}-{what}"


def case_graph(case: PolicyCase) -> Graph:
    if case.spec or case.org or case.unchecked:
        graph = program_graph(case.stack, case.spec, case.org, case.unchecked)
    else:
        graph = example_graph(case.stack)
    return edited(graph, case.edits) if case.edits else graph


def run_case(case: PolicyCase) -> list[Finding]:
    if not case.unchecked:
        errors = [f for f in checked(case.stack, case.spec, case.org).findings if str(f.level) == "error"]
        assert not errors, f"the validators refuse this case; mark it unchecked=True: {errors}"
    facts = facts_for(case.stack, case.spec, case.org)
    if case.alone:
        facts = dataclasses.replace(facts, held=AccountFacts())  # the stack alone: no other stack of its account
    run = police(case_graph(case), facts, pack_config(given=case.config))
    found = [v for v in run.violations if v.rule == case.policy]
    if not case.fires:
        assert not found, f"{case.policy} fired unexpectedly: {[v.message for v in found]}"
        return found
    assert found, f"{case.policy} did not fire; violations: {[(v.rule, v.message) for v in run.violations]}"
    if case.message:
        assert any(re.search(case.message, v.message) for v in found), [v.message for v in found]
    if case.level:
        assert {v.level.enforcement for v in found} == {case.level}, [v.level.enforcement for v in found]
    return found


def run_example(stack: str, config: Mapping[str, Any] | None = None) -> PolicyRun:
    return police(example_graph(stack), facts_for(stack), pack_config(given=config))


__all__ = [
    "GraphEdit",
    "PolicyCase",
    "case_graph",
    "edited",
    "facts_for",
    "one_of_each",
    "planted",
    "program_graph",
    "run_case",
    "run_example",
    "unchecked_graph",
    "with_resources",
]
