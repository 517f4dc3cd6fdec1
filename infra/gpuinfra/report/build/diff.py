"""Build the diff report from a computed Diff: the only place that knows both infra/diff and the report's
shape. Matching and deltas are already done (infra/gpuinfra/diff.py); this only copies them into the model."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from gpuinfra.catalog import Catalog, staleness
from gpuinfra.graph import Graph
from gpuinfra.report.build.cost import describe
from gpuinfra.report.build.disruption import disruption
from gpuinfra.report.build.picture import picture
from gpuinfra.report.format import readable
from gpuinfra.report.model import (
    DataLossOut,
    DiffReport,
    FigureChangeOut,
    FindingChangeOut,
    InputProblem,
    MoneyChange,
    PictureOut,
    PropertyChangeOut,
    ResourceChangeOut,
    StackDiffOut,
    money_change,
)
from gpuinfra.review.diff import MISSING, PULUMI, Change, Diff, ResourceDiff, ReviewItem, StackDiff

PULUMI_URL = "https://www.pulumi.com/docs/iac/concepts/how-pulumi-works/"


KNOWN_AFTER_APPLY = "(known after apply)"


def known(value: Any, graph: Graph | None) -> Any:
    """A value as the review shows it: one the embedded engine stood in for (an id, an ARN, an autonamed name,
    a launch template's version, a looked-up image: Graph.after_apply) is known only after apply, never shown
    as if real; nor is one inside a longer text (an ARN in a policy document, a file system's DNS name in user
    data, which is then shown decoded as the table shows it)."""
    if graph is None or value is MISSING or isinstance(value, bool) or not isinstance(value, str | int):
        return value
    if str(value) in graph.after_apply:
        return KNOWN_AFTER_APPLY
    text = readable(value)
    if text is None:
        return value
    masked = graph.masked(text, KNOWN_AFTER_APPLY)
    return masked if masked != text else value


def change_out(
    c: Change, catalog: Catalog, graphs: tuple[Graph | None, Graph | None] = (None, None)
) -> PropertyChangeOut:
    source = catalog.sources.get(c.reason or "")
    before, after = known(c.before, graphs[0]), known(c.after, graphs[1])
    return PropertyChangeOut(
        path=c.path,
        before=None if before is MISSING else before,
        after=None if after is MISSING else after,
        absent_before=c.before is MISSING,
        absent_after=c.after is MISSING,
        effect=c.effect,  # type: ignore[arg-type]
        reason=c.reason,
        reason_url=source.url if source else (PULUMI_URL if c.reason == PULUMI else None),
    )


def resource_out(
    r: ResourceDiff, catalog: Catalog, graphs: tuple[Graph | None, Graph | None] = (None, None)
) -> ResourceChangeOut:
    return ResourceChangeOut(
        type=r.type,
        name=r.name,
        action=r.action,
        component=r.component,  # type: ignore[arg-type]
        changes=[change_out(c, catalog, graphs) for c in r.changes],
        monthly=money_change(r.before, r.after, r.delta),
    )


def findings_out(s: StackDiff) -> list[FindingChangeOut]:
    def out(f: ReviewItem, status: str) -> FindingChangeOut:
        return FindingChangeOut(
            stack=f.stack, source=f.source, rule=f.rule, level=f.level, where=f.where, message=f.message, status=status
        )  # type: ignore[arg-type]

    new = {f.key for f in s.new_findings}
    rows = [out(f, "new" if f.key in new else "unchanged") for f in s.head_findings]
    rows += [out(f, "resolved") for f in s.resolved_findings]
    rows += [out(f, "not-judged") for f in s.unjudged_findings]
    order = {"error": 0, "mandatory": 0, "warning": 1, "advisory": 1}
    return sorted(rows, key=lambda f: (order.get(f.level, 2), f.status != "new", f.rule, f.where))


def _delta_order(r: ResourceDiff) -> tuple[int, Decimal, str, str]:
    action = {"replace": 0, "delete": 1, "create": 2, "update": 3, "same": 4}[r.action]
    return (action, -abs(r.delta or Decimal(0)), r.type, r.name)


def monthly(x: StackDiff | Diff) -> MoneyChange:
    """A stack's or the whole review's month before and after, with the autoscaling ranges."""
    return money_change(
        x.total("before"),
        x.total("after"),
        x.delta,
        (x.total("before", "monthly_min"), x.total("before", "monthly_max")),
        (x.total("after", "monthly_min"), x.total("after", "monthly_max")),
    )


def stack_out(s: StackDiff) -> StackDiffOut:
    return StackDiffOut(
        stack=s.stack,
        status=s.status,
        counts=s.counts(),  # type: ignore[arg-type]
        monthly=monthly(s),
        findings=findings_out(s),
        unpriced_after=[describe(r, line) for r, line in s.after.unpriced()] if s.after else [],
        doubtful_after=[describe(r, line) for r, line in s.after.flagged()] if s.after else [],
        figures=[FigureChangeOut(name=f.name, unit=f.unit, before=f.before, after=f.after) for f in s.figures],  # type: ignore[arg-type]
        not_judged=s.not_judged,
        partial=any(b is not None and b.partial for b in (s.before, s.after)),
    )


def stack_picture(s: StackDiff) -> PictureOut | None:
    """The head's parts with the changed ones marked (the base's, all deleted, for a removed stack)."""
    base, head = s.graphs
    if s.status == "unchanged" or (head or base) is None:
        return None
    actions = {f"{r.type}::{r.name}": r.action for r in s.resources}
    return picture(head, actions, base) if head is not None else picture(base, actions)  # type: ignore[arg-type]


def diff_report(
    diff: Diff, base: str, head: str, catalog: Catalog, notes: Iterable[str] = (), problems: Iterable[InputProblem] = ()
) -> DiffReport:
    stacks = []
    for s in diff.stacks:
        out = stack_out(s)
        out.resources = [resource_out(r, catalog, s.graphs) for r in sorted(s.resources, key=_delta_order)]
        out.picture = stack_picture(s)
        stacks.append(out)
    dates = [d for s in diff.stacks for b in (s.before, s.after) if b is not None for d in (b.as_of() or ())]
    head_dates = [d for s in diff.stacks if s.after is not None for d in (s.after.as_of() or ())]
    stale = staleness.stale_message(min(head_dates) if head_dates else None)
    return DiffReport(
        base=base,
        head=head,
        monthly=monthly(diff),
        prices_as_of=min(dates) if dates else None,
        prices_as_of_newest=max(dates) if dates else None,
        losses=[
            DataLossOut(stack=x.stack, type=x.type, name=x.name, action=x.action, lost=x.lost, protected=x.protected)  # type: ignore[arg-type]
            for x in diff.losses
        ],
        disruption=disruption([r for s in stacks for r in s.resources], {(x.type, x.name) for x in diff.losses}),
        stacks=stacks,
        notes=[*notes, *([f"⚠️ {stale}: {staleness.HINT}"] if stale else [])],
        problems=list(problems),
    )


__all__ = ["diff_report", "stack_out"]
