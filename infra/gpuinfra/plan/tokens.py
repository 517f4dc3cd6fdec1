"""Serving economics: what a replica produces and what a million tokens cost, per region, and what quantizing
the weights changes (fit, throughput, cost) on the same instance.

The planned token rate is the spec's measured capacity (throughput_rps_per_replica x output tokens per request,
the region's own figure where it gives one: a replica of another accelerator serves at another rate): the region
is sized at it, so it is what a token costs. The calibrated ceiling (plan/roofline.py: decode bandwidth
time-shared with prefill compute, fitted to published benchmarks) gives the concurrency at the mean context; for
another weight precision the measured rate is scaled by the ratio of the two ceilings (fewer bytes a decode step,
a faster matmul rate for fp8), a stated estimate that a benchmark at that precision replaces. Prices are
on-demand, the region's own (never another region's).
"""

from __future__ import annotations

from decimal import Decimal

from gpuinfra.catalog import Catalog, InstanceType
from gpuinfra.plan.memory import MIB, Plain, ServingMemory, serving_memory
from gpuinfra.plan.roofline import (
    DECODE_BANDWIDTH_EFFICIENCY,
    ReplicaBound,
    ReplicaCeiling,
    ceiling_bound,
    matmul_efficiency,
    replica_ceiling,
)
from gpuinfra.plan.serving import RegionPlan, host_ram_fits
from gpuinfra.plan.serving import fits as holds
from gpuinfra.spec import FleetRegion, InferenceSpec

SECONDS_PER_HOUR = 3600
PRECISIONS = ("bf16", "fp8", "int8", "int4")
"""Weight precisions the quantization table compares (vLLM serves each: bf16, FP8, INT8 W8A8, INT4 AWQ/GPTQ)."""


def cost_per_million_tokens(tokens_per_second: float, hourly_usd: Decimal) -> Decimal | None:
    """USD per 1,000,000 tokens of a replica that costs `hourly_usd` and produces `tokens_per_second`:
    hourly / (tokens/s x 3600) x 1e6. None when the replica produces nothing (the cost is unbounded)."""
    if tokens_per_second <= 0:
        return None
    per_hour = Decimal(repr(tokens_per_second)) * SECONDS_PER_HOUR
    return hourly_usd / per_hour * 1_000_000


COMPUTE_PRECISION = {"fp32": "fp32", "fp16": "fp16", "bf16": "bf16", "fp8": "fp8", "int8": "fp8", "int4": "bf16"}
"""The tensor-core rate a weight precision runs its matmuls at: FP8 W8A8 at the fp8 peak; INT8 W8A8 at the int8
rate, which Ada and Hopper datasheets print equal to FP8 (an accelerator without an fp8 row falls back to bf16, an
understatement); INT4 W4A16 (AWQ, GPTQ) dequantizes to 16-bit (vLLM docs, Quantization)."""


def compute_peak_tflops(info: InstanceType, precision: str, catalog: Catalog) -> float | None:
    """Dense peak of one replica (all its accelerators) at the precision its matmuls run in; None when unknown."""
    peak = catalog.accelerator_peak(info.accelerator or "")
    if peak is None:
        return None
    rate = peak.dense_tflops.get(matmul_precision(info, precision, catalog))
    return rate * max(1, info.accelerator_count) if rate else None


def matmul_precision(info: InstanceType, precision: str, catalog: Catalog) -> str:
    """The peak a weight precision's matmuls run at on `info`: COMPUTE_PRECISION's, or bf16 where the accelerator
    has no row for it (an understatement)."""
    peak = catalog.accelerator_peak(info.accelerator or "")
    wanted = COMPUTE_PRECISION.get(precision, precision)
    return wanted if peak is not None and wanted in peak.dense_tflops else "bf16"


def compute_efficiency(info: InstanceType, precision: str, catalog: Catalog) -> float:
    """Share of that peak the matmuls reach (plan/roofline.py matmul_efficiency)."""
    peak = catalog.accelerator_peak(info.accelerator or "")
    return matmul_efficiency(matmul_precision(info, precision, catalog), peak.generation if peak else None)


def replica_roofline(
    info: InstanceType,
    memory: ServingMemory,
    spec: InferenceSpec,
    catalog: Catalog,
    precision: str | None = None,
    engine: str = "vllm",
) -> ReplicaBound | None:
    """The calibrated ceiling of one replica on every accelerator of `info` (plan/roofline.py replica_ceiling:
    decode at the measured share of the bandwidth, time-shared with prefill at the measured share of the dense
    peak); None when the bandwidth is unknown. `precision` is the weights' (default: the spec's); `engine` the server
    whose KV rule sizes the batch."""
    per_device = catalog.memory_bandwidth_gb_s(info.name)
    if per_device is None:
        return None
    m, shape = spec.model, spec.requests
    count = max(1, info.accelerator_count)

    def ceiling(efficiency: float | None = None) -> ReplicaCeiling:
        return replica_ceiling(
            bandwidth_gb_s=per_device * count,
            peak_tflops=compute_peak_tflops(info, precision or m.precision, catalog),
            memory_bytes=count * info.accelerator_memory_mib * MIB,
            utilization=m.gpu_memory_utilization,
            gpus=count,
            memory=memory,
            active_parameters=(m.active_parameters_billion or m.parameters_billion) * 1e9,
            max_num_seqs=m.max_concurrent_sequences,
            input_tokens=shape.input_tokens,
            output_tokens=shape.output_tokens,
            bandwidth_efficiency=DECODE_BANDWIDTH_EFFICIENCY if efficiency is None else efficiency,
            compute_efficiency=compute_efficiency(info, precision or m.precision, catalog)
            if efficiency is None
            else efficiency,
            engine=engine,
        )

    return ceiling_bound(ceiling(), per_device * count, shape.output_tokens, physical=ceiling(1.0))


