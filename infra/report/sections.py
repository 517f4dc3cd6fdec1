"""Views of report objects as sections and phrases people read (terminal and Markdown): shared by the builders,
which put them into a stack's summary, and the renderers of the cost and diff reports."""

from __future__ import annotations

from decimal import Decimal

from infra.report.format import money, number
from infra.report.model import CostOut, CostReport, Section

MAX_ROWS = 60
"""Cost lines shown in the section (largest first); the JSON has them all."""


def as_of_text(oldest: object, newest: object) -> str:
    if oldest is None:
        return "no catalog prices used"
    return f"prices as of {oldest}" if oldest == newest or newest is None else f"prices as of {oldest} to {newest}"


def total_text(monthly: Decimal, low: Decimal, high: Decimal) -> str:
    text = f"{money(monthly)}/month"
    return text if low == high else f"{text} (range {money(low)} to {money(high)})"


def cost_section(cost: CostOut) -> Section:
    """The cost breakdown as a table: one row per line, largest first, unknown lines last."""
    rows = []
    for r in cost.resources:
        for line in r.lines:
            flags = ", ".join(line.flags)
            rows.append(
                (
                    line.monthly_usd is None,
                    -(line.monthly_usd or 0),
                    [
                        r.name,
                        line.name,
                        "-" if line.quantity is None else number(float(line.quantity), 2),
                        line.unit,
                        money(line.hourly_usd, 4),
                        money(line.monthly_usd),
                        flags,
                    ],
                )
            )
    rows.sort(key=lambda row: (row[0], row[1], row[2][0], row[2][1]))
    shown = [row[2] for row in rows[:MAX_ROWS]]
    notes = [
        f"total {total_text(cost.monthly_usd, cost.monthly_min_usd, cost.monthly_max_usd)}, "
        f"{money(cost.hourly_usd, 2)}/hour; {as_of_text(cost.prices_as_of, cost.prices_as_of_newest)}; "
        f"{cost.free_resources} resources have no charge of their own"
    ]
    if len(rows) > MAX_ROWS:
        notes.append(f"{len(rows) - MAX_ROWS} smaller lines not shown (see --format json)")
    if cost.unpriced:
        notes.append(
            f"{len(cost.unpriced)} unpriced (unknown, not in the total): "
            + "; ".join(cost.unpriced[:5])
            + (" ..." if len(cost.unpriced) > 5 else "")
        )
    if cost.doubtful:
        notes.append(
            f"{len(cost.doubtful)} doubtful figures (flagged): "
            + "; ".join(cost.doubtful[:5])
            + (" ..." if len(cost.doubtful) > 5 else "")
        )
    return Section(
        title=f"Cost: {total_text(cost.monthly_usd, cost.monthly_min_usd, cost.monthly_max_usd)}, "
        f"{as_of_text(cost.prices_as_of, cost.prices_as_of_newest)}",
        columns=["resource", "line", "quantity", "unit", "hourly", "monthly", "flags"],
        rows=shown,
        notes=notes,
    )


def cost_blocks(report: CostReport) -> list[tuple[str, list[Section]]]:
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


__all__ = ["MAX_ROWS", "as_of_text", "cost_blocks", "cost_section", "total_text"]
