"""The fine-tuning plan: memory of the run, the smallest and the cheapest catalog instance that fits on one node,
the run's hours and cost at the planner's calibrated utilisation, and the vCPU quotas the Batch queue needs."""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

from gpuinfra.catalog import Catalog
from gpuinfra.catalog.models import InstanceType
from gpuinfra.clouds import cloud_of
from gpuinfra.plan.adapters import (
    DOUBLE_QUANT_CONSTANT_BITS,
    NF4_BITS,
    FinetuneMemory,
    Shape,
    finetune_flops,
    finetune_memory,
)
from gpuinfra.plan.flops import DEFAULT_MFU
from gpuinfra.plan.memory import MIB, Plain
from gpuinfra.plan.quotas import InstanceDemand, QuotaNeed, needs_in
from gpuinfra.plan.rates import node_rates
from gpuinfra.plan.throughput import ModelShape, Parallel, hardware, step_time
from gpuinfra.spec import FinetuneSpec, Organization


class Candidate(Plain):
    """One catalog type the run fits on, with the run's hours and cost on it."""

    instance_type: str
    gpus: int
    accelerator: str
    memory: FinetuneMemory
    hours: float | None
    """None when the catalog has no dense peak for the accelerator at the precision."""
    hourly_usd: Decimal | None
    cost_usd: Decimal | None
    mfu: float | None = None
    """The step model's utilisation on this type (None: run.mfu or the default applies)."""


class FinetunePlan(Plain):
    workload: Literal["finetune"] = "finetune"
    method: str
    instance_type: str | None
    """The type the job definition runs on (the spec's, else the cheapest that fits); None when nothing fits."""
    gpus: int
    device_resource: str | None = None
    """The extended resource a pod requests the type's accelerators as (the catalog's device, `nvidia.com/gpu`
    for an NVIDIA GPU): what a job on a Kubernetes training cluster asks for and tolerates."""
    vcpus: int
    memory_mib: int
    """Instance memory the job definition may ask for (what Batch can place on the type, less the agent's share)."""
    memory: FinetuneMemory | None
    smallest: Candidate | None
    """Fewest accelerators, then the least memory each, then the lowest hourly rate."""
    cheapest: Candidate | None
    """Lowest cost per run (hours at the calibrated MFU x the capacity's hourly rate)."""
    chosen: Candidate | None
    tokens: float
    flops: float
    mfu: float
    mfu_source: str
    capacity: str
    quotas: list[QuotaNeed]
    price_sources: list[str] = []
    refusal: str | None = None
    """Why this run belongs in a training stack (method full, or no single node fits)."""


BATCH_AGENT_MEMORY_FRACTION = 0.05
"""Batch jobs cannot ask for all of an instance's memory: the ECS agent and the OS keep some. AWS Batch user guide,
"Compute resource memory management": reserve a little for them; 5% is our assumption, not an AWS figure."""


def _candidate(spec: FinetuneSpec, info: InstanceType, catalog: Catalog, flops: float, mfu: float) -> Candidate:
    base, arch = spec.base_model, spec.base_model.architecture
    memory = finetune_memory(
        Shape(
            layers=arch.layers,
            hidden_size=arch.hidden_size,
            attention_heads=arch.attention_heads,
            kv_heads=arch.kv_heads,
            intermediate_size=arch.intermediate_size,
            vocab_size=arch.vocab_size or 0,
        ),
        base.parameters_billion * 1e9,
        spec.method,
        base.precision,
        spec.lora.rank,
        list(spec.lora.target_modules),
        spec.batch.sequence_length,
        spec.batch.micro_batch_size,
        spec.batch.gradient_checkpointing,
        info.accelerator_count,
        info.accelerator_memory_mib * MIB,
        spec.reserve_fraction,
    )
    peak = catalog.accelerator_peak(info.accelerator or "")
    tflops = peak.dense_tflops.get(base.precision) if peak else None
    rate = None if spec.run.mfu else step_rate(spec, info, catalog)
    tokens = spec.run.tokens_million_per_epoch * 1e6 * spec.run.epochs
    step_mfu = round(flops / tokens * rate / (tflops * 1e12), 3) if rate and tflops else None
    mfu = step_mfu or mfu
    hours = flops / (info.accelerator_count * tflops * 1e12 * mfu) / 3600 if tflops else None
    rates = node_rates(catalog, info.name, spec.region)
    hourly = rates.spot if spec.capacity.type == "spot" else rates.on_demand
    cost = (hourly * Decimal(repr(hours))).quantize(Decimal("0.01")) if hourly is not None and hours else None
    return Candidate(
        instance_type=info.name,
        gpus=info.accelerator_count,
        accelerator=info.accelerator or "",
        memory=memory,
        hours=hours,
        hourly_usd=hourly,
        cost_usd=cost,
        mfu=step_mfu,
    )


