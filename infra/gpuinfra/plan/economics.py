"""The training spec's money questions, wired: the parallel layout's per-GPU memory, the run's days, GPU-hours
and cost, and owning versus renting for an on-premises site. Each returns its plan, or a note saying which
input is missing (unknown is never zero)."""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal

from gpuinfra.catalog import Catalog
from gpuinfra.catalog.models import AcceleratorPeak, InstanceType
from gpuinfra.plan.capacity import split_capacity
from gpuinfra.plan.checkpoint import HOURS_PER_MONTH, CheckpointPlan
from gpuinfra.plan.flops import DEFAULT_MFU, DEFAULT_SCALING_PER_DOUBLING, training_flops
from gpuinfra.plan.interruption import spot_interruption
from gpuinfra.plan.layout import Budget, Layout, LayoutMemory, Shape, fits_on, layout_memory
from gpuinfra.plan.memory import MIB, model_memory
from gpuinfra.plan.ownership import OwnershipPlan, ownership_plan
from gpuinfra.plan.racks import RackLayout
from gpuinfra.plan.rates import cluster_hourly, lowest_rate, node_rates
from gpuinfra.plan.restart import (
    DETECTION_SOURCE,
    REPLACEMENT_SOURCE,
    START_SOURCE,
    WARMUP_SOURCE,
    RestartParts,
)
from gpuinfra.plan.runtime import RunInputs, RunPlan, plan_run
from gpuinfra.plan.throughput import ModelShape, Parallel, StepInputs, hardware
from gpuinfra.spec import Organization, TrainingSpec

MAX_SWEEP_NODES = 4096


def sweep_limit(nodes: int) -> int:
    """The most nodes the run sweep tries for a cluster of `nodes`: eight times it (at least 64), never past
    MAX_SWEEP_NODES."""
    return min(MAX_SWEEP_NODES, max(64, 8 * nodes))


def dense_peak(catalog: Catalog, info: InstanceType, precision: str) -> tuple[AcceleratorPeak, float] | str:
    """The accelerator's catalog peak and its dense TFLOPS at `precision`, or the note saying the run cannot be
    planned without them (every cloud's run planner starts here)."""
    peak = catalog.accelerator_peak(info.accelerator or "")
    tflops = peak.dense_tflops.get(precision) if peak else None
    if peak is None or tflops is None:
        return f"no dense {precision} peak for {info.accelerator} in the catalog: run not planned"
    return peak, tflops


def _shape(spec: TrainingSpec) -> Shape | None:
    arch = spec.model.architecture
    if arch is None:
        return None
    return Shape(
        parameters=spec.model.parameters_billion * 1e9,
        layers=arch.layers,
        hidden_size=arch.hidden_size,
        attention_heads=arch.attention_heads,
        sequence_length=arch.sequence_length,
        micro_batch_size=arch.micro_batch_size,
        vocab_size=arch.vocab_size or 0,
    )


def _layout(spec: TrainingSpec, info: InstanceType) -> Layout:
    par = spec.model.parallelism
    arch = spec.model.architecture
    return Layout(
        tensor=par.tensor or info.accelerator_count,
        pipeline=par.pipeline,
        zero_stage=par.zero_stage,
        recompute=arch.recompute if arch else "selective",
        sequence_parallel=par.sequence_parallel,
        context=par.context,
        grad_accumulation=par.grad_accumulation,
    )


def training_layout(spec: TrainingSpec, info: InstanceType) -> LayoutMemory | None:
    """Per-GPU memory of the spec's parallel layout; None without `model.architecture` (the flat share applies)."""
    shape = _shape(spec)
    if shape is None:
        return None
    return layout_memory(_layout(spec, info), shape, _budget(spec, info, spec.compute.node_count))


def _budget(spec: TrainingSpec, info: InstanceType, nodes: int) -> Budget:
    return Budget(
        precision=spec.model.precision,
        optimizer=spec.model.optimizer,
        gpus=nodes * info.accelerator_count,
        gpus_per_node=info.accelerator_count,
        gpu_bytes=info.accelerator_memory_mib * MIB,
        reserve_fraction=spec.model.parallelism.reserve_fraction,
        nvlink_gpus=info.nvlink_domain_gpus,
    )


def _fits(spec: TrainingSpec, info: InstanceType) -> Callable[[int], bool]:
    """Whether the model fits on n nodes of the type, the way the plan checks the spec's own count."""
    shape, layout = _shape(spec), _layout(spec, info)
    model = spec.model

    def fits(nodes: int) -> bool:
        if shape is None:
            return model_memory(model, nodes * info.accelerator_count, info.accelerator_memory_mib).fits
        return fits_on(layout, shape, _budget(spec, info, nodes))

    return fits


