"""Rung 3's figures: the fleet plan_inference builds for the intent's traffic, and what a month of it costs.

A month is billed for the replicas the day's mean load needs in each region (never fewer than the floor), at the
catalog's on-demand price: mean replicas = max(floor, ceil(mean rps of the region / rps a replica)). The
break-even against a hosted API: with F the monthly price of one replica in every region, m the floor per
region, p the API's blended price per token and D the days of a month, self-hosting costs m x F up to the
floor's capacity and the API p x D x T; the two meet at T* = m x F / (p x D) tokens a day, provided one full
replica costs less per token than the API (F <= p x D x T1, T1 a replica per region's daily tokens); else the
API is cheaper at any traffic."""

from __future__ import annotations

import math
from decimal import Decimal

from gpuinfra.catalog import Catalog
from gpuinfra.catalog.engines import Engine
from gpuinfra.plan.advise.managed import DAYS_PER_MONTH
from gpuinfra.plan.advise.model import ApiOption, ServingRung
from gpuinfra.plan.advise.specs import VLLM_MAX_NUM_SEQS, advice_org, serving_spec
from gpuinfra.plan.checkpoint import HOURS_PER_MONTH
from gpuinfra.plan.inference import InferencePlan, plan_inference
from gpuinfra.spec import InferenceSpec
from gpuinfra.spec.intent import IntentSpec, Traffic

SECONDS_PER_DAY = 86_400
CENT = Decimal("0.01")
BATCHES = tuple(VLLM_MAX_NUM_SEQS >> k for k in range(9))
"""256, 128, ... 1: the batch sizes tried, largest first."""
CEILING_SOURCE = "the planner's calibrated ceiling (plan/roofline.py); a `vllm bench serve` figure replaces it"


def served_engine(catalog: Catalog) -> Engine:
    """The engine the advice's fleet runs: vLLM, the spec's default (its VLLM_MAX_NUM_SEQS sizes the batches)."""
    return catalog.engine("vllm")


def sized_batch(intent: IntentSpec, catalog: Catalog, adapter: int | None) -> tuple[int, InferencePlan]:
    """The largest batch whose decode meets the latency target on the type `auto` picks (1 if none does: the
    target is then out of reach, which the rung says), with its plan."""
    traffic = intent.traffic
    assert traffic is not None
    org, plan = advice_org(), None
    for batch in BATCHES:
        plan = plan_inference(serving_spec(intent, 1.0, batch, served_engine(catalog), adapter), org, catalog)
        bound = plan.regions[0].bound
        if bound is None or bound.generation_seconds <= traffic.latency_target_seconds:
            return batch, plan
    assert plan is not None
    return 1, plan


def mean_replicas(traffic: Traffic, throughput_rps: float) -> int:
    """Replicas a region runs at the day's mean load, at least the floor."""
    mean_rps = traffic.daily_requests / SECONDS_PER_DAY / len(traffic.regions)
    return max(traffic.min_replicas_per_region, math.ceil(mean_rps / throughput_rps))


def break_even(traffic: Traffic, hourly: list[Decimal], throughput_rps: float, api: ApiOption | None) -> float | None:
    """T*: the daily tokens from which the fleet costs less than `api` (module docstring); None when never."""
    if api is None or api.blended_usd_per_mtok <= 0:
        return None
    one_each = sum(hourly, Decimal(0)) * Decimal(repr(HOURS_PER_MONTH))  # F
    per_token = api.blended_usd_per_mtok / 1_000_000  # p
    replica_day = throughput_rps * SECONDS_PER_DAY * (traffic.input_tokens + traffic.output_tokens)
    full = Decimal(repr(replica_day * len(traffic.regions)))  # T1
    if one_each > per_token * DAYS_PER_MONTH * full:
        return None
    return float(traffic.min_replicas_per_region * one_each / (per_token * DAYS_PER_MONTH))


