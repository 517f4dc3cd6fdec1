"""Read what the real Pulumi CLI writes into the graph shape: `pulumi preview --json` (a PreviewDigest),
`pulumi stack export` (a deployment) and the engine event log (one JSON event per line).

Schema: shared/fixtures/pulumi/FORMAT.md (pulumi/pulumi pkg/display/json.go, apitype/core.go). A preview
gives two graphs, the old states and the new states of its steps, plus Pulumi's own verdict per resource
(op, diffReasons, replaceReasons); an export gives one graph (what is deployed). Secrets become "[secret]",
unknowns stay the sentinel, `__defaults` bookkeeping is dropped, integral floats become ints (as the engine
records them), so graphs from Pulumi and from gpuinfra's engine compare property by property.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gpuinfra.errors import InputError, Problem
from gpuinfra.graph import Graph, Resource
from gpuinfra.graph.values import plain

NON_LOGICAL_OPS = frozenset(
    {
        "create-replacement",
        "delete-replaced",
        "read-replacement",
        "discard-replaced",
        "remove-pending-replace",
        "import-replacement",
    }
)
"""Replacement bookkeeping steps; a replacement is shown by its logical `replace` step."""
NO_OLD = frozenset({"create", "import", "read"})
NO_NEW = frozenset({"delete", "discard"})


@dataclass(frozen=True, slots=True)
class Step:
    """Pulumi's verdict on one resource."""

    op: str
    urn: str
    type: str
    diff_reasons: tuple[str, ...] = ()
    replace_reasons: tuple[str, ...] = ()
    detailed: dict[str, str] = field(default_factory=dict)
    """Property path -> diff kind (add, update, delete, and their -replace forms)."""


@dataclass(frozen=True)
class PulumiPreview:
    """Both sides of a `pulumi preview`: old and new graphs per stack, the steps, diagnostics."""

    old: dict[str, Graph]
    new: dict[str, Graph]
    steps: dict[str, Step]
    """By URN."""
    diagnostics: list[dict[str, Any]]
    config: dict[str, str]
    complete: bool
    """False when `same` steps were left out (no --show-sames): the graphs hold changed resources only."""


def provider_urn(reference: str | None) -> str | None:
    """A provider reference is '<provider urn>::<id>'; the graph keeps the URN."""
    if not reference:
        return None
    urn, sep, _ = reference.rpartition("::")
    return urn if sep and urn.count("::") >= 3 else reference


def stack_of(urn: str) -> str:
    return urn.removeprefix("urn:pulumi:").split("::", 1)[0]


def project_of(urn: str) -> str:
    parts = urn.split("::")
    return parts[1] if len(parts) > 1 else ""


def resource(state: dict[str, Any], provider: str | None = None) -> Resource:
    """A ResourceV3 (state, export entry, or an event's old/new) as a graph resource."""
    urn = str(state["urn"])
    return Resource(
        urn=urn,
        type=str(state.get("type") or urn.split("::")[2].rsplit("$", 1)[-1]),
        name=urn.rsplit("::", 1)[-1],
        parent=state.get("parent") or None,
        provider=provider_urn(state.get("provider") or provider),
        custom=bool(state.get("custom", True)),
        dependencies=tuple(state.get("dependencies") or ()),
        inputs=plain(state.get("inputs") or {}),
        protect=bool(state.get("protect")),
        retain_on_delete=bool(state.get("retainOnDelete")),
    )


def graphs(resources: Iterable[Resource]) -> dict[str, Graph]:
    by_stack: dict[str, list[Resource]] = {}
    for r in resources:
        by_stack.setdefault(stack_of(r.urn), []).append(r)
    return {stack: Graph.of(stack, project_of(rs[0].urn), rs) for stack, rs in by_stack.items()}


def read_export(doc: dict[str, Any], where: str) -> dict[str, Graph]:
    """`pulumi stack export`: the deployed resources (pending deletes left out)."""
    deployment = doc.get("deployment")
    if not isinstance(deployment, dict) or not isinstance(deployment.get("resources", []), list):
        raise InputError([Problem(f"{where}: not a stack export: 'deployment.resources' is missing")])
    states = [r for r in deployment.get("resources") or [] if isinstance(r, dict) and "urn" in r]
    return graphs(resource(s) for s in states if not s.get("delete"))


