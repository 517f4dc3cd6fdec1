"""The seeds' decision ladder, in their order: stop at the first honest answer.

1. Neither training nor serving of your own: use a managed model API.
2. Adaptation: a parameter-efficient method on one machine before any cluster.
3. Serving only: build for replicas, cold start and queueing.
4. Distributed training: interconnect, parallel storage and checkpointing, budgeted together.
5. Training and serving in separate accounts (a rule every answer keeps, not a stop).

Each rung's honesty is a plain test of the intent and the figures (rung 1 is honest only while the hosted API
costs no more than the fleet that would replace it)."""

from __future__ import annotations

from gpuinfra.plan.advise.model import AdaptRung, ManagedRung, Rung, ServingRung, TrainRung
from gpuinfra.spec.intent import IntentSpec

TITLES = {
    1: "managed model API",
    2: "adapt on one GPU",
    3: "serve only",
    4: "distributed training",
}


def own_weights(intent: IntentSpec) -> str | None:
    """Why the model's weights are the team's own (a hosted API serves its provider's), if they are."""
    if intent.train is not None:
        return "the model is trained from scratch"
    if intent.adapt is not None:
        return f"the model is adapted ({intent.adapt.method})"
    return None


def managed_answer(intent: IntentSpec, managed: ManagedRung | None, serving: ServingRung | None) -> tuple[bool, str]:
    if managed is None:
        return False, "nothing is served (no traffic)"
    blockers = [b for b in (own_weights(intent),) if b]
    if intent.constraints.custom_serving:
        blockers.append("constraints.custom_serving: the product needs serving of its own")
    if blockers:
        return False, "; ".join(blockers) + ": a hosted API serves its provider's model"
    api = managed.cheapest
    if api is None:
        why = [o.why_not for o in managed.options if o.why_not]
        return False, "no comparable hosted model qualifies" + (
            f" ({why[0]})" if why else " (none priced in the catalog)"
        )
    fleet = serving.monthly_usd if serving else None
    if fleet is not None and api.monthly_usd > fleet:
        return False, (
            f"{api.provider} would cost ${api.monthly_usd:,.2f} a month at this traffic against ${fleet:,.2f} "
            f"for the fleet of rung 3"
        )
    against = f" against ${fleet:,.2f} for the cheapest self-hosted fleet" if fleet is not None else ""
    return True, f"{api.provider} serves this traffic for ${api.monthly_usd:,.2f} a month{against}"


def adapt_answer(intent: IntentSpec, adapt: AdaptRung | None) -> tuple[bool, str]:
    if adapt is None:
        return False, "no adaptation asked for"
    if adapt.refusal:
        return False, f"{adapt.refusal}: that is training (rung 4)"
    if intent.train is not None:
        return False, "the model is trained as well (rung 4)"
    cost = f"${adapt.cost_per_run_usd:,.2f}" if adapt.cost_per_run_usd is not None else "an unknown cost"
    hours = f"{adapt.hours_per_run:.1f} h" if adapt.hours_per_run is not None else "unknown hours"
    return True, f"{adapt.method} on one {adapt.instance_type} ({adapt.gpus} GPU): {hours} and {cost} a run"


def serve_answer(intent: IntentSpec, serving: ServingRung | None) -> tuple[bool, str]:
    if serving is None:
        return False, "nothing is served (no traffic)"
    if serving.instance_type is None or serving.monthly_usd is None:
        fleet = f"the fleet's cost is unknown ({serving.note or 'no price'})"
    else:
        fleet = (
            f"{serving.replicas_mean} x {serving.instance_type} at the mean load ({serving.replicas_peak} at peak) "
            f"for ${serving.monthly_usd:,.2f} a month"
        )
    weights = own_weights(intent)
    if weights:
        return False, f"{weights}: that comes first; then this fleet serves it: {fleet}"
    return True, fleet if serving.monthly_usd is not None else f"serve it yourself; {fleet}"


def train_answer(intent: IntentSpec, adapt: AdaptRung | None, train: TrainRung | None) -> tuple[bool, str]:
    if train is None:
        return False, "no training asked for"
    days = f"{train.days:.1f} days" if train.days is not None else "unknown days"
    cost = f"${train.cost_usd:,.0f}" if train.cost_usd is not None else "an unknown cost"
    why = f"{train.nodes} x {train.instance_type} ({train.gpus} GPUs) on {train.interconnect}: {days}, {cost}"
    if train.layout_gb is not None and train.gpu_gb is not None and train.layout_gb > train.gpu_gb:
        why += "; but no layout tried fits GPU memory (rung 4's layout line): more nodes or a larger-memory type"
    return True, why


def walk(
    intent: IntentSpec,
    managed: ManagedRung | None,
    adapt: AdaptRung | None,
    serving: ServingRung | None,
    train: TrainRung | None,
) -> tuple[list[Rung], int]:
    """Every rung with its verdict, and the number of the first honest one."""
    answers = {
        1: managed_answer(intent, managed, serving),
        2: adapt_answer(intent, adapt),
        3: serve_answer(intent, serving),
        4: train_answer(intent, adapt, train),
    }
    applies = {1: managed is not None, 2: adapt is not None, 3: serving is not None, 4: train is not None}
    rungs = [
        Rung(number=n, title=TITLES[n], applies=applies[n], answer=answers[n][0], why=answers[n][1]) for n in TITLES
    ]
    stopped = next((r.number for r in rungs if r.answer), 0)
    return rungs, stopped


__all__ = ["TITLES", "own_weights", "walk"]
