"""Judge each resource of a graph by its provider's own definition (the cloud's preflight part, found through
the registry by the type's package; Kubernetes objects by the Kubernetes OpenAPI schema), plus the cloud's
documented rules over the whole graph."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from types import ModuleType

import gpuinfra.preflight.kubernetes as kubernetes
from gpuinfra.catalog import Catalog
from gpuinfra.clouds import type_part
from gpuinfra.findings import Finding, Level
from gpuinfra.graph import Graph, Resource
from gpuinfra.preflight.findings import finding_at
from gpuinfra.preflight.kubernetes import KUBERNETES_PREFIX, NOT_JUDGED

UNCHECKED = "PF-UNCHECKED"
CRASH = "PF-CRASH"
SOURCE_ROOT = "infra"
"""The repository's source root (pyproject's package-dir): a finding cites a module by its file in the repository."""


def source_file(module: ModuleType) -> str:
    """The repository file of a module, as a finding cites it (infra/gpuinfra/preflight/kubernetes.py)."""
    leaf = "/__init__.py" if hasattr(module, "__path__") else ".py"
    return f"{SOURCE_ROOT}/{module.__name__.replace('.', '/')}{leaf}"


def unchecked_source(type_: str) -> str:
    """Where an unjudged type is missing from: the table of the cloud that owns it (its preflight part's `table`
    module, else the part itself), the Kubernetes schema check for a Kubernetes kind, and for a type no cloud owns
    this module, which lists what nothing judges."""
    if type_.startswith(KUBERNETES_PREFIX):
        return source_file(kubernetes)
    own = type_part(type_, "preflight")
    return source_file(getattr(own, "table", own) if own is not None else sys.modules[__name__])


def check_resource(resource: Resource, graph: Graph) -> list[Finding]:
    """A Kubernetes object by its Kubernetes schema (whichever cloud runs the cluster), any other resource by the
    definitions of the cloud that owns its type."""
    if resource.type.startswith(KUBERNETES_PREFIX):
        return [] if resource.type in NOT_JUDGED else kubernetes.check_object(resource, graph)
    own = type_part(resource.type, "preflight")
    return [] if own is None else own.check(resource, graph)  # type: ignore[no-any-return]


def unchecked(graph: Graph, resources: Iterable[Resource]) -> list[Finding]:
    """One info finding per type (or Kubernetes kind) nothing here can judge: said, not silently passed."""
    seen: dict[str, Resource] = {}
    for r in resources:
        own = type_part(r.type, "preflight")
        if own is not None and own.judges(r.type):
            continue
        if r.type.startswith(KUBERNETES_PREFIX) and r.type not in NOT_JUDGED and kubernetes.is_checked(r, graph):
            continue
        seen.setdefault(r.type, r)
    findings = []
    for type_, r in sorted(seen.items()):
        if type_ in NOT_JUDGED:
            why = "its content (chart values) is defined by the chart, which no packaged library carries"
        elif type_.startswith(KUBERNETES_PREFIX):
            why = "a custom resource: its CRD schema is not packaged with any library"
        else:
            why = "no entry in preflight's table"
        message = f"{type_} is not judged by preflight: {why}; the conformance tests check it against upstream"
        findings.append(finding_at(r, UNCHECKED, "", type_, message, unchecked_source(type_), Level.INFO))
    return findings


def preflight(graph: Graph, catalog: Catalog) -> list[Finding]:
    """Every way AWS or Kubernetes would refuse (or silently drop) what the graph asks for, sorted."""
    findings: list[Finding] = []
    resources = [r for r in graph.custom_resources()]
    parts: dict[str, ModuleType] = {}
    for resource in resources:
        own = type_part(resource.type, "preflight")
        if own is not None:
            parts.setdefault(own.__name__, own)
        try:
            findings += check_resource(resource, graph)
        except Exception as exc:  # a crashing check is a finding, never a pass
            message = f"preflight could not judge this resource: {type(exc).__name__}: {exc}"
            findings.append(finding_at(resource, CRASH, "", resource.type, message, "infra/preflight"))
    for rule in [r for part in parts.values() for r in getattr(part, "RULES", ())]:  # the clouds' graph rules
        try:
            findings += rule.run(graph, catalog)
        except Exception as exc:
            stack = next(iter(graph.resources))
            message = f"rule {rule.id} crashed: {type(exc).__name__}: {exc}"
            findings.append(finding_at(stack, CRASH, "", rule.id, message, rule.source))
    findings += unchecked(graph, resources)
    return sorted(set(findings), key=lambda f: (f.level < Level.ERROR, f.urn, f.rule, f.path, f.message))


__all__ = ["CRASH", "UNCHECKED", "check_resource", "preflight", "unchecked"]
