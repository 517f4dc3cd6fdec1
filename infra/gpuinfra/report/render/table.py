"""The terminal renderer: `render(report) -> str` for a preview or validate report (findings, the plan
summary, resources by component), a cost report and a diff report. Stacks that cannot be read are not in
it: the CLI writes those problems to stderr (the Markdown and JSON documents carry them)."""

from __future__ import annotations

import io
from contextvars import ContextVar
from functools import singledispatch

from rich.console import Console
from rich.table import Table

from gpuinfra.report.format import figure, money, signed_money
from gpuinfra.report.model import (
    CatalogReport,
    CostReport,
    DiffReport,
    FindingOut,
    PolicyReportOut,
    PreflightOut,
    Report,
    ResourceChangeOut,
    Section,
    StackDiffOut,
    StackReport,
)
from gpuinfra.report.render.parts import MARK, effect_text, headline, loss_text, pair
from gpuinfra.report.sections import as_of_text, catalog_blocks, cost_blocks, total_text

WIDTH: ContextVar[int] = ContextVar("table_width", default=140)
"""Columns the tables fill: 140 for files, pipes and tests (the same input gives the same text); the CLI sets a
terminal's own width when the report goes to one."""

LEVEL_MARK = {"error": "ERROR", "warning": "warn", "info": "info"}
POLICY_MARK = {"mandatory": "MANDATORY", "advisory": "advisory"}


@singledispatch
def render(report: object) -> str:
    raise TypeError(f"no table renderer for {type(report).__name__}")


@render.register
def render_table(report: Report, width: int | None = None) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width or WIDTH.get(), force_terminal=False, color_system=None, highlight=False)
    for stack in report.stacks:
        _stack(console, stack)
    if report.cost is not None and len(report.stacks) > 1:
        total = report.cost
        console.print(
            f"total cost {'at least ' if total.partial else ''}{money(total.monthly_usd)}/month over "
            f"{len(report.stacks)} stacks{' (partial: a price is unknown)' if total.partial else ''}, "
            f"prices as of {total.prices_as_of} to {total.prices_as_of_newest}",
            markup=False,
        )
    return buffer.getvalue()


@render.register
def render_cost_table(report: CostReport) -> str:
    text = render_sections(cost_blocks(report))
    lines = []
    if report.total is not None:
        t = report.total
        lines.append(
            f"total {total_text(t.monthly_usd, t.monthly_min_usd, t.monthly_max_usd, t.partial)} over "
            f"{len(report.stacks)} stacks; {as_of_text(t.prices_as_of, t.prices_as_of_newest)}"
        )
    return text + "".join(line + "\n" for line in lines)


@render.register
def render_catalog_table(report: CatalogReport) -> str:
    return render_sections(catalog_blocks(report))


@render.register
def render_diff_table(report: DiffReport) -> str:
    out = [
        f"gpuinfra diff  base: {report.base}  head: {report.head}",
        *(f"STATEFUL DATA: {loss_text(loss)}" for loss in report.losses),
        headline(report),
        f"  head range {money(report.monthly.after.monthly_min_usd)} to {money(report.monthly.after.monthly_max_usd)}; "
        f"{as_of_text(report.prices_as_of, report.prices_as_of_newest)}",
    ]
    out += [f"  note: {n}" for n in report.notes]
    for s in report.stacks:
        out += _diff_stack(s)
    return "\n".join(out) + "\n"


def _diff_stack(s: StackDiffOut) -> list[str]:
    counts = ", ".join(f"{n} {a}" for a, n in sorted(s.counts.items()))
    out = [
        "",
        f"== {s.stack} ({s.status}) {signed_money(s.monthly.delta_usd)}/month: "
        f"{money(s.monthly.before.monthly_usd)} -> {money(s.monthly.after.monthly_usd)}"
        + (f"  [{counts}]" if counts else "")
        + ("  (partial: a price is unknown)" if s.partial else ""),
    ]
    if s.not_judged:
        out.append(f"  NOT JUDGED: {s.not_judged}; the base's findings below are unknown, not resolved")
    for f in s.findings:
        if f.status != "unchanged" or f.level in ("error", "mandatory"):
            out.append(f"  {f.status:9} {f.level:9} {f.rule} {f.where}: {f.message}")
    out += [f"  plan {g.name}: {figure(g.unit, g.before)} -> {figure(g.unit, g.after)}" for g in s.figures]
    for r in s.resources:
        out += _diff_resource(r)
    if s.status != "unchanged":  # an unchanged stack's unpriced lines are the same on both sides: not the change's
        out += [f"  unpriced: {u}" for u in s.unpriced_after[:10]]
    return out


