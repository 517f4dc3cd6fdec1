"""The lifetime bill of the answer: one-off costs (training run, adaptation runs, data preparation) and the
recurring month (serving, or the hosted API), over the intent's horizon; and each option's cumulative cost month
by month, for the chart. A line whose cost is unknown stays in the bill as unknown and makes the total a lower
bound: it is never counted as zero."""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

from gpuinfra.catalog import Catalog
from gpuinfra.plan.advise.model import (
    AdaptRung,
    Bill,
    BillLine,
    Curve,
    DataPrep,
    ManagedRung,
    ServingRung,
    TrainRung,
)
from gpuinfra.plan.advise.specs import advice_org, dataprep_spec
from gpuinfra.plan.dataprep import plan_dataprep
from gpuinfra.spec import DataprepSpec
from gpuinfra.spec.intent import IntentSpec


def dataprep(intent: IntentSpec, catalog: Catalog) -> tuple[DataPrep, DataprepSpec] | None:
    """The corpus's preparation as plan_dataprep plans the spec the intent implies (specs.dataprep_spec): its
    hours and cost, unknown (never zero) where a price is; and the spec (what `advise --init` writes)."""
    if intent.corpus is None:
        return None
    spec = dataprep_spec(intent)
    plan = plan_dataprep(spec, advice_org(), catalog)
    note = (
        f"plan_dataprep: FineWeb's stages with datatrove on {plan.nodes} x {plan.instance_type}"
        f" ({'spot' if plan.spot else 'on-demand'}), {plan.hours:,.0f} h of wall time"
        f" ({plan.serial_hours:,.0f} h of it the serial MinHash cluster step), within a {spec.deadline_hours:g} h"
        " deadline; WARC input, its file count from the corpus's size"
    )
    prep = DataPrep(raw_tb=intent.corpus.raw_tb, planned=True, hours=plan.hours, cost_usd=plan.cost_usd, note=note)
    return prep, spec


def bill_lines(
    stopped_at: int,
    managed: ManagedRung | None,
    adapt: AdaptRung | None,
    serving: ServingRung | None,
    train: TrainRung | None,
    prep: DataPrep | None,
) -> list[BillLine]:
    """What the answer pays for: rung 1 pays the API only; every other answer its one-offs and its fleet."""
    if stopped_at == 1 and managed is not None and managed.cheapest is not None:
        api = managed.cheapest
        prices = f"${api.input_usd_per_mtok}/${api.output_usd_per_mtok} per 1M tokens in/out"
        basis = f"{api.provider} {api.model}: {prices} ({api.source})"
        return [BillLine(what=f"managed API ({api.provider})", kind="recurring", usd=api.monthly_usd, basis=basis)]
    lines = []
    if prep is not None:
        lines.append(
            BillLine(
                what=f"data preparation ({prep.raw_tb:g} TB raw)", kind="one-off", usd=prep.cost_usd, basis=prep.note
            )
        )
    if train is not None:
        what = f"training run ({train.nodes} x {train.instance_type})"
        step = "plan_training: days x nodes x on-demand rate"
        lines.append(_line(what, "one-off", train.cost_usd, step, train.price_sources))
    if adapt is not None and adapt.refusal is None:
        what = f"adaptation ({adapt.iterations} {adapt.method} runs on {adapt.instance_type})"
        step = "plan_finetune: hours a run x on-demand rate x runs"
        lines.append(_line(what, "one-off", adapt.cost_usd, step, adapt.price_sources))
    if serving is not None:
        what = f"serving ({serving.replicas_mean} x {serving.instance_type} at mean load)"
        step = "replicas at the mean load x on-demand rate x 730 h"
        lines.append(_line(what, "recurring", serving.monthly_usd, step, serving.price_sources))
    return lines


def _line(
    what: str, kind: Literal["one-off", "recurring"], usd: Decimal | None, step: str, sources: list[str]
) -> BillLine:
    """A bill line whose basis is the planner step and the catalog sources of its prices."""
    return BillLine(what=what, kind=kind, usd=usd, basis=f"{step} ({', '.join(sources)})")


def lifetime_bill(horizon: int, lines: list[BillLine]) -> Bill:
    months = Decimal(horizon)
    one_off = sum((line.usd for line in lines if line.kind == "one-off" and line.usd is not None), Decimal(0))
    monthly = sum((line.usd for line in lines if line.kind == "recurring" and line.usd is not None), Decimal(0))
    total = one_off + monthly * months
    unknown = [line.what for line in lines if line.usd is None]
    return Bill(
        horizon_months=horizon,
        lines=lines,
        one_off_usd=one_off,
        recurring_monthly_usd=monthly,
        total_usd=total,
        complete=not unknown,
        unknown=unknown,
        recurring_share=float(monthly * months / total) if total else None,
    )


def curve(option: str, one_off: Decimal, monthly: Decimal, horizon: int) -> Curve:
    return Curve(
        option=option,
        one_off_usd=one_off,
        monthly_usd=monthly,
        cumulative_usd=[one_off + monthly * m for m in range(horizon + 1)],
    )


def curves(
    horizon: int, managed: ManagedRung | None, serving: ServingRung | None, bill: Bill, stopped_at: int
) -> list[Curve]:
    """The answer's own bill, and beside it the cheapest eligible hosted API (with no one-off: what not building
    anything would cost) or, when the answer is the API, the self-hosted fleet."""
    out = [curve(f"the answer (rung {stopped_at})", bill.one_off_usd, bill.recurring_monthly_usd, horizon)]
    api = managed.cheapest if managed else None
    if stopped_at != 1 and api is not None:
        out.append(curve(f"managed API ({api.provider})", Decimal(0), api.monthly_usd, horizon))
    if stopped_at == 1 and serving is not None and serving.monthly_usd is not None:
        out.append(curve(f"self-hosted ({serving.instance_type})", Decimal(0), serving.monthly_usd, horizon))
    return out


__all__ = ["bill_lines", "curve", "curves", "dataprep", "lifetime_bill"]