class RegionTokens(Plain):
    """One region's replica: its token rate, the roofline's, its concurrency and a million tokens' cost."""

    region: str
    instance_type: str
    tokens_per_s: float
    """Planned: the region's throughput_rps_per_replica (else the fleet's) x output tokens per request."""
    bound_tokens_per_s: float | None
    concurrency: int | None
    """Sequences the replica decodes together (max_concurrent_sequences, lowered to what the KV cache holds)."""
    usd_per_hour: Decimal | None
    """On-demand price of one replica's instance in this region; None when the catalog has none."""
    usd_per_million_tokens: Decimal | None


class PrecisionPoint(Plain):
    """The same model on the same instance with its weights at another precision."""

    precision: str
    weights_bytes: int
    needed_bytes: int
    fits: bool
    concurrency: int | None
    bound_tokens_per_s: float | None
    tokens_per_s: float | None
    """The planned rate scaled by this precision's ceiling over the spec's (None where it does not fit)."""
    usd_per_million_tokens: Decimal | None


class ServingEconomics(Plain):
    output_tokens: int
    regions: list[RegionTokens]
    engine: str = "vllm"
    """The server whose KV rule admitted each precision and sized each ceiling (plan/roofline.py kv_memory_bytes)."""
    quantization_region: str | None = None
    quantization_instance: str | None = None
    quantization: list[PrecisionPoint] = []


def _alternative(spec: InferenceSpec, precision: str) -> ServingMemory:
    m = spec.model
    return serving_memory(
        m.parameters_billion,
        precision,
        m.kv_cache.layers,
        m.kv_cache.kv_heads,
        m.kv_cache.head_dim,
        m.kv_cache.precision,
        m.context_length_tokens,
    )


def serving_economics(
    spec: InferenceSpec,
    memory: ServingMemory,
    region_plans: list[RegionPlan],
    catalog: Catalog,
    engine: str = "vllm",
) -> ServingEconomics:
    """Per region (its planned type, measured rate and roofline), and the quantization table on the first priced
    region's type, both by the engine's KV rule."""
    regions = [
        _region_tokens(spec, region, rp, catalog)
        for region, rp in zip(spec.regions, region_plans, strict=True)
        if rp.instance_type is not None
    ]
    out = ServingEconomics(output_tokens=spec.requests.output_tokens, regions=regions, engine=engine)
    base = next((r for r in regions if r.usd_per_hour is not None and r.bound_tokens_per_s), None)
    info = catalog.instance(base.instance_type) if base else None
    if base is None or info is None or not base.bound_tokens_per_s:
        return out
    points = [_precision_point(spec, memory, info, base, catalog, engine, p) for p in PRECISIONS]
    return out.model_copy(
        update={"quantization_region": base.region, "quantization_instance": info.name, "quantization": points}
    )


def _region_tokens(spec: InferenceSpec, region: FleetRegion, rp: RegionPlan, catalog: Catalog) -> RegionTokens:
    """One region's planned rate (its measured requests/s x output tokens), its ceiling and a million tokens' cost."""
    assert rp.instance_type is not None
    planned = spec.throughput_of(region) * spec.requests.output_tokens
    price = catalog.on_demand(rp.instance_type, rp.region)
    hourly = price.usd_per_hour if price else None
    return RegionTokens(
        region=rp.region,
        instance_type=rp.instance_type,
        tokens_per_s=planned,
        bound_tokens_per_s=rp.bound.tokens_per_s if rp.bound else None,
        concurrency=rp.bound.batch if rp.bound else None,
        usd_per_hour=hourly,
        usd_per_million_tokens=cost_per_million_tokens(planned, hourly) if hourly is not None else None,
    )


def _precision_point(
    spec: InferenceSpec,
    memory: ServingMemory,
    info: InstanceType,
    base: RegionTokens,
    catalog: Catalog,
    engine: str,
    precision: str,
) -> PrecisionPoint:
    """One row of the quantization table: the rules `auto` uses (the engine's admission on the accelerators, the
    weights through host RAM), the ceiling at that precision, and the measured rate scaled by the ceilings' ratio."""
    alt = memory if precision == spec.model.precision else _alternative(spec, precision)
    fits = holds(info, alt, spec.model.gpu_memory_utilization, engine)[0] and host_ram_fits(info, alt.weights_bytes)
    bound = replica_roofline(info, alt, spec, catalog, precision, engine) if fits else None
    if bound is None or not base.bound_tokens_per_s:
        rate = None
    elif precision == spec.model.precision:
        rate = base.tokens_per_s  # the measured figure itself
    else:
        rate = base.tokens_per_s * bound.tokens_per_s / base.bound_tokens_per_s
    return PrecisionPoint(
        precision=precision,
        weights_bytes=alt.weights_bytes,
        needed_bytes=alt.needed_bytes,
        fits=fits,
        concurrency=bound.batch if bound else None,
        bound_tokens_per_s=bound.tokens_per_s if bound else None,
        tokens_per_s=rate,
        usd_per_million_tokens=(
            cost_per_million_tokens(rate, base.usd_per_hour) if rate and base.usd_per_hour else None
        ),
    )


__all__ = [
    "COMPUTE_PRECISION",
    "PRECISIONS",
    "PrecisionPoint",
    "RegionTokens",
    "ServingEconomics",
    "compute_peak_tflops",
    "cost_per_million_tokens",
    "replica_roofline",
    "serving_economics",
]
