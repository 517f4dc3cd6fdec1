"""Terminal renderer: findings, then the plan summary, then (preview) resources by component."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table

from .format import money
from .model import FindingOut, PolicyReportOut, Report, Section, StackReport

LEVEL_MARK = {"error": "ERROR", "warning": "warn", "info": "info"}
POLICY_MARK = {"mandatory": "MANDATORY", "advisory": "advisory"}


def render_table(report: Report, width: int = 140) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=False, color_system=None, highlight=False)
    for problem in report.problems:
        console.print(f"[bold]{problem.stack}[/bold]: cannot be read")
        for message in problem.messages:
            console.print(f"  {message}", markup=False)
    for stack in report.stacks:
        _stack(console, stack)
    if report.cost is not None and len(report.stacks) > 1:
        total = report.cost
        console.print(
            f"total cost {money(total.monthly_usd)}/month over {len(report.stacks)} stacks, "
            f"prices as of {total.prices_as_of} to {total.prices_as_of_newest}",
            markup=False,
        )
    return buffer.getvalue()


def render_sections(blocks: list[tuple[str, list[Section]]], width: int = 140) -> str:
    """Titled groups of sections (e.g. one per stack), for reports that are not a Report (cost, diff)."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=False, color_system=None, highlight=False)
    for title, sections in blocks:
        console.rule(title, characters="=")
        for section in sections:
            _section(console, section)
    return buffer.getvalue()


def _stack(console: Console, stack: StackReport) -> None:
    console.rule(f"{stack.stack}  ({stack.workload}, account {stack.account})", characters="=")
    _findings(console, stack.findings)
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


__all__ = ["policy_tally", "render_sections", "render_table"]
