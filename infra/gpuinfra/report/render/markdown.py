"""The Markdown renderer (the pull-request comment): `render(report) -> str` for a preview or validate report, a
cost report and a diff report, each written as a Jinja2 template (templates/report/)."""

from __future__ import annotations

from functools import singledispatch

from gpuinfra.report.format import figure, markdown_text, money, signed_money
from gpuinfra.report.model import CatalogReport, CostReport, DiffReport, Report
from gpuinfra.report.render.mermaid import flowchart
from gpuinfra.report.render.parts import (
    MARK,
    MARKER,
    counts,
    effect_text,
    fold,
    icon,
    nothing,
    pair,
    percent,
    tally,
    verdict,
)
from gpuinfra.report.sections import as_of_text, catalog_blocks, cost_blocks, total_text
from gpuinfra.report.templates import render as template


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
def render_catalog_markdown(report: CatalogReport) -> str:
    return template("catalog.md.j2", report=report, blocks=catalog_blocks(report))


COMMENT_LIMIT = 65_536
"""GitHub refuses an issue or pull-request comment body longer than this (characters); Infracost caps its
comment the same way (internal/output/markdown.go, MaxMessageChars)."""
COMMENT_BUDGET = COMMENT_LIMIT - 1_024
"""What the comment may use: room left for the workflow's own lines around it."""


@render.register
def render_diff_markdown(report: DiffReport) -> str:
    """The pull-request comment. Past the budget it keeps the totals, every finding and the resource changes
    with the largest cost effect first (the report's order), as many as fit, and says what it left out."""
    rows = [len(s.resources) for s in report.stacks]
    full = _diff_markdown(report, rows, listed=max([0, *(len(s.unpriced_after) for s in report.stacks)]))
    if len(full) <= COMMENT_BUDGET:
        return full
    total = sum(rows)
    low, high = 0, total
    while low < high:  # the most resource rows that fit
        middle = (low + high + 1) // 2
        if len(_diff_markdown(report, _spread(rows, middle), listed=10)) <= COMMENT_BUDGET:
            low = middle
        else:
            high = middle - 1
    return _capped(_diff_markdown(report, _spread(rows, low), listed=10))


CUT_MARKER = "gpuinfra-comment-cut"
"""An HTML comment a cut comment carries: the review workflow `gpuinfra init` writes looks for it and then uploads
the whole report as the artifact REVIEW_ARTIFACT (templates/init/repo-workflow.yaml.j2; tests/report/test_comment.py
holds the two in step)."""
REVIEW_ARTIFACT = "gpuinfra-review"
CUT = (
    "\n\n<!-- " + CUT_MARKER + " -->\n*The comment was cut at GitHub's {limit:,}-character limit. The full report "
    "(`gpuinfra diff --format json`) is the workflow run's `" + REVIEW_ARTIFACT + "` artifact.*\n"
)


def _capped(text: str) -> str:
    """The last resort when even the totals and findings do not fit: cut, and say where the rest is."""
    if len(text) <= COMMENT_BUDGET:
        return text
    tail = CUT.format(limit=COMMENT_LIMIT)
    return text[: COMMENT_BUDGET - len(tail)] + tail


def _spread(rows: list[int], keep: int) -> list[int]:
    """`keep` rows over the stacks in report order (each stack's first rows are its largest changes)."""
    out = []
    for n in rows:
        out.append(min(n, keep))
        keep -= out[-1]
    return out


def _diff_markdown(report: DiffReport, rows: list[int], listed: int) -> str:
    kept = {id(s): s.resources[:n] for s, n in zip(report.stacks, rows, strict=True)}
    pictures = {s.stack: flowchart(s.picture) for s in report.stacks if s.picture is not None and s.picture.nodes}
    return template(
        "diff.md.j2",
        report=report,
        marker=MARKER,
        money=money,
        signed=signed_money,
        figure=figure,
        percent=percent,
        pair=pair,
        effect=effect_text,
        icon=icon,
        mark=MARK,
        as_of=as_of_text,
        unpriced=sum(len(s.unpriced_after) for s in report.stacks if s.status != "unchanged"),  # the change's own
        shown=lambda s: kept[id(s)],
        listed=listed,
        limit=COMMENT_LIMIT,
        verdict=verdict(report),
        counts=counts(report),
        nothing=nothing(report),
        text=markdown_text,
        fold=fold,
        tally=tally,
        pictures=pictures,
    )


__all__ = [
    "COMMENT_BUDGET",
    "COMMENT_LIMIT",
    "CUT_MARKER",
    "REVIEW_ARTIFACT",
    "render",
    "render_catalog_markdown",
    "render_cost_markdown",
    "render_diff_markdown",
    "render_markdown",
]
