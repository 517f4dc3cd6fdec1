"""Inputs of `gpuinfra cost` and `gpuinfra diff`: a document's kind is read from its shape, then each stack
becomes a priced Snapshot (graph, cost, findings, Pulumi steps).

Kinds: a `gpuinfra preview --format json` report; a `pulumi preview --json` digest (old and new states, so one
file is a whole review); a `pulumi stack export` (what is deployed: a base side); an engine event log.
Both sides are priced with the current catalog and the same usage, so a delta shows what the change costs,
not how prices moved.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal, DecimalException
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from gpuinfra.catalog import Catalog
from gpuinfra.cost import Breakdown, Usage, assumed_usage, price_graph
from gpuinfra.errors import InputError, format_path
from gpuinfra.graph import Graph, Resource
from gpuinfra.graph.readers import PulumiPreview, read_events, read_export, read_preview, stack_of
from gpuinfra.plan import AnyPlan, parse_plan
from gpuinfra.plan.figures import plan_figures
from gpuinfra.review.diff import ReviewItem, Snapshot
from gpuinfra.review.items import read_findings, review_items
from gpuinfra.spec import shown
from gpuinfra.spec.files import loads_json, read_text

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
    unreadable: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Stacks the side names but could not read (stack -> why): present, with no graph and unknown money."""


@dataclass(frozen=True)
class Document:
    path: Path
    kind: str
    data: Any = field(repr=False)


MAX_DOCUMENT_BYTES = 512 * 1024 * 1024
"""A review runner reads what a pull request produced: bounded, like stack files."""
DOCUMENT_HINT = (
    "give a JSON document: `gpuinfra preview --format json`, `pulumi preview --json` or `pulumi stack export`"
)
READ_ERRORS = (KeyError, IndexError, TypeError, AttributeError, ValueError)
"""What a reader raises on a document of the right kind but the wrong shape."""


def load_document(path: Path, own: bool = False) -> Document:
    """Read a JSON document (or JSON-lines event log), bounded like every file gpuinfra reads
    (gpuinfra.spec.files), and tell its kind from its shape. `own`: a document the base revision's own code
    wrote for `diff --base-ref` into this process's temporary folder (a program this review runs anyway): read by
    orjson, without the hostile-input scan of every bracket, which took seconds on a 200-stack preview; the same
    values for any document gpuinfra writes (its JSON encoder is orjson), and read as any other when orjson
    refuses it."""
    text = read_text(path, "the document", MAX_DOCUMENT_BYTES, DOCUMENT_HINT)
    if own:
        import orjson

        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
        else:
            if isinstance(data, dict) and "stacks" in data and "command" in data:
                return Document(path, GPUINFRA, gpuinfra_report(data, path))
    try:
        data = loads_json(text, path, "the document", DOCUMENT_HINT)
    except ValueError as first:  # not one JSON value: perhaps an event log, one JSON object per line
        try:
            lines = [
                loads_json(line, path, "the document", DOCUMENT_HINT) for line in text.splitlines() if line.strip()
            ]
        except ValueError:
            where: int | None = getattr(first, "lineno", None)
            reason = getattr(first, "msg", "not JSON")
            raise InputError.single(f"not JSON: {reason}", file=path, line=where, hint=DOCUMENT_HINT) from None
        if lines and all(isinstance(e, dict) and "sequence" in e for e in lines):
            return Document(path, EVENTS, lines)
        raise InputError.single("not JSON", file=path, hint=DOCUMENT_HINT) from None
    if isinstance(data, dict):
        if "stacks" in data and "command" in data:
            return Document(path, GPUINFRA, gpuinfra_report(data, path))
        if "steps" in data or "changeSummary" in data:
            return Document(path, PREVIEW, data)
        if "deployment" in data:
            return Document(path, EXPORT, data)
    keys = ", ".join(sorted(data)[:8]) if isinstance(data, dict) else type(data).__name__
    raise InputError.single(
        f"not a gpuinfra preview, pulumi preview --json, pulumi stack export or engine event log (top level: {keys})",
        file=path,
        hint="produce one with `gpuinfra preview --format json` or `pulumi preview --json`",
    )


class _Shape(BaseModel):
    """The parts of a gpuinfra report `diff` and `cost` read; fields they do not read are ignored, so a report
    of another gpuinfra version with added fields still reads."""

    model_config = ConfigDict(extra="ignore")


