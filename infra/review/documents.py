"""Inputs of `gpuinfra cost` and `gpuinfra diff`: a document's kind is read from its shape, then each stack
becomes a priced Snapshot (graph, cost, findings, Pulumi steps).

Kinds: a `gpuinfra preview --format json` report; a `pulumi preview --json` digest (old and new states, so one
file is a whole review); a `pulumi stack export` (what is deployed: a base side); an engine event log.
Both sides are priced with the current catalog and the same usage, so a delta shows what the change costs,
not how prices moved.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.catalog import Catalog
from infra.cost import Breakdown, Usage, assumed_usage, price_graph
from infra.errors import InputError, Problem
from infra.graph import Graph, Resource
from infra.graph.readers import PulumiPreview, read_events, read_export, read_preview, stack_of
from infra.plan import AnyPlan, parse_plan
from infra.review.diff import Finding, Snapshot

GPUINFRA = "gpuinfra preview"
PREVIEW = "pulumi preview --json"
EXPORT = "pulumi stack export"
EVENTS = "pulumi engine events"


@dataclass(frozen=True)
class Side:
    label: str
    kind: str
    stacks: dict[str, Snapshot]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Document:
    path: Path
    kind: str
    data: Any = field(repr=False)


def load_document(path: Path) -> Document:
    """Read a JSON document (or JSON-lines event log) and tell its kind from its shape."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError([Problem(f"cannot read: {exc.strerror}", file=path)]) from None
    try:
        data = json.loads(text)
    except ValueError:
        try:
            lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError as exc:
            raise InputError([Problem(f"not JSON: {exc}", file=path)]) from None
        if lines and all(isinstance(e, dict) and "sequence" in e for e in lines):
            return Document(path, EVENTS, lines)
        raise InputError([Problem("not JSON", file=path)]) from None
    if isinstance(data, dict):
        if "stacks" in data and "command" in data:
            if data.get("version") != 1:
                raise InputError(
                    [
                        Problem(
                            f"gpuinfra report version {data.get('version')!r} is not supported (expected 1)", file=path
                        )
                    ]
                )
            return Document(path, GPUINFRA, data)
        if "steps" in data or "changeSummary" in data:
            return Document(path, PREVIEW, data)
        if "deployment" in data:
            return Document(path, EXPORT, data)
    keys = ", ".join(sorted(data)[:8]) if isinstance(data, dict) else type(data).__name__
    raise InputError(
        [
            Problem(
                f"not a gpuinfra preview, pulumi preview --json, pulumi stack export or engine event "
                f"log (top level: {keys})",
                file=path,
                hint="produce one with `gpuinfra preview --format json` or `pulumi preview --json`",
            )
        ]
    )


def price(
    graph: Graph,
    catalog: Catalog,
    usage: Usage,
    plan: AnyPlan | None = None,
    default_region: str | None = None,
) -> Breakdown:
    return price_graph(graph, catalog, usage.with_assumed(assumed_usage(plan, graph)), default_region)


def gpuinfra_side(doc: Document, label: str, catalog: Catalog, usage: Usage) -> Side:
    """Each stack of a gpuinfra report: its graph, repriced; its findings and policy results."""
    stacks: dict[str, Snapshot] = {}
    for s in doc.data.get("stacks") or []:
        name = str(s.get("stack"))
        resources = s.get("resources")
        graph = None
        if resources is not None:
            graph = Graph.of(name, _project(resources), (_resource(r) for r in resources))
        cost = price(graph, catalog, usage, parse_plan(s.get("plan"))) if graph is not None else None
        stacks[name] = Snapshot(name, graph, cost, findings_of(name, s))
    notes = tuple(
        f"{p.get('stack')}: cannot be read ({'; '.join(p.get('messages') or [])})"
        for p in doc.data.get("problems") or []
    )
    return Side(label, GPUINFRA, stacks, notes)


