"""Rung 2's figures: one fine-tuning run on one node as plan_finetune plans it (the cheapest catalog type that
holds the run, its hours at the calibrated utilization, its on-demand cost), times the runs the intent expects."""

from __future__ import annotations

from decimal import Decimal

from gpuinfra.catalog import Catalog
from gpuinfra.plan.advise.model import AdaptRung
from gpuinfra.plan.advise.specs import advice_org, finetune_spec
from gpuinfra.plan.finetune import plan_finetune
from gpuinfra.spec import FinetuneSpec
from gpuinfra.spec.intent import IntentSpec


def adapt_rung(intent: IntentSpec, catalog: Catalog) -> tuple[AdaptRung, FinetuneSpec] | None:
    adapt = intent.adapt
    if adapt is None:
        return None
    spec = finetune_spec(intent)
    plan = plan_finetune(spec, advice_org(), catalog)
    chosen = plan.chosen
    per_run = chosen.cost_usd if chosen else None
    rung = AdaptRung(
        method=adapt.method,
        instance_type=plan.instance_type,
        gpus=plan.gpus,
        hours_per_run=chosen.hours if chosen else None,
        cost_per_run_usd=per_run,
        iterations=adapt.iterations,
        cost_usd=per_run * Decimal(adapt.iterations) if per_run is not None else None,
        mfu=plan.mfu,
        mfu_source=plan.mfu_source,
        price_sources=plan.price_sources,
        refusal=plan.refusal,
        adapter_parameters=plan.memory.adapter_parameters if plan.memory else None,
    )
    return rung, spec


__all__ = ["adapt_rung"]