def training_ownership(
    spec: TrainingSpec, org: Organization, catalog: Catalog, racks: RackLayout | None
) -> tuple[OwnershipPlan | None, str | None]:
    if spec.provider != "onprem":
        return None, None
    site = org.onprem_sites.get(spec.site or "")
    own = site.ownership if site else None
    if own is None:
        return None, f"site {spec.site} gives no ownership costs (onprem_sites.{spec.site}.ownership)"
    if racks is None:
        return None, "no rack plan (no power figure for the node): power cost unknown"
    rent: dict[str, Decimal | None] = {}
    sources: list[str] = []
    if own.aws_equivalent:
        rates = node_rates(catalog, own.aws_equivalent, own.aws_region)
        rent = {"on-demand": rates.on_demand, "spot": rates.spot, "capacity block": rates.capacity_block}
        sources = rates.sources
    power = catalog.node_power(spec.compute.instance_type)
    if power is not None:
        sources = sorted({*sources, power.source})
    plan = ownership_plan(
        spec.compute.node_count,
        own.capex_per_node_usd,
        own.life_years,
        racks.it_kw,
        own.power_draw_fraction,
        racks.pue,
        own.power_usd_per_kwh,
        own.colocation_usd_per_kw_month,
        own.support_usd_per_node_year,
        own.aws_equivalent,
        own.aws_region,
        rent,
        sources,
    )
    return plan, None


def restart_parts(catalog: Catalog, info: InstanceType, checkpoint: CheckpointPlan | None) -> RestartParts | None:
    """What one restart is derived from: the checkpoint comes back at the bandwidth it was written at (FSx for
    Lustre's throughput per TiB is one figure for reads and writes: FSx Lustre user guide, "Performance
    characteristics of SSD and HDD storage classes"), capped by the nodes' network; None without a checkpoint."""
    if checkpoint is None:
        return None
    return RestartParts(
        replacement_seconds=catalog.serving_figure("boot_seconds").value,
        warmup_seconds=catalog.serving_figure("engine_init_cached_seconds").value,
        checkpoint_gb=checkpoint.size_gb,
        filesystem_read_gb_s=checkpoint.write_bandwidth_gb_s,
        node_network_gb_s=info.network_baseline_gbps / 8,
        sources=[DETECTION_SOURCE, REPLACEMENT_SOURCE, START_SOURCE, WARMUP_SOURCE],
    )


def _kept_per_doubling(step: StepInputs, domain_tflops: float, nodes: int, info: InstanceType) -> float:
    """The share of per-GPU throughput the step model keeps per doubling from one NVLink domain to `nodes` (what
    the plan shows beside the rate; each count's rate comes from the step model itself)."""
    doublings = math.log2(nodes / info.nodes_per_nvlink_domain) if nodes > info.nodes_per_nvlink_domain else 0.0
    kept = step.tflops_per_gpu(nodes * info.accelerator_count) / domain_tflops
    return min(1.0, kept ** (1 / doublings)) if doublings else 1.0


