"""Build the cost parts of the report from a priced graph: the `cost` object (JSON) and the section people
read (terminal and Markdown). The only place that knows both infra/cost and the report's shape."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from gpuinfra.catalog import staleness
from gpuinfra.cost import Breakdown, Line, ResourceCost
from gpuinfra.findings import Finding, Level
from gpuinfra.report.format import money
from gpuinfra.report.model import (
    CostGroupOut,
    CostLineOut,
    CostOut,
    CostTotalOut,
    FindingOut,
    ResourceCostOut,
    StackReport,
)
from gpuinfra.report.sections import cost_section


def line_out(line: Line) -> CostLineOut:
    return CostLineOut(
        name=line.name,
        quantity=line.quantity,
        unit=line.unit,
        unit_price_usd=line.unit_price,
        price_unit=line.price_unit,
        hourly_usd=line.hourly,
        monthly_usd=line.monthly,
        monthly_min_usd=line.monthly_min,
        monthly_max_usd=line.monthly_max,
        flags=list(line.flags),
        sources=list(dict.fromkeys(line.sources)),
        note=line.note,
    )


def resource_out(r: ResourceCost) -> ResourceCostOut:
    return ResourceCostOut(
        urn=r.urn,
        type=r.type,
        name=r.name,
        component=r.component,
        region=r.where.region,
        account=r.where.account,
        hourly_usd=r.hourly,
        monthly_usd=r.monthly,
        monthly_min_usd=r.monthly_min,
        monthly_max_usd=r.monthly_max,
        lines=[line_out(line) for line in r.lines],
    )


def groups(b: Breakdown, dimension: str) -> list[CostGroupOut]:
    return [
        CostGroupOut(key=k, monthly_usd=v[0], monthly_min_usd=v[1], monthly_max_usd=v[2])
        for k, v in b.by(dimension).items()
    ]


def describe(r: ResourceCost, line: Line) -> str:
    reasons = ", ".join(line.flags)
    return f"{r.name}: {line.name} ({reasons})" + (f": {line.note}" if line.note else "")


def _largest_first(item: tuple[ResourceCost, Line]) -> tuple[bool, Decimal]:
    """Unknown lines by what they count, most first (twelve instances before one controller): the ones a reader
    must not miss lead the list and the finding."""
    quantity = item[1].quantity
    return quantity is None, -(quantity or Decimal(0))


def cost_out(b: Breakdown) -> CostOut:
    dates = b.as_of()
    return CostOut(
        monthly_usd=b.monthly,
        monthly_min_usd=b.monthly_min,
        monthly_max_usd=b.monthly_max,
        hourly_usd=b.hourly,
        prices_as_of=dates[0] if dates else None,
        prices_as_of_newest=dates[1] if dates else None,
        resources=[resource_out(r) for r in b.resources if r.lines],
        free_resources=sum(1 for r in b.resources if r.free),
        by_component=groups(b, "component"),
        by_region=groups(b, "region"),
        by_account=groups(b, "account"),
        unpriced=[describe(r, line) for r, line in b.unpriced()],
        doubtful=[describe(r, line) for r, line in b.flagged()],
        usage_file=b.usage_source,
        partial=b.partial,
        unknown_prices=[describe(r, line) for r, line in sorted(b.unknown_prices(), key=_largest_first)],
    )


def stale_finding(cost: CostOut) -> Finding | None:
    """A warning when the oldest price behind the stack's cost is older than the configured limit."""
    message = staleness.stale_message(cost.prices_as_of)
    if message is None:
        return None
    return Finding(staleness.RULE, Level.WARNING, (), message, staleness.HINT)


PARTIAL_RULE = "cost-partial"
PARTIAL_HINT = (
    "add each missing price to the catalog with its source (docs/catalog.md; `gpuinfra catalog refresh` for instance "
    "prices), or use a region the catalog prices the type in (`gpuinfra catalog <instance type>` lists them)"
)


def partial_finding(cost: CostOut) -> Finding | None:
    """A warning when a line's price is unknown: the total is a lower bound, never the price with a zero in it."""
    if not cost.partial:
        return None
    shown = "; ".join(cost.unknown_prices[:4]) + (" ..." if len(cost.unknown_prices) > 4 else "")
    return Finding(
        PARTIAL_RULE,
        Level.WARNING,
        (),
        f"the monthly cost is at least {money(cost.monthly_usd)}, not exactly: "
        f"{len(cost.unknown_prices)} line{'s' if len(cost.unknown_prices) != 1 else ''} with no price "
        f"(unknown, not zero): {shown}",
        PARTIAL_HINT,
    )


def cost_findings(cost: CostOut | None) -> list[Finding]:
    """The cost stage's warnings on the stack (listed with the validators' findings): stale or partial prices."""
    if cost is None:
        return []
    return [f for f in (stale_finding(cost), partial_finding(cost)) if f is not None]


def with_cost(stack: StackReport, b: Breakdown) -> StackReport:
    cost = cost_out(b)
    extra = [finding_out(f) for f in cost_findings(cost)]
    findings = [*stack.findings, *extra] if extra else stack.findings
    return stack.model_copy(
        update={"cost": cost, "summary": [*stack.summary, cost_section(cost)], "findings": findings}
    )


def finding_out(f: Finding) -> FindingOut:
    """A finding of the stack as a whole (no place in its file): the cost stage's, the engine's failure."""
    return FindingOut(rule=f.rule, level=str(f.level), path="", message=f.message, hint=f.hint)  # type: ignore[arg-type]


def cost_total(costs: Iterable[CostOut]) -> CostTotalOut | None:
    costs = list(costs)
    if not costs:
        return None
    dates = [c.prices_as_of for c in costs if c.prices_as_of] + [
        c.prices_as_of_newest for c in costs if c.prices_as_of_newest
    ]
    return CostTotalOut(
        monthly_usd=sum((c.monthly_usd for c in costs), Decimal(0)),
        monthly_min_usd=sum((c.monthly_min_usd for c in costs), Decimal(0)),
        monthly_max_usd=sum((c.monthly_max_usd for c in costs), Decimal(0)),
        prices_as_of=min(dates) if dates else None,
        prices_as_of_newest=max(dates) if dates else None,
        unpriced=sum(len(c.unpriced) for c in costs),
        partial=any(c.partial for c in costs),
    )


__all__ = [
    "PARTIAL_RULE",
    "cost_findings",
    "cost_out",
    "cost_total",
    "finding_out",
    "partial_finding",
    "stale_finding",
    "with_cost",
]
