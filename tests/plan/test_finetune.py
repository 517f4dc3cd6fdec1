"""LoRA/QLoRA memory, FLOPs and the one-node verdict, against figures computed by hand from the cited formulas
(LoRA: Hu et al. 2021 section 4.1; QLoRA: Dettmers et al. 2023 section 3; activations: Korthikanti et al. 2022
table 2; frozen-base FLOPs: Kaplan et al. 2020's 6N less the 2N of weight gradients)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpuinfra.catalog import load_catalog
from gpuinfra.plan import FinetunePlan, build_plan
from gpuinfra.plan.throughput import EFFICIENCY
from gpuinfra.spec import FinetuneSpec, read_org
from gpuinfra.validators import validate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "stacks" / "Pulumi.llm-finetune.yaml"


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    return yaml.safe_load(EXAMPLE.read_text())["config"]["gpuinfra:finetune"]


LLAMA31_8B_SHAPE = {"layers": 32, "hidden_size": 4096, "attention_heads": 32, "kv_heads": 8, "intermediate_size": 14336}
"""meta-llama/Llama-3.1-8B config.json."""


def plan_of(raw: dict[str, Any], **over: Any) -> tuple[FinetuneSpec, FinetunePlan]:
    data = copy.deepcopy(raw)
    data.update(over)
    spec = FinetuneSpec.model_validate(data)
    plan = build_plan(spec, read_org(ROOT / "stacks" / "org.yaml").org, load_catalog())
    assert isinstance(plan, FinetunePlan)
    return spec, plan


def test_qlora_70b_memory_by_hand(raw: dict[str, Any]) -> None:
    _, plan = plan_of(raw)
    mem = plan.memory
    assert mem is not None and plan.instance_type == "p5.4xlarge" and mem.gpus == 1
    # NF4 (4 bits) + double-quantized constants 8/64 + 32/(64*256) bits, over 70.6e9 parameters:
    assert mem.base_bytes == round(70.6e9 * (4 + 0.125 + 0.001953125) / 8) == 36_420_361_328
    # Rank 16 on all seven projections of Llama-3.1-70B (h 8192, 8 KV heads of 128, MLP 28672), 80 layers:
    per_layer = 16 * ((8192 + 8192) * 2 + (8192 + 1024) * 2 + (8192 + 28672) * 3)
    assert per_layer == 2_588_672
    assert mem.adapter_parameters == 80 * per_layer == 207_093_760
    # QLoRA's trainer keeps bf16 adapter weights 2 + grads 2 on the GPU; paged_adamw_32bit's two fp32 moments
    # (8 bytes) sit in paged memory the GPU evicts to host RAM (qlora.py: LoRA layers to bf16, optim default):
    assert mem.adapter_state_bytes == 207_093_760 * 4
    assert mem.paged_state_bytes == 207_093_760 * 8
    # Checkpointing: each layer keeps 2sbh, one layer's 34sbh is live during recompute (s 2048, b 1, h 8192):
    assert mem.activation_bytes == 80 * 2 * 2048 * 8192 + 34 * 2048 * 8192 == 3_254_779_904
    assert mem.per_gpu_bytes == 36_420_361_328 + 828_375_040 + 3_254_779_904
    assert mem.fits  # 40.5 GB + 10% reserve of the H100's 80 GiB


def test_lora_8b_memory_by_hand(raw: dict[str, Any]) -> None:
    base = {
        **raw["base_model"],
        "name": "llama-3.1-8b",
        "weights_prefix": "llama-3.1-8b/v2/",
        "parameters_billion": 8.03,
        "architecture": LLAMA31_8B_SHAPE,
    }
    _, plan = plan_of(
        raw,
        method="lora",
        base_model=base,
        lora={"rank": 8, "target_modules": ["q_proj", "v_proj"]},
        batch={"sequence_length": 4096, "micro_batch_size": 1, "gradient_checkpointing": False},
        instance_type="auto",
    )
    chosen = plan.chosen
    assert chosen is not None
    mem = chosen.memory
    assert mem.base_bytes == 8.03e9 * 2  # bf16
    # q: 8 x (4096 + 4096), v: 8 x (4096 + 1024), 32 layers:
    assert mem.adapter_parameters == 32 * (8 * 8192 + 8 * 5120) == 3_407_872
    # No checkpointing, FlashAttention: 34sbh a layer (Korthikanti table 2 without the 5as/h term):
    assert mem.activation_bytes == 32 * 34 * 4096 * 4096
    expected_per_gpu = -(-(16_060_000_000 + 3_407_872 * 16) // mem.gpus) + 32 * 34 * 4096 * 4096
    assert mem.per_gpu_bytes == expected_per_gpu


def test_frozen_base_flops_and_run_hours(raw: dict[str, Any]) -> None:
    _, plan = plan_of(raw)
    # 150M tokens (50M x 3 epochs); 2N forward + 2N activation gradients + 2N recomputed forward:
    assert plan.flops == pytest.approx(6 * 70.6e9 * 150e6)
    _, plain = plan_of(raw, batch={**raw["batch"], "gradient_checkpointing": False})
    assert plain.flops == pytest.approx(4 * 70.6e9 * 150e6)
    chosen = plan.chosen
    assert chosen is not None and chosen.hours is not None
    # One H100 (989.4 bf16 TFLOPS, 3,350 GB/s), the step model of a frozen base (plan/throughput.py) at 2,048
    # tokens a step: 4N matmuls and the recomputed forward's 2N at the GEMM efficiency, causal attention
    # 6 L s h a token at the attention efficiency, element-wise bytes for the two passes a frozen base runs (4/6):
    e, tokens = EFFICIENCY, 2048
    gemm = 4 * 70.6e9 * tokens / (989.4e12 * e.gemm["bf16"])
    attention = 6 * 80 * 2048 * 8192 * tokens / (989.4e12 * e.attention)
    elementwise = e.elementwise_bytes["bf16"] * 80 * 8192 * tokens / 3350e9 * 4 / 6
    # QLoRA dequantizes the NF4 weights (0.516 bytes) to bf16 (written, then read: 4 bytes) before each of the
    # forward, the activation-gradient pass and the recomputed forward (QLoRA section 3):
    dequantize = 70.6e9 * ((4 + 0.125 + 0.001953125) / 8 + 4) * 3 / 3350e9
    seconds = gemm * 1.5 + attention + elementwise + dequantize
    assert chosen.hours == pytest.approx(150e6 / (tokens / seconds) / 3600, rel=0.01)
    assert plan.mfu_source.startswith("step model")


def test_cheapest_and_smallest_are_fitting_and_ordered(raw: dict[str, Any]) -> None:
    _, plan = plan_of(raw, instance_type="auto")
    assert plan.cheapest is not None and plan.smallest is not None
    assert plan.cheapest.memory.fits and plan.smallest.memory.fits
    assert plan.chosen == plan.cheapest
    assert plan.cheapest.cost_usd is not None and plan.smallest.cost_usd is not None
    assert plan.cheapest.cost_usd <= plan.smallest.cost_usd
    assert plan.smallest.gpus == 1


def test_full_70b_is_refused_toward_training(raw: dict[str, Any]) -> None:
    spec, plan = plan_of(raw, method="full")
    assert plan.refusal is not None and plan.instance_type is None
    org = read_org(ROOT / "stacks" / "org.yaml").org
    findings = validate(spec, plan, org, load_catalog())
    refused = [f for f in findings if f.rule == "finetune-needs-training-stack"]
    assert refused and "training stack" in refused[0].message and refused[0].path == ("method",)


def test_run_needing_more_than_one_node_is_refused(raw: dict[str, Any]) -> None:
    big = {**raw["base_model"], "parameters_billion": 2000}
    spec, plan = plan_of(raw, method="lora", base_model=big, instance_type="auto")
    assert plan.refusal is not None and plan.cheapest is None
    findings = validate(spec, plan, read_org(ROOT / "stacks" / "org.yaml").org, load_catalog())
    assert any(f.rule == "finetune-needs-training-stack" for f in findings)


def test_named_type_too_small_is_an_error(raw: dict[str, Any]) -> None:
    spec, plan = plan_of(raw, instance_type="g6.xlarge")  # one L4, 22.4 GiB: 43 GB does not fit
    findings = validate(spec, plan, read_org(ROOT / "stacks" / "org.yaml").org, load_catalog())
    assert [f.rule for f in findings if f.rule == "finetune-does-not-fit"] == ["finetune-does-not-fit"]


def test_a_mixture_of_experts_base_computes_on_its_active_parameters(raw: dict[str, Any]) -> None:
    # base_model.active_parameters_billion: 4N (6N with checkpointing) FLOPs a token on the active parameters;
    # the frozen weights in memory stay all of them.
    _, dense = plan_of(raw)
    _, moe = plan_of(raw, base_model={**raw["base_model"], "active_parameters_billion": 17.65})
    assert moe.flops == pytest.approx(dense.flops * 17.65 / 70.6)
    assert dense.memory is not None and moe.memory is not None
    assert moe.memory.base_bytes == dense.memory.base_bytes


LLAMA31_8B = {
    "name": "llama-3.1-8b-fp8",
    "weights_prefix": "llama-3.1-8b-fp8/v1/",
    "parameters_billion": 8.03,
    "precision": "fp8",
    "architecture": {**LLAMA31_8B_SHAPE, "vocab_size": 128256},
}
"""An FP8 checkpoint of Llama 3.1 8B."""


def test_lora_on_an_fp8_base(raw: dict[str, Any]) -> None:
    _, plan = plan_of(
        raw,
        method="lora",
        base_model={**raw["base_model"], **LLAMA31_8B},
        batch={"sequence_length": 4096, "micro_batch_size": 1, "gradient_checkpointing": False},
        instance_type="auto",
    )
    chosen = plan.chosen
    assert chosen is not None and chosen.hours is not None
    # Linear layers one byte a weight, the embedding and output layers (2 x 128,256 x 4,096) in 16 bit:
    embedding = 2 * 128256 * 4096
    assert chosen.memory.base_bytes == round((8.03e9 - embedding) + 2 * embedding) == 9_080_673_152
    # FP8 matmuls need Ada, Hopper or Blackwell: every type the plan weighs has an fp8 peak in the catalog.
    catalog = load_catalog()
    for c in (plan.cheapest, plan.smallest, chosen):
        assert c is not None
        peak = catalog.accelerator_peak(c.accelerator)
        assert peak is not None and "fp8" in peak.dense_tflops
    assert plan.mfu_source.startswith("step model") and chosen.mfu == plan.mfu


def test_qlora_is_not_an_fp8_run(raw: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="QLoRA stores the base in 4-bit NF4"):
        plan_of(raw, method="qlora", base_model={**raw["base_model"], **LLAMA31_8B})