def step_rate(spec: FinetuneSpec, info: InstanceType, catalog: Catalog) -> float | None:
    """Tokens/s per GPU of the run on one node of `info`, from the step model (plan/throughput.py): the frozen
    base's matmuls at its precision's peak (QLoRA's NF4 weights are dequantized to bf16 for them), sharded over
    the node's GPUs (FSDP: gathered every micro-batch, no base gradients), one micro-batch a GPU a step. None when
    the catalog lacks the accelerator's peak or memory bandwidth."""
    base, arch = spec.base_model, spec.base_model.architecture
    precision = "bf16" if spec.method == "qlora" else base.precision
    peak = catalog.accelerator_peak(info.accelerator or "")
    hbm = catalog.memory_bandwidth_gb_s(info.name)
    if peak is None or hbm is None or precision not in peak.dense_tflops:
        return None
    shape = ModelShape(
        parameters=base.parameters_billion * 1e9,
        active_parameters=(base.active_parameters_billion or base.parameters_billion) * 1e9,
        layers=arch.layers,
        hidden_size=arch.hidden_size,
        sequence_length=spec.batch.sequence_length,
        frozen_base=True,
        stored_bytes=(NF4_BITS + DOUBLE_QUANT_CONSTANT_BITS) / 8 if spec.method == "qlora" else None,
    )
    gpus = info.accelerator_count
    layout = Parallel(
        gpus=gpus,
        micro_batch=spec.batch.micro_batch_size,
        global_batch=gpus * spec.batch.micro_batch_size,
        zero_stage=3,
        recompute="full" if spec.batch.gradient_checkpointing else "selective",
    )
    hw = hardware(
        info.accelerator or "",
        dict(peak.dense_tflops),
        hbm,
        info.network_baseline_gbps,
        gpus,
        info.nvlink_gpus,
        catalog.nvlink_gb_s(info.accelerator or ""),
        peak.generation,
    )
    return step_time(shape, layout, hw, precision).tokens_per_s


def _candidates(spec: FinetuneSpec, catalog: Catalog, flops: float, mfu: float) -> list[Candidate]:
    """Every GPU type priced in the region whose one node holds the run."""
    out = []
    for info in catalog.find_instances(region=spec.region):
        if info.onprem or not info.accelerator_count or info.accelerator_kind not in (None, "gpu"):
            continue
        found = _candidate(spec, info, catalog, flops, mfu)
        if found.memory.fits:
            out.append(found)
    return out


def _quotas(spec: FinetuneSpec, org: Organization, catalog: Catalog, instance: str | None) -> list[QuotaNeed]:
    """One instance at a time in each compute environment: spot, and on-demand when it is the fallback."""
    account = org.accounts.get(spec.account)
    if instance is None or account is None:
        return []
    spot = spec.capacity.type == "spot"
    demands = [InstanceDemand(spec.region, instance, "spot" if spot else "on_demand", 1)]
    if spot and spec.capacity.on_demand_fallback:
        demands.append(InstanceDemand(spec.region, instance, "on_demand", 1))
    return needs_in(cloud_of(spec), demands, catalog, spec.account, account.id, account.quotas)


def plan_finetune(spec: FinetuneSpec, org: Organization, catalog: Catalog) -> FinetunePlan:
    tokens = spec.run.tokens_million_per_epoch * 1e6 * spec.run.epochs
    base = spec.base_model
    active = (base.active_parameters_billion or base.parameters_billion) * 1e9
    flops = finetune_flops(active, tokens, spec.batch.gradient_checkpointing)
    mfu = spec.run.mfu or DEFAULT_MFU[spec.base_model.precision]
    refusal = None
    fits = [] if spec.method == "full" else _candidates(spec, catalog, flops, mfu)
    smallest = min(
        [c for c in fits if c.hours is not None],
        key=lambda c: (c.gpus, c.memory.gpu_bytes, c.hourly_usd if c.hourly_usd is not None else Decimal("Infinity")),
        default=None,
    )
    priced = [c for c in fits if c.cost_usd is not None]
    cheapest = min(priced, key=lambda c: (c.cost_usd, c.gpus), default=None)
    chosen = cheapest
    if spec.instance_type != "auto":
        info = catalog.instance(spec.instance_type)
        assert info is not None, "references are resolved before planning"
        chosen = None if spec.method == "full" else _candidate(spec, info, catalog, flops, mfu)
    if spec.method == "full":
        refusal = (
            "full fine-tuning updates every weight: gradients and optimizer state for all of them, as pre-training"
        )
    elif not fits and (chosen is None or not chosen.memory.fits):
        refusal = "no single catalog node in the region holds the run (base, adapter state and activations)"
    info = catalog.instance(chosen.instance_type) if chosen else None
    mfu_source = "run.mfu" if spec.run.mfu else "default (plan/flops.py DEFAULT_MFU)"
    if chosen and chosen.mfu:
        mfu, mfu_source = chosen.mfu, "step model of the frozen base on this node (plan/throughput.py)"
    return FinetunePlan(
        method=spec.method,
        instance_type=chosen.instance_type if chosen else None,
        gpus=info.accelerator_count if info else 0,
        device_resource=catalog.k8s_resource(info.name) if info else None,
        vcpus=info.vcpu if info else 0,
        memory_mib=int(info.memory_gib * 1024 * (1 - BATCH_AGENT_MEMORY_FRACTION)) if info else 0,
        memory=chosen.memory if chosen else None,
        smallest=smallest,
        cheapest=cheapest,
        chosen=chosen,
        tokens=tokens,
        flops=flops,
        mfu=mfu,
        mfu_source=mfu_source,
        capacity=spec.capacity.type,
        quotas=_quotas(spec, org, catalog, chosen.instance_type if chosen and refusal is None else None),
        price_sources=node_rates(catalog, chosen.instance_type, spec.region).sources if chosen else [],
        refusal=refusal,
    )


__all__ = ["BATCH_AGENT_MEMORY_FRACTION", "Candidate", "FinetunePlan", "plan_finetune", "step_rate"]
