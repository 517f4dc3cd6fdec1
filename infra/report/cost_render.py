"""Renderers of `gpuinfra cost`: terminal tables, Markdown (templates/cost.md.j2) and JSON."""

from __future__ import annotations

import json

from ..templating import render
from .costs import as_of_text, cost_section, total_text
from .format import money
from .model import CostReport, Section
from .table import render_sections


def _sections(report: CostReport) -> list[tuple[str, list[Section]]]:
    blocks = []
    for s in report.stacks:
        sections = (
            [cost_section(s.cost)]
            if s.cost
            else [Section(title="Not priced", notes=["the stack has no graph: an error finding stopped the preview"])]
        )
        if s.notes:
            sections.append(Section(title="Notes", notes=s.notes))
        blocks.append((f"{s.stack}  ({s.source})", sections))
    return blocks


def render_cost_table(report: CostReport) -> str:
    text = render_sections(_sections(report))
    lines = [f"{p.stack}: cannot be read\n" + "\n".join(f"  {m}" for m in p.messages) for p in report.problems]
    if report.total is not None:
        t = report.total
        lines.append(
            f"total {total_text(t.monthly_usd, t.monthly_min_usd, t.monthly_max_usd)} over "
            f"{len(report.stacks)} stacks; {as_of_text(t.prices_as_of, t.prices_as_of_newest)}"
        )
    return text + "".join(line + "\n" for line in lines)


def render_cost_markdown(report: CostReport) -> str:
    return render(
        "cost.md.j2", report=report, blocks=_sections(report), money=money, total=total_text, as_of=as_of_text
    )


def render_cost_json(report: CostReport) -> str:
    return json.dumps(report.model_dump(mode="json"), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


__all__ = ["render_cost_json", "render_cost_markdown", "render_cost_table"]