class StackDoc(_Shape):
    stack: str
    resources: list[Resource] | None = None
    """The report's records read back into the graph's own (extra fields of another version ignored)."""
    findings: list[dict[str, Any]] = []
    policy: dict[str, Any] | None = None
    preflight: list[dict[str, Any]] | None = None
    plan: dict[str, Any] | None = None


class ProblemDoc(_Shape):
    stack: str
    messages: list[str] = []


class ReportDoc(_Shape):
    version: Literal[1]
    command: str
    stacks: list[StackDoc]
    problems: list[ProblemDoc] = []


def gpuinfra_report(data: dict[str, Any], path: Path) -> ReportDoc:
    """A gpuinfra report checked against the shape `diff` and `cost` read; a `validate` report has no
    resources to compare, so it is refused rather than compared as empty."""
    if data.get("version") != 1:
        raise InputError.single(
            f"gpuinfra report version {shown(data.get('version'))} is not supported (expected 1)",
            file=path,
            hint="make the document with this gpuinfra's `preview --format json`",
        )
    try:
        report = ReportDoc.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = format_path(tuple(first["loc"]))
        raise InputError.single(
            f"not a well-formed gpuinfra report: {where}: {first['msg']}",
            file=path,
            hint="make the document with `gpuinfra preview --format json`",
        ) from None
    if report.command != "preview":
        raise InputError.single(
            f"a gpuinfra {shown(report.command)} report has no resources to compare or price",
            file=path,
            hint="make the document with `gpuinfra preview --format json`",
        )
    return report


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
    report: ReportDoc = doc.data
    stacks: dict[str, Snapshot] = {}
    for s in report.stacks:
        graph = None
        if s.resources is not None:
            graph = Graph.of(s.stack, _project(s.resources), s.resources)
        plan = parse_plan(s.plan)
        cost = price(graph, catalog, usage, plan) if graph is not None else None
        stacks[s.stack] = Snapshot(
            s.stack, graph, cost, findings_of(s.stack, s.model_dump()), figures=plan_figures(plan)
        )
    unreadable = {p.stack: tuple(p.messages) for p in report.problems}
    for name in unreadable:
        stacks.setdefault(name, Snapshot(name, None))
    notes = tuple(f"{label} {p.stack}: cannot be read ({'; '.join(p.messages)})" for p in report.problems)
    return Side(label, GPUINFRA, stacks, notes, unreadable)


def findings_of(stack: str, report: Mapping[str, Any]) -> tuple[ReviewItem, ...]:
    """A stored report's findings, read back (review/items.py), as review items."""
    return review_items(stack, read_findings(report))


def _project(resources: list[Resource]) -> str:
    return resources[0].urn.split("::")[1] if resources and resources[0].urn.count("::") >= 1 else ""


def pulumi_sides(doc: Document, catalog: Catalog, usage: Usage) -> tuple[Side, Side]:
    """Base (old states) and head (new states, with Pulumi's steps) of a pulumi preview or event log."""
    return readable(doc, lambda: _priced_pair(doc, catalog, usage))


def _priced_pair(doc: Document, catalog: Catalog, usage: Usage) -> tuple[Side, Side]:
    try:
        base, head = _pulumi_sides(doc, catalog, usage)
    except DecimalException:
        raise _too_large(doc) from None
    return priced_in_range(base, doc), priced_in_range(head, doc)


def _pulumi_sides(doc: Document, catalog: Catalog, usage: Usage) -> tuple[Side, Side]:
    if doc.kind == EVENTS:
        from gpuinfra.pulumi.events import checked_events

        checked_events(doc.data, doc.path)
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
            price(preview.old.get(n) or Graph.of(n, "", ()), catalog, usage, None, region),
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
            price(preview.new.get(n) or Graph.of(n, "", ()), catalog, usage, None, region),
            diagnostics.get(n, ()),
            steps_by_stack.get(n, {}),
        )
        for n in names
    }
    return Side("base", doc.kind, base, notes), Side("head", doc.kind, head, notes)


def _diagnostics(preview: PulumiPreview) -> dict[str, tuple[ReviewItem, ...]]:
    out: dict[str, list[ReviewItem]] = {}
    for d in preview.diagnostics:
        severity = str(d.get("severity", ""))
        if severity not in ("error", "warning"):
            continue
        urn = str(d.get("urn") or "")
        stack = stack_of(urn) if urn else next(iter(preview.new or preview.old), "")
        out.setdefault(stack, []).append(
            ReviewItem(
                stack, "pulumi", "diagnostic", severity, urn.rsplit("::", 1)[-1], str(d.get("message", "")).strip()
            )
        )
    return {k: tuple(v) for k, v in out.items()}


