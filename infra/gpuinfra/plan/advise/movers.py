"""What would move the answer: the figure at which another rung would become the honest one (the break-even
traffic against the hosted API, the deadline's node count, the month owning pays off, the budget)."""

from __future__ import annotations

from gpuinfra.plan.advise.model import AdaptRung, Bill, ManagedRung, ServingRung, TrainRung
from gpuinfra.spec.intent import IntentSpec


def _traffic_mover(intent: IntentSpec, managed: ManagedRung | None, serving: ServingRung | None) -> list[str]:
    api = managed.cheapest if managed else None
    if api is None or serving is None or serving.instance_type is None or intent.traffic is None:
        return []
    where = f"self-hosting on {serving.instance_type} ({serving.accelerator})"
    now = intent.traffic.daily_requests * (intent.traffic.input_tokens + intent.traffic.output_tokens) / 1e6
    if serving.break_even_tokens_per_day is None:
        return [
            f"{where} never costs less than {api.provider} (${api.blended_usd_per_mtok:.3f}/1M tokens) at these "
            "prices, even with every replica full"
        ]
    even = serving.break_even_tokens_per_day / 1e6
    side = "cheaper" if now >= even else "dearer"
    return [
        f"above {even:,.0f}M tokens/day {where} is cheaper than {api.provider}; this intent's "
        f"{now:,.0f}M tokens/day makes it {side}"
    ]


def _train_movers(train: TrainRung | None) -> list[str]:
    if train is None:
        return []
    out = []
    if train.deadline_days is not None and train.days is not None:
        out.append(
            f"the {train.deadline_days:g}-day deadline takes {train.nodes} x {train.instance_type}; "
            f"a later deadline needs fewer nodes (the run's cost changes little: the same GPU-hours, less scaling loss)"
        )
    own = train.ownership
    if own is not None and own.break_even_month is not None:
        verdict = "owning is cheaper" if own.months >= own.break_even_month else "renting is cheaper"
        out.append(
            f"owning the {train.nodes} nodes pays off from month {own.break_even_month}; over the "
            f"{own.months:g} months they train, {verdict}"
        )
    return out


def movers(
    intent: IntentSpec,
    stopped: int,
    managed: ManagedRung | None,
    adapt: AdaptRung | None,
    serving: ServingRung | None,
    train: TrainRung | None,
    bill: Bill,
) -> list[str]:
    out = _traffic_mover(intent, managed, serving)
    if adapt is not None and adapt.refusal is None and stopped == 2:
        out.append("if a parameter-efficient adapter cannot reach the quality, a full fine-tune is training (rung 4)")
    out += _train_movers(train)
    budget = intent.constraints.monthly_budget_usd
    if budget is not None and bill.recurring_monthly_usd > budget:
        out.append(
            f"the recurring ${bill.recurring_monthly_usd:,.2f} a month is over constraints.monthly_budget_usd "
            f"(${budget:,.2f})"
        )
    return out


__all__ = ["movers"]
