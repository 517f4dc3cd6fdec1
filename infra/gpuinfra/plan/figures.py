"""The plan's figures a review compares: run days, GPU-hours and cost per run, the monthly cost of ownership
and its break-even month, a serving region's cost per million tokens and its failover headroom. A pull request
that changes one shows it in the comment's cost section."""

from __future__ import annotations

from decimal import Decimal
from typing import NamedTuple

from gpuinfra.plan.dataprep import DataprepPlan
from gpuinfra.plan.inference import InferencePlan
from gpuinfra.plan.training import TrainingPlan

PER_MILLION_TOKENS = "usd per 1M tokens"
REQUESTS_PER_SECOND = "rps"


class Figure(NamedTuple):
    unit: str
    """usd, days, hours, months, PER_MILLION_TOKENS or REQUESTS_PER_SECOND."""
    value: Decimal | None


def _dec(value: float | Decimal | None, places: str) -> Decimal | None:
    if value is None:
        return None
    return Decimal(repr(value) if isinstance(value, float) else value).quantize(Decimal(places))


def plan_figures(plan: object) -> dict[str, Figure]:
    """Named figures of a plan (empty for plans without money questions)."""
    if isinstance(plan, InferencePlan):
        regions = plan.economics.regions if plan.economics else []
        out: dict[str, Figure] = {
            f"serving {r.region}: cost per 1M tokens": Figure(
                PER_MILLION_TOKENS, _dec(r.usd_per_million_tokens, "0.001")
            )
            for r in regions
        }
        # Capacity left (negative: short) with the largest other region failed over to the region.
        for row in plan.failover:
            out[f"failover {row.region}: headroom with {row.takes_from} lost"] = Figure(
                REQUESTS_PER_SECOND, _dec(row.capacity_rps - row.load_rps, "0.1")
            )
        return out
    if isinstance(plan, DataprepPlan):
        return {
            "dataprep run: hours": Figure("hours", _dec(plan.hours, "0.1")),
            "dataprep run: cost per run": Figure("usd", _dec(plan.cost_usd, "1")),
        }
    if not isinstance(plan, TrainingPlan):
        return {}
    out = {}
    if plan.run is not None:
        point = plan.run.at_spec
        out["training run: days"] = Figure("days", _dec(point.days, "0.1"))
        out["training run: GPU-hours"] = Figure("hours", _dec(point.gpu_hours, "1"))
        out["training run: cost per run"] = Figure("usd", _dec(point.cost_usd, "1"))
    if plan.ownership is not None:
        own = plan.ownership
        out["ownership: cost a month"] = Figure("usd", own.total_monthly_usd)
        for rental in own.rentals:
            month = rental.break_even_month
            out[f"ownership: break-even month vs AWS {rental.purchase}"] = Figure(
                "months", None if month is None else Decimal(month)
            )
    return out


__all__ = ["PER_MILLION_TOKENS", "REQUESTS_PER_SECOND", "Figure", "plan_figures"]