def export_side(doc: Document, label: str, catalog: Catalog, usage: Usage) -> Side:
    graphs = read_export(doc.data, str(doc.path))
    return Side(label, EXPORT, {n: Snapshot(n, g, price(g, catalog, usage)) for n, g in graphs.items()})


def side(doc: Document, label: str, catalog: Catalog, usage: Usage) -> Side:
    """One side from one document; a pulumi preview used as one side contributes its new states."""
    if doc.kind == GPUINFRA:
        return priced(doc, lambda: gpuinfra_side(doc, label, catalog, usage))
    if doc.kind == EXPORT:
        return priced(doc, lambda: readable(doc, lambda: export_side(doc, label, catalog, usage)))
    head = pulumi_sides(doc, catalog, usage)[1]
    return head if label == "head" else Side(label, doc.kind, head.stacks, head.notes)


MAX_MONTHLY = Decimal(10) ** 15
"""A stack priced past a quadrillion dollars a month was priced from a quantity out of range (a storage capacity of
1e29 GiB): refused with the document named, before the report formats money its 28 digits cannot hold."""


def priced(doc: Document, make: Callable[[], Side]) -> Side:
    """`make()`, a side priced from `doc`, with a quantity too large to price (Decimal's 28 digits, which the
    pricers quantize to) reported as an input error naming the document, as is a total past MAX_MONTHLY."""
    try:
        return priced_in_range(make(), doc)
    except DecimalException:
        raise _too_large(doc) from None


def _too_large(doc: Document) -> InputError:
    return InputError.single(
        "a quantity in the document is too large to price (past Decimal's 28 digits)",
        file=doc.path,
        hint="give the document as gpuinfra or the Pulumi CLI wrote it",
    )


def priced_in_range(side: Side, doc: Document) -> Side:
    for name, snap in side.stacks.items():
        cost = snap.cost
        totals = [] if cost is None else [v for v in (cost.monthly, cost.monthly_max) if v is not None]
        if any(not v.is_finite() or abs(v) > MAX_MONTHLY for v in totals):
            raise InputError.single(
                f"stack {name} prices to more than $10^15 a month: a quantity in the document is out of range",
                file=doc.path,
                hint="give the document as gpuinfra or the Pulumi CLI wrote it",
            )
    return side


def is_default_provider(r: Resource) -> bool:
    """A provider the engine made for resources without an explicit one (`default`, `default_6_63_0`)."""
    return r.is_provider and r.name.split("_", 1)[0] == "default"


def unstepped_defaults(base: Side, head: Side) -> Side:
    """The base without the default providers a `pulumi preview --json` or event log head leaves out: the engine
    emits no step for a default provider (shared/fixtures/pulumi/FORMAT.md), so their absence from the head is
    not a deletion. Providers the head does carry are kept, and compared."""
    if head.kind not in (PREVIEW, EVENTS):
        return base
    stacks = dict(base.stacks)
    dropped: list[str] = []
    for name, snap in base.stacks.items():
        head_snap = head.stacks.get(name)
        head_graph = head_snap.graph if head_snap else None
        kept_keys = {r.key for r in (head_graph.resources if head_graph else ())}
        if snap.graph is None:
            continue
        gone = [r for r in snap.graph.resources if is_default_provider(r) and r.key not in kept_keys]
        if gone:
            rest = [r for r in snap.graph.resources if r not in gone]
            stacks[name] = replace(snap, graph=Graph.of(snap.graph.stack, snap.graph.project, rest))
            dropped += [f"{name}: {r.name}" for r in gone]
    if not dropped:
        return base
    note = f"default providers not compared (pulumi preview emits no step for them): {', '.join(dropped)}"
    return replace(base, stacks=stacks, notes=(*base.notes, note))


T = TypeVar("T")


def readable(doc: Document, read: Callable[[], T]) -> T:
    """`read()`, with a document of the right kind but the wrong shape reported as an input error naming the
    file (the readers follow Pulumi's format: shared/fixtures/pulumi/FORMAT.md)."""
    try:
        return read()
    except InputError as exc:  # the readers name what is missing; say what to give instead
        raise InputError([replace(p, hint=p.hint or DOCUMENT_HINT) for p in exc.problems]) from None
    except READ_ERRORS as exc:
        raise InputError.single(
            f"not a well-formed {doc.kind} document: {type(exc).__name__}: {shown(str(exc))}",
            file=doc.path,
            hint="give the file exactly as the Pulumi CLI wrote it",
        ) from None


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
    "readable",
    "side",
    "unstepped_defaults",
]
