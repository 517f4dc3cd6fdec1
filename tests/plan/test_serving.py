"""Serving plan: instance auto-choice, replicas from demand, warm pools from the cold start."""

from __future__ import annotations

from gpuinfra.catalog import load_catalog
from gpuinfra.plan import InferencePlan
from gpuinfra.plan.serving import choose_instance, warm_pool_size
from helpers import checked


def plan_of(**spec: object) -> InferencePlan:
    plan = checked("chat-serve", spec=spec).plan  # type: ignore[arg-type]
    assert isinstance(plan, InferencePlan)
    return plan


def test_auto_picks_the_cheapest_fitting_l4_type() -> None:
    plan = plan_of()
    assert plan.choice.chosen == "g6.xlarge"
    prices = [c.usd_per_hour_total for c in plan.choice.candidates if c.fits and c.usd_per_hour_total is not None]
    assert prices == sorted(prices)


ONLY_USE1 = {
    "regions": [
        {
            "region": "us-east-1",
            "min_replicas": 1,
            "max_replicas": 2,
            "peak_rps": 1,
            "certificate_arn": "arn:aws:acm:us-east-1:222222222222:certificate/x",
        }
    ]
}


def test_auto_never_picks_a_type_the_cuda_server_cannot_run() -> None:
    # Inferentia2 holds the model and is the cheapest type in us-east-1 alone, but vLLM's CUDA image
    # cannot drive it: auto weighs only NVIDIA types.
    plan = plan_of(**{"instance.gpu": None, **ONLY_USE1})
    by_type = {c.instance_type: c for c in plan.choice.candidates}
    assert by_type["inf2.xlarge"].fits
    assert by_type["inf2.xlarge"].usd_per_hour_total < by_type["g6.xlarge"].usd_per_hour_total
    assert "cannot run the cuda server" in (by_type["inf2.xlarge"].rejected or "")
    assert plan.choice.chosen == "g6.xlarge"
    for candidate in plan.choice.candidates:
        if candidate.instance_type.startswith(("inf", "trn")):
            assert candidate.rejected
    # A T4 (g4dn) admits 8 GB of weights now that one sequence, not 24, must fit, but cannot run FP8 weights
    # (compute capability 7.5; vLLM's FP8 W8A8 needs 8.9: vLLM docs, Quantization, FP8).
    assert by_type["g4dn.xlarge"].fits
    assert by_type["g4dn.xlarge"].rejected == "T4 cannot run fp8 weights (compute capability 8.9 or later)"


def test_a_neuron_server_is_weighed_on_inferentia_only() -> None:
    plan = plan_of(
        **{
            "instance.gpu": None,
            "server_kind": "neuron",
            "server_image": "public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1",
            "server_args": ["--device", "neuron"],
            **ONLY_USE1,
        }
    )
    assert plan.choice.chosen == "inf2.xlarge"


def test_auto_never_picks_an_invalid_tensor_parallel_size() -> None:
    # 6 accelerators (inf2.24xlarge): 32 attention heads do not divide over 6 ranks, and 8 KV heads and 6
    # ranks do not divide each other; vLLM refuses --tensor-parallel-size 6 for either reason.
    neuron = {"instance.gpu": None, "server_kind": "neuron", "server_args": ["--device", "neuron"]}
    plan = plan_of(**neuron)
    by_type = {c.instance_type: c for c in plan.choice.candidates}
    assert by_type["inf2.24xlarge"].rejected == "32 attention heads do not divide over 6 tensor-parallel ranks"
    assert plan.choice.chosen != "inf2.24xlarge"
    plan = plan_of(**neuron, **{"model.attention_heads": None})
    by_type = {c.instance_type: c for c in plan.choice.candidates}
    assert by_type["inf2.24xlarge"].rejected == "8 KV heads and 6 tensor-parallel ranks: neither divides the other"


def test_no_instance_holds_only_when_none_holds() -> None:
    # Two regions where one fitting type has no price: the reason names the price, not "holds".
    # One 10M-token sequence's fp8 KV cache is 655 GB: no serving type admits it.
    huge = plan_of(**{"model.context_length_tokens": 10_000_000})
    assert huge.choice.chosen is None
    assert huge.choice.reason == "no instance holds the model"
    # Types that hold the model but have no price in one region: the reason is the price.
    plan = plan_of()
    unpriced = choose_instance(
        "auto", "L4", plan.memory, 0.9, ["us-east-1", "xx-nowhere-1"], load_catalog(), "cuda", 32, 8
    )
    assert unpriced.chosen is None
    assert "no instance holds" not in unpriced.reason
    assert unpriced.reason.startswith("the types that hold the model are unusable: no on-demand price in xx-nowhere-1")
    assert "g6.2xlarge" in unpriced.reason


def test_auto_moves_up_when_the_model_grows() -> None:
    # 8 GB of fp8 weights + one 262,144-token sequence x 64 KiB of fp8 KV (17.2 GB) = 25.2 GB: more than an L4
    # admits (21.6 GB x 0.9... 22,888 MiB x 0.9 - 1 GiB workspace = 20.5 GB).
    plan = plan_of(**{"model.context_length_tokens": 262_144, "instance.gpu": None})
    assert plan.choice.chosen not in ("g6.xlarge", "inf2.xlarge")
    chosen = next(c for c in plan.choice.candidates if c.instance_type == plan.choice.chosen)
    assert chosen.fits and chosen.usable_bytes >= plan.memory.needed_bytes


def test_region_override_and_demand() -> None:
    regions = {r.region: r for r in plan_of().regions}
    assert regions["ap-northeast-1"].instance_type == "g6e.xlarge"
    assert regions["us-east-1"].demand_replicas == 16  # 24 rps / 1.5 per replica
    assert regions["us-east-1"].planned_replicas == 16
    assert regions["us-east-1"].on_demand_base == 2


def test_warm_pool_covers_growth_during_one_cold_start() -> None:
    # 100 rps peak, trough 10: +90 rps over 60 min = 0.025 rps/s; 600 s cold start -> 15 rps -> 6 replicas.
    assert warm_pool_size("auto", 100, 2.5, 600, 60, burst=20) == 6
    assert warm_pool_size("auto", 100, 2.5, 600, 60, burst=4) == 4
    assert warm_pool_size("off", 100, 2.5, 600, 60, burst=20) == 0
    assert warm_pool_size(3, 100, 2.5, 600, 60, burst=2) == 2