def findings_of(stack: str, report: Mapping[str, Any]) -> tuple[Finding, ...]:
    """Validator findings, and the policy pack's violations when the report carries them
    (`policy.violations`: policy, level mandatory/advisory, resource URN and name, message)."""
    out = [
        Finding(
            stack, "validator", str(f.get("rule")), str(f.get("level")), str(f.get("path") or ""), str(f.get("message"))
        )
        for f in report.get("findings") or []
    ]
    for v in (report.get("policy") or {}).get("violations") or []:
        if isinstance(v, dict):
            where = v.get("resource_name") or str(v.get("resource") or "").rsplit("::", 1)[-1]
            out.append(
                Finding(
                    stack,
                    "policy",
                    str(v.get("policy")),
                    str(v.get("level") or "advisory"),
                    str(where or ""),
                    str(v.get("message")),
                )
            )
    return tuple(out)


def _resource(r: Mapping[str, Any]) -> Resource:
    return Resource(
        urn=r["urn"],
        type=r["type"],
        name=r["name"],
        parent=r.get("parent"),
        provider=r.get("provider"),
        custom=r.get("custom", True),
        dependencies=tuple(r.get("dependencies") or ()),
        inputs=r.get("inputs") or {},
    )


def _project(resources: list[Mapping[str, Any]]) -> str:
    return str(resources[0]["urn"]).split("::")[1] if resources else ""


def pulumi_sides(doc: Document, catalog: Catalog, usage: Usage) -> tuple[Side, Side]:
    """Base (old states) and head (new states, with Pulumi's steps) of a pulumi preview or event log."""
    preview: PulumiPreview = (
        read_events(doc.data, str(doc.path)) if doc.kind == EVENTS else read_preview(doc.data, str(doc.path))
    )
    region = preview.config.get("aws:region")
    diagnostics = _diagnostics(preview)
    notes = (
        ()
        if preview.complete
        else (
            f"{doc.path.name}: `same` steps were left out (run `pulumi preview --json --show-sames`); totals cover the "
            "changed resources only, deltas are exact",
        )
    )
    names = sorted(preview.old.keys() | preview.new.keys())
    base = {
        n: Snapshot(
            n,
            preview.old.get(n) or Graph.of(n, "", ()),
            price(preview.old[n], catalog, usage, None, region) if n in preview.old else None,
        )
        for n in names
    }
    steps_by_stack: dict[str, dict[str, Any]] = {}
    for urn, step in preview.steps.items():
        steps_by_stack.setdefault(stack_of(urn), {})[urn] = step
    head = {
        n: Snapshot(
            n,
            preview.new.get(n) or Graph.of(n, "", ()),
            price(preview.new[n], catalog, usage, None, region) if n in preview.new else None,
            diagnostics.get(n, ()),
            steps_by_stack.get(n, {}),
        )
        for n in names
    }
    return Side("base", doc.kind, base, notes), Side("head", doc.kind, head, notes)


def _diagnostics(preview: PulumiPreview) -> dict[str, tuple[Finding, ...]]:
    out: dict[str, list[Finding]] = {}
    for d in preview.diagnostics:
        severity = str(d.get("severity", ""))
        if severity not in ("error", "warning"):
            continue
        urn = str(d.get("urn") or "")
        stack = stack_of(urn) if urn else next(iter(preview.new or preview.old), "")
        out.setdefault(stack, []).append(
            Finding(stack, "pulumi", "diagnostic", severity, urn.rsplit("::", 1)[-1], str(d.get("message", "")).strip())
        )
    return {k: tuple(v) for k, v in out.items()}


def export_side(doc: Document, label: str, catalog: Catalog, usage: Usage) -> Side:
    graphs = read_export(doc.data, str(doc.path))
    return Side(label, EXPORT, {n: Snapshot(n, g, price(g, catalog, usage)) for n, g in graphs.items()})


def side(doc: Document, label: str, catalog: Catalog, usage: Usage) -> Side:
    """One side from one document; a pulumi preview used as one side contributes its new states."""
    if doc.kind == GPUINFRA:
        return gpuinfra_side(doc, label, catalog, usage)
    if doc.kind == EXPORT:
        return export_side(doc, label, catalog, usage)
    head = pulumi_sides(doc, catalog, usage)[1]
    return head if label == "head" else Side(label, doc.kind, head.stacks, head.notes)


__all__ = [
    "EVENTS",
    "EXPORT",
    "GPUINFRA",
    "PREVIEW",
    "Document",
    "Side",
    "findings_of",
    "gpuinfra_side",
    "load_document",
    "price",
    "pulumi_sides",
    "side",
]
