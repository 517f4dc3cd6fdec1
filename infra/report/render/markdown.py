"""The Markdown renderer (the pull-request comment): `render(report) -> str` for a preview or validate report, a
cost report and a diff report, each written as a Jinja2 template (infra/report/templates/)."""

from __future__ import annotations

from functools import singledispatch

from infra.report.format import money, signed_money
from infra.report.model import CostReport, DiffReport, Report
from infra.report.render.parts import MARK, MARKER, effect_text, icon, pair, percent
from infra.report.sections import as_of_text, cost_blocks, total_text
from infra.report.templates import render as template


@singledispatch
def render(report: object) -> str:
    raise TypeError(f"no Markdown renderer for {type(report).__name__}")


@render.register
def render_markdown(report: Report) -> str:
    return template("report.md.j2", report=report)


@render.register
def render_cost_markdown(report: CostReport) -> str:
    return template(
        "cost.md.j2", report=report, blocks=cost_blocks(report), money=money, total=total_text, as_of=as_of_text
    )


@render.register
def render_diff_markdown(report: DiffReport) -> str:
    return template(
        "diff.md.j2",
        report=report,
        marker=MARKER,
        money=money,
        signed=signed_money,
        percent=percent,
        pair=pair,
        effect=effect_text,
        icon=icon,
        mark=MARK,
        as_of=as_of_text,
        unpriced=sum(len(s.unpriced_after) for s in report.stacks),
    )


__all__ = ["render", "render_cost_markdown", "render_diff_markdown", "render_markdown"]
