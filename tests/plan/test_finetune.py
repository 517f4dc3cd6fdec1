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
from gpuinfra.spec import FinetuneSpec, read_org
from gpuinfra.validators import validate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "stacks" / "Pulumi.llm-finetune.yaml"


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    return yaml.safe_load(EXAMPLE.read_text())["config"]["gpuinfra:finetune"]


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
        "architecture": {
            "layers": 32,
            "hidden_size": 4096,
            "attention_heads": 32,
            "kv_heads": 8,
            "intermediate_size": 14336,
        },
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
    # One H100 at its bf16 dense peak (989.4 TFLOPS, catalog) and the calibrated MFU 0.48:
    assert chosen.hours == pytest.approx(6 * 70.6e9 * 150e6 / (989.4e12 * 0.48) / 3600, rel=0.01)


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
