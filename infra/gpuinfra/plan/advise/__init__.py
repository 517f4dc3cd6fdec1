"""`gpuinfra advise`: the seeds' decision ladder over an intent, each rung's figures from the existing planners
and the catalog, where it stopped and why, what would move the answer, and the lifetime bill. Pure: the catalog
and the hosted-API prices come in as data."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuinfra.catalog import Catalog
from gpuinfra.catalog.managed import ManagedPrices
from gpuinfra.plan.advise.adapt import adapt_rung
from gpuinfra.plan.advise.bill import bill_lines, curves, dataprep, lifetime_bill
from gpuinfra.plan.advise.ladder import TITLES, walk
from gpuinfra.plan.advise.managed import managed_rung
from gpuinfra.plan.advise.model import Accounts, AdaptRung, Advice, Rung, ServingRung, TrainRung
from gpuinfra.plan.advise.movers import movers
from gpuinfra.plan.advise.references import reference_problems
from gpuinfra.plan.advise.serving import serving_rung
from gpuinfra.plan.advise.specs import DATAPREP_ACCOUNT, SERVING_ACCOUNT, TRAINING_ACCOUNT, IntentProblem
from gpuinfra.plan.advise.train import train_rung
from gpuinfra.spec import DataprepSpec, FinetuneSpec, InferenceSpec, TrainingSpec
from gpuinfra.spec.intent import IntentSpec

ACCOUNTS_RULE = (
    "training and fine-tuning run in an account of purpose training, serving in one of purpose inference: "
    "no shared network, quota or budget (the policy pack refuses them mixed; docs/policies.md)"
)


class IntentProblems(ValueError):
    """Every IntentProblem found before planning (the command reports each at its field)."""

    def __init__(self, problems: list[IntentProblem]) -> None:
        super().__init__("; ".join(map(str, problems)))
        self.problems = problems


StackSpec = InferenceSpec | FinetuneSpec | TrainingSpec | DataprepSpec
"""A stack the answer needs (what `advise --init` writes)."""


@dataclass
class Walked:
    """The advice and the stack specs the answer needs (what `advise --init` writes)."""

    advice: Advice
    specs: dict[str, StackSpec] = field(default_factory=dict)


def advise(intent: IntentSpec, catalog: Catalog, prices: ManagedPrices) -> Walked:
    """Every rung's figures, the ladder walked over them, the bill of the rung it stopped at."""
    problems = reference_problems(intent, catalog, prices)
    if problems:
        raise IntentProblems(problems)
    specs: dict[str, StackSpec] = {}
    managed = managed_rung(intent, prices)
    adapt = None
    if intent.adapt is not None:
        adapt, specs["finetune"] = _adapt(intent, catalog)
    serving = None
    if intent.traffic is not None:
        served = adapt.adapter_parameters if adapt is not None and adapt.refusal is None else None
        api = managed.cheapest if managed else None
        serving, specs["serve"] = serving_rung(intent, catalog, api, served)
    train = None
    if intent.train is not None or (adapt is not None and adapt.refusal is not None):
        train, specs["train"] = train_rung(intent, catalog)
    rungs, stopped = walk(intent, managed, adapt, serving, train)
    prep = None
    prepared = dataprep(intent, catalog)
    if prepared is not None:
        prep, specs["prep"] = prepared
    bill = lifetime_bill(intent.horizon_months, bill_lines(stopped, managed, adapt, serving, train, prep))
    advice = Advice(
        intent=intent.name,
        horizon_months=intent.horizon_months,
        stopped_at=stopped,
        answer=_answer(stopped, rungs),
        rungs=rungs,
        managed=managed,
        serving=serving,
        adapt=adapt,
        train=train,
        dataprep=prep,
        accounts=_accounts(stopped, adapt, serving, train, prep is not None),
        bill=bill,
        curves=curves(intent.horizon_months, managed, serving, bill, stopped),
        movers=movers(intent, stopped, managed, adapt, serving, train, bill),
    )
    return Walked(advice=advice, specs=_needed(stopped, specs))


def _adapt(intent: IntentSpec, catalog: Catalog) -> tuple[AdaptRung, FinetuneSpec]:
    found = adapt_rung(intent, catalog)
    assert found is not None
    return found


def _answer(stopped: int, rungs: list[Rung]) -> str:
    if stopped == 0:
        return "no rung gives an honest answer: see each rung's reason"
    rung = next(r for r in rungs if r.number == stopped)
    return f"rung {stopped}, {TITLES[stopped]}: {rung.why}"


def _accounts(
    stopped: int, adapt: AdaptRung | None, serving: ServingRung | None, train: TrainRung | None, prepares: bool
) -> Accounts:
    trains = stopped in (2, 4) and (train is not None or adapt is not None)
    serves = stopped != 1 and serving is not None
    return Accounts(
        training=TRAINING_ACCOUNT if trains else None,
        serving=SERVING_ACCOUNT if serves else None,
        rule=ACCOUNTS_RULE,
        dataprep=DATAPREP_ACCOUNT if prepares and stopped != 1 else None,
    )


def _needed(stopped: int, specs: dict[str, StackSpec]) -> dict[str, StackSpec]:
    """The stacks the answer builds: none for a hosted API; the fine-tune (rung 2) or the training cluster (rung
    4) with the fleet that serves the result; and, for any answer that builds, the named corpus's preparation (the
    bill pays for it: bill.bill_lines)."""
    keep = {1: (), 2: ("finetune", "serve", "prep"), 3: ("serve", "prep"), 4: ("prep", "train", "serve")}
    return {k: specs[k] for k in keep.get(stopped, ()) if k in specs}


__all__ = ["ACCOUNTS_RULE", "IntentProblem", "IntentProblems", "StackSpec", "Walked", "advise"]