def _diff_resource(r: ResourceChangeOut) -> list[str]:
    cost = ""
    if r.monthly.delta_usd is not None and r.monthly.delta_usd != 0:
        cost = f"  {signed_money(r.monthly.delta_usd)}/month"
    elif r.monthly.delta_usd is None and r.action != "delete" and r.monthly.after.monthly_usd is None:
        cost = "  cost unknown"
    out = [f"{MARK[r.action]:>4} {r.type} {r.name} ({r.action}){cost}"]
    for c in r.changes:
        tail = "" if c.effect == "update" else f"  [{effect_text(c)}{': ' + c.reason if c.reason else ''}]"
        before, after = pair(c)
        out.append(f"       {c.path}: {before} -> {after}{tail}")
    return out


def render_sections(blocks: list[tuple[str, list[Section]]], width: int | None = None) -> str:
    """Titled groups of sections (e.g. one per stack), for reports that are not a Report (cost, diff)."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width or WIDTH.get(), force_terminal=False, color_system=None, highlight=False)
    for title, sections in blocks:
        console.rule(title, characters="=")
        for section in sections:
            _section(console, section)
    return buffer.getvalue()


def _stack(console: Console, stack: StackReport) -> None:
    console.rule(f"{stack.stack}  ({stack.workload}, account {stack.account})", characters="=")
    _findings(console, stack.findings)
    if stack.preflight is not None:
        _preflight(console, stack.preflight)
    if stack.policy is not None:
        _policies(console, stack.policy)
    for section in stack.summary:
        _section(console, section)


def _findings(console: Console, findings: list[FindingOut]) -> None:
    if not findings:
        console.print("findings: none")
        return
    table = Table(title="Findings", title_justify="left", show_lines=False, expand=False)
    for col in ("level", "rule", "where", "message"):
        table.add_column(col, overflow="fold")
    for f in findings:
        where = f"{f.file}:{f.line}" if f.line else (f.file or "")
        message = f.message + (f"\nhint: {f.hint}" if f.hint else "")
        table.add_row(LEVEL_MARK[f.level], f.rule, f"{where}\n{f.path}" if f.path else where, message)
    console.print(table)


def _preflight(console: Console, found: list[PreflightOut]) -> None:
    errors = sum(1 for f in found if f.level == "error")
    console.print(f"preflight: {errors} refused by AWS or Kubernetes, {len(found) - errors} notes", markup=False)
    if not found:
        return
    table = Table(title="Preflight", title_justify="left")
    for col in ("level", "rule", "resource", "value", "message"):
        table.add_column(col, overflow="fold")
    for f in found:
        where = f"{f.name}\n{f.path}" if f.path else f.name
        table.add_row(LEVEL_MARK[f.level], f.rule, where, f.value, f"{f.message}\nsource: {f.source}")
    console.print(table)


def _policies(console: Console, policy: PolicyReportOut) -> None:
    console.print(f"policies ({policy.pack} pack): {policy_tally(policy)}", markup=False)
    if not policy.violations:
        return
    table = Table(title="Policy violations", title_justify="left")
    for col in ("level", "policy", "resource", "message"):
        table.add_column(col, overflow="fold")
    for v in policy.violations:
        table.add_row(POLICY_MARK[v.level], v.policy, v.resource_name or "(stack)", v.message)
    console.print(table)


def policy_tally(policy: PolicyReportOut) -> str:
    """'21 passed, 1 failed, 4 not applicable': every status that occurs, in a fixed order."""
    order = ("passed", "failed", "not-applicable", "disabled")
    counts = {s: sum(1 for p in policy.policies if p.status == s) for s in order}
    return ", ".join(f"{n} {s.replace('-', ' ')}" for s, n in counts.items() if n)


def _section(console: Console, section: Section) -> None:
    if section.columns:
        table = Table(title=section.title, title_justify="left")
        for col in section.columns:
            table.add_column(col, overflow="fold")
        for row in section.rows:
            table.add_row(*row)
        console.print(table)
    else:
        console.print(f"[bold]{section.title}[/bold]")
        for key, value in section.rows:
            console.print(f"  {key}: {value}", markup=False)
    for note in section.notes:
        console.print(f"  {note}", markup=False)


__all__ = [
    "WIDTH",
    "policy_tally",
    "render",
    "render_catalog_table",
    "render_cost_table",
    "render_diff_table",
    "render_sections",
    "render_table",
]