@dataclass(frozen=True)
class StepKeys:
    """Where a format writes a step's fields: the preview digest (StepEventMetadata in apitype) and the engine event
    log (resourcePreEvent's metadata) carry the same step under different names."""

    old: str
    new: str
    replace: str
    diff: str
    kind: str


DIGEST_KEYS = StepKeys("oldState", "newState", "replaceReasons", "diffReasons", "kind")
EVENT_KEYS = StepKeys("old", "new", "keys", "diffs", "diffKind")


def read_preview(doc: dict[str, Any], where: str) -> PulumiPreview:
    """`pulumi preview --json`: old and new states of every step."""
    steps = doc.get("steps")
    if not isinstance(steps, list):
        raise InputError([Problem(f"{where}: not a pulumi preview: 'steps' is missing")])
    return _preview(
        steps,
        DIGEST_KEYS,
        diagnostics=[d for d in doc.get("diagnostics") or [] if isinstance(d, dict)],
        config={str(k): str(v) for k, v in (doc.get("config") or {}).items()},
        summary=doc.get("changeSummary") or {},
    )


def read_events(lines: list[dict[str, Any]], where: str) -> PulumiPreview:
    """The engine event log: resourcePreEvent metadata carry the same steps (keys/diffs/diffKind names)."""
    metas = [e["resourcePreEvent"].get("metadata") or {} for e in lines if isinstance(e.get("resourcePreEvent"), dict)]
    config = next((e["preludeEvent"].get("config") or {} for e in lines if isinstance(e.get("preludeEvent"), dict)), {})
    summary = next(
        (e["summaryEvent"].get("resourceChanges") or {} for e in lines if isinstance(e.get("summaryEvent"), dict)), {}
    )
    if not metas:
        raise InputError([Problem(f"{where}: no resourcePreEvent in the event log")])
    return _preview(
        metas, EVENT_KEYS, diagnostics=[], config={str(k): str(v) for k, v in config.items()}, summary=summary
    )


def _preview(
    raw_steps: Iterable[Any],
    keys: StepKeys,
    diagnostics: list[dict[str, Any]],
    config: dict[str, str],
    summary: dict[str, Any],
) -> PulumiPreview:
    """The steps (each a dict with a urn; others skipped) read by the format's `keys`, as two graphs and Pulumi's
    verdicts."""
    old: list[Resource] = []
    new: list[Resource] = []
    steps: dict[str, Step] = {}
    for raw in raw_steps:
        if not isinstance(raw, dict) or "urn" not in raw:
            continue
        op = raw.get("op", "")
        if op in NON_LOGICAL_OPS:
            continue
        old_state, new_state = raw.get(keys.old), raw.get(keys.new)
        detailed = {k: (v or {}).get(keys.kind, "") for k, v in (raw.get("detailedDiff") or {}).items()}
        urn = str(raw["urn"])
        type_ = str(raw.get("type") or (new_state or old_state or {}).get("type") or urn.split("::")[2])
        provider = raw.get("provider")
        if isinstance(old_state, dict) and old_state.get("urn") and op not in NO_OLD:
            old.append(resource(old_state, provider))
        if isinstance(new_state, dict) and new_state.get("urn") and op not in NO_NEW:
            new.append(resource(new_state, provider))
        replace, diff = raw.get(keys.replace), raw.get(keys.diff)
        steps[urn] = Step(op, urn, type_, tuple(diff or ()), tuple(replace or ()), detailed)
    sames = sum(1 for s in steps.values() if s.op == "same")
    complete = not (isinstance(summary.get("same"), int) and summary["same"] > sames)
    return PulumiPreview(graphs(old), graphs(new), steps, diagnostics, config, complete)


__all__ = [
    "PulumiPreview",
    "Step",
    "graphs",
    "provider_urn",
    "read_events",
    "read_export",
    "read_preview",
    "resource",
    "stack_of",
]