def step_inputs(spec: TrainingSpec, catalog: Catalog, info: InstanceType) -> StepInputs | None:
    """The step model's inputs from the spec's architecture and layout (None without an architecture, or when
    the catalog lacks the accelerator's memory bandwidth or peak: the default MFU then applies)."""
    arch, model = spec.model.architecture, spec.model
    peak = catalog.accelerator_peak(info.accelerator or "")
    hbm = catalog.memory_bandwidth_gb_s(info.name)
    if arch is None or peak is None or hbm is None or model.precision not in peak.dense_tflops:
        return None
    par = model.parallelism
    tensor = par.tensor or info.nvlink_gpus
    gpus = spec.compute.node_count * info.accelerator_count
    data = max(1, gpus // (tensor * par.pipeline * par.context))
    total = model.parameters_billion * 1e9
    moe_layers = arch.moe_layers if arch.moe_layers is not None else (arch.layers if arch.experts > 1 else 0)
    shape = ModelShape(
        parameters=total,
        active_parameters=(model.active_parameters_billion or model.parameters_billion) * 1e9,
        layers=arch.layers,
        hidden_size=arch.hidden_size,
        sequence_length=arch.sequence_length,
        experts=arch.experts,
        top_k=arch.experts_per_token,
        moe_layers=moe_layers,
        vocab_size=arch.vocab_size or 0,
    )
    layout = Parallel(
        gpus=gpus,
        tensor=tensor,
        pipeline=par.pipeline,
        context=par.context,
        expert=par.expert,
        micro_batch=arch.micro_batch_size,
        global_batch=arch.global_batch_size or data * arch.micro_batch_size,
        zero_stage=par.zero_stage,
        recompute=arch.recompute,
    )
    hw = hardware(
        info.accelerator or "",
        dict(peak.dense_tflops),
        hbm,
        info.network_baseline_gbps,
        info.accelerator_count,
        info.nvlink_gpus,
        catalog.nvlink_gb_s(info.accelerator or ""),
        peak.generation,
    )
    return StepInputs(shape=shape, layout=layout, hardware=hw, precision=model.precision)


def training_run(
    spec: TrainingSpec,
    catalog: Catalog,
    info: InstanceType,
    checkpoint: CheckpointPlan | None,
    ownership: OwnershipPlan | None,
) -> tuple[RunPlan | None, str | None]:
    """The run plan of the spec's `run` (None without one), or why it cannot be planned."""
    run = spec.run
    if run is None:
        return None, None
    peaked = dense_peak(catalog, info, spec.model.precision)
    if isinstance(peaked, str):
        return None, peaked
    peak, tflops = peaked
    per_doubling = run.scaling_per_doubling or DEFAULT_SCALING_PER_DOUBLING[spec.interconnect.type]
    if per_doubling is None:
        return None, (
            f"no published scaling figure for interconnect {spec.interconnect.type}: set run.scaling_per_doubling"
        )
    price, price_sources, floor = _node_price(spec, catalog, info, ownership)
    inputs = _run_inputs(spec, catalog, info, checkpoint, peak, tflops, per_doubling, price_sources)
    nodes = spec.compute.node_count
    return plan_run(inputs, nodes, run.target_days, price, _fits(spec, info), sweep_limit(nodes), floor), None


def _node_price(
    spec: TrainingSpec, catalog: Catalog, info: InstanceType, ownership: OwnershipPlan | None
) -> tuple[Callable[[int], Decimal | None], list[str], Decimal | None]:
    """What `nodes` nodes cost an hour (the capacity mix on AWS, the owned rate on premises, else unknown), the
    sources of that price, and the lowest rate a node can cost (the run sweep's floor)."""
    capacity = spec.compute.capacity
    if spec.provider == "aws" and spec.region:
        rates = node_rates(catalog, info.name, spec.region)

        def price(nodes: int) -> Decimal | None:
            base = capacity.on_demand_base if capacity.type == "spot" else nodes
            return cluster_hourly(rates, capacity.type, *split_capacity(nodes, base, 0))

        return price, rates.sources, lowest_rate(rates, capacity.type)
    if ownership is not None:
        per_node = ownership.total_monthly_usd / ownership.nodes / Decimal(repr(HOURS_PER_MONTH))

        def owned(nodes: int) -> Decimal | None:
            return per_node * nodes

        return owned, ["ownership (organization file)", *ownership.sources], per_node

    def unknown(nodes: int) -> Decimal | None:
        return None

    return unknown, [], None


def _run_inputs(
    spec: TrainingSpec,
    catalog: Catalog,
    info: InstanceType,
    checkpoint: CheckpointPlan | None,
    peak: AcceleratorPeak,
    tflops: float,
    per_doubling: float,
    price_sources: list[str],
) -> RunInputs:
    """The run's inputs, each with its source: the step model's rate when the spec gives an architecture (and no
    measured MFU or scaling), else the MFU and per-doubling defaults."""
    run = spec.run
    assert run is not None
    precision = spec.model.precision
    active = spec.model.active_parameters_billion or spec.model.parameters_billion
    step = None if run.mfu or run.scaling_per_doubling else step_inputs(spec, catalog, info)
    domain_tflops = step.tflops_per_gpu(info.nvlink_gpus) if step else None
    if step and domain_tflops:
        per_doubling = _kept_per_doubling(step, domain_tflops, spec.compute.node_count, info)
    capacity = spec.compute.capacity
    return RunInputs(
        tokens=run.tokens_billion * 1e9,
        active_parameters=active * 1e9,
        flops=training_flops(active * 1e9, run.tokens_billion * 1e9),
        precision=precision,
        peak_tflops=tflops,
        peak_source=peak.source,
        mfu=run.mfu or (domain_tflops / tflops if domain_tflops else DEFAULT_MFU[precision]),
        mfu_source="run.mfu"
        if run.mfu
        else "step model of the architecture and layout (plan/throughput.py), one NVLink domain"
        if step
        else "default (plan/flops.py DEFAULT_MFU)",
        scaling_per_doubling=per_doubling,
        scaling_source="run.scaling_per_doubling"
        if run.scaling_per_doubling
        else "the layout's communication at a fixed global batch (plan/throughput.py)"
        if step
        else f"default for {spec.interconnect.type} (plan/flops.py)",
        gpus_per_node=info.accelerator_count,
        nodes_per_domain=info.nodes_per_nvlink_domain,
        write_seconds=checkpoint.write_seconds if checkpoint else None,
        interval_minutes=spec.checkpointing.interval_minutes if spec.checkpointing else None,
        restart_minutes=run.restart_minutes,
        restart_parts=restart_parts(catalog, info, checkpoint),
        node_mtbf_hours=spec.failure.node_mtbf_hours,
        spot_interruption_rate_monthly=spot_interruption(spec, catalog, info.name)[0],
        capacity=capacity.type if spec.provider == "aws" else "owned",
        on_demand_base=capacity.on_demand_base,
        price_sources=price_sources,
        step=step,
    )


__all__ = [
    "MAX_SWEEP_NODES",
    "dense_peak",
    "restart_parts",
    "step_inputs",
    "sweep_limit",
    "training_layout",
    "training_ownership",
    "training_run",
]