def serving_rung(
    intent: IntentSpec, catalog: Catalog, api: ApiOption | None, adapter: int | None = None
) -> tuple[ServingRung, InferenceSpec]:
    """The fleet for the traffic (measured throughput if the intent gives one, else the calibrated ceiling), with
    the adapter of rung 2 (`adapter`: its parameters) served beside the base."""
    traffic = intent.traffic
    assert traffic is not None
    batch, probe = sized_batch(intent, catalog, adapter)
    bound = probe.regions[0].bound
    measured = traffic.throughput_rps_per_replica
    throughput = measured or (bound.requests_per_s if bound else None)
    if probe.choice.chosen is None or throughput is None:
        why = probe.choice.reason if probe.choice.chosen is None else "the accelerator's memory bandwidth is unknown"
        empty = ServingRung(instance_type=probe.choice.chosen, regions=list(traffic.regions), note=why)
        return empty, serving_spec(intent, measured or 1.0, batch, served_engine(catalog), adapter)
    spec = serving_spec(intent, throughput, batch, served_engine(catalog), adapter)
    plan = plan_inference(spec, advice_org(), catalog)
    return _figures(intent, catalog, plan, batch, throughput, api), spec


def _figures(
    intent: IntentSpec, catalog: Catalog, plan: InferencePlan, batch: int, throughput: float, api: ApiOption | None
) -> ServingRung:
    traffic = intent.traffic
    assert traffic is not None
    first = plan.regions[0]
    hourly = {r.region: r.usd_per_hour for r in plan.economics.regions} if plan.economics else {}
    known = [h for h in hourly.values() if h is not None]
    mean = mean_replicas(traffic, throughput)
    monthly = None
    if len(known) == len(traffic.regions):
        monthly = (sum(known, Decimal(0)) * mean * Decimal(repr(HOURS_PER_MONTH))).quantize(CENT)
    month_tokens = (
        Decimal(repr(traffic.daily_requests * (traffic.input_tokens + traffic.output_tokens))) * DAYS_PER_MONTH
    )
    economics = plan.economics.regions[0] if plan.economics and plan.economics.regions else None
    instance = first.instance_type or ""
    return ServingRung(
        instance_type=first.instance_type,
        accelerator=first.accelerator,
        gpus_per_replica=first.accelerators_per_instance,
        regions=list(traffic.regions),
        max_sequences=batch,
        generation_seconds=first.bound.generation_seconds if first.bound else None,
        throughput_rps_per_replica=throughput,
        throughput_source="traffic.throughput_rps_per_replica (measured)"
        if traffic.throughput_rps_per_replica
        else CEILING_SOURCE,
        replicas_floor=traffic.min_replicas_per_region * len(traffic.regions),
        replicas_mean=mean * len(traffic.regions),
        replicas_peak=sum(r.demand_replicas for r in plan.regions),
        hourly_usd=hourly,
        monthly_usd=monthly,
        usd_per_mtok_output=economics.usd_per_million_tokens if economics else None,
        usd_per_mtok_blended=(monthly / month_tokens * 1_000_000) if monthly is not None else None,
        cold_start_seconds=first.cold_start.total_seconds if first.cold_start else None,
        warm_resume_seconds=first.cold_start.resume_seconds if first.cold_start else None,
        break_even_tokens_per_day=break_even(traffic, known, throughput, api) if monthly is not None else None,
        price_sources=sorted({p.source for p in (catalog.on_demand(instance, r) for r in traffic.regions) if p}),
        note=_latency_note(traffic, first.bound.generation_seconds if first.bound else None),
    )


def _latency_note(traffic: Traffic, generation_seconds: float | None) -> str | None:
    if generation_seconds is None or generation_seconds <= traffic.latency_target_seconds:
        return None
    return (
        f"the latency target ({traffic.latency_target_seconds:g} s) is out of reach: one answer alone decodes in "
        f"{generation_seconds:.1f} s on this type (a faster accelerator, fewer output tokens, or a later target)"
    )


__all__ = ["BATCHES", "break_even", "mean_replicas", "serving_rung", "sized_batch"]
