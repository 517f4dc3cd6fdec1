"""Per-GPU memory of a parallel layout, against the ZeRO and Korthikanti et al. figures."""

from __future__ import annotations

import pytest
from gpuinfra.plan import TrainingPlan
from gpuinfra.plan.layout import Budget, Layout, Shape, activation_bytes_per_layer, layout_bytes, layout_memory
from helpers import checked

GIB80 = 81920 * 1024**2
P5X16 = Budget(precision="bf16", optimizer="adamw", gpus=128, gpus_per_node=8, gpu_bytes=GIB80, reserve_fraction=0.10)
LLAMA70 = Shape(
    parameters=70e9, layers=80, hidden_size=8192, attention_heads=64, sequence_length=4096, micro_batch_size=1
)


@pytest.mark.parametrize(("stage", "expected_gb"), [(0, 120.0), (1, 31.40625), (2, 16.640625), (3, 1.875)])
def test_zero_paper_figure_1(stage: int, expected_gb: float) -> None:
    # Rajbhandari et al. 2020, figure 1: a 7.5B model on 64 GPUs with Adam (K = 12): 120 GB per GPU without
    # ZeRO, 31.4 GB with P_os, 16.6 GB with P_os+g, 1.9 GB with P_os+g+p. By hand: (2+2+12) x 7.5 = 120;
    # 4 x 7.5 + 12 x 7.5 / 64 = 31.40625; 2 x 7.5 + 14 x 7.5 / 64 = 16.640625; 16 x 7.5 / 64 = 1.875.
    shape = LLAMA70.model_copy(update={"parameters": 7.5e9})
    parts, dp = layout_bytes(
        Layout(tensor=1, pipeline=1, zero_stage=stage, recompute="full"),
        shape,
        P5X16.model_copy(update={"gpus": 64, "reserve_fraction": 0.0}),
    )
    assert dp == 64
    assert (parts["weights"] + parts["gradients"] + parts["optimizer"]) / 1e9 == pytest.approx(expected_gb)


def test_llama70b_activations_without_tp_are_91_gb() -> None:
    # Korthikanti et al. 2022, table 2: without the attention-score term (selective recompute / FlashAttention)
    # one layer keeps 34 sbh bytes: 34 x 4096 x 1 x 8192 = 1.14 GB, x 80 layers = 91.3 GB (expert review section 4).
    per_layer = activation_bytes_per_layer(4096, 1, 8192, 64, 1, False, "selective")
    assert per_layer == 34 * 4096 * 8192
    assert 80 * per_layer / 1e9 == pytest.approx(91.27, abs=0.01)


def test_korthikanti_table_2_rows() -> None:
    s, b, h, a, t = 2048, 1, 12288, 96, 8  # GPT-3 175B shape of the paper's table 3
    assert activation_bytes_per_layer(s, b, h, a, 1, False, "none") == s * b * h * (34 + 5 * a * s / h)
    assert activation_bytes_per_layer(s, b, h, a, t, False, "none") == pytest.approx(
        s * b * h * (10 + 24 / t + 5 * a * s / (h * t))
    )
    assert activation_bytes_per_layer(s, b, h, a, t, True, "none") == pytest.approx(
        s * b * h / t * (34 + 5 * a * s / h)
    )
    assert activation_bytes_per_layer(s, b, h, a, t, True, "selective") == pytest.approx(s * b * h * 34 / t)
    assert activation_bytes_per_layer(s, b, h, a, 1, False, "full") == 2 * s * b * h


def test_llama70b_on_16_p5_with_tp8_fsdp_fits() -> None:
    mem = layout_memory(Layout(tensor=8, pipeline=1, zero_stage=3, recompute="selective"), LLAMA70, P5X16)
    # By hand: DP = 128 / 8 = 16; weights 70e9 / 8 x 2 / 16 = 1.09375e9; activations 80 x 34 sbh / 8.
    assert mem.data_parallel == 16
    assert mem.weights_bytes == 1_093_750_000
    assert mem.activations_bytes == 80 * 34 * 4096 * 8192 // 8
    assert mem.fits and mem.proposal is None


def test_a_layout_that_does_not_fit_proposes_one_that_does() -> None:
    # No TP, no ZeRO, no recompute: 140 GB of bf16 weights alone on an 85.9 GB GPU.
    bad = Layout(tensor=1, pipeline=1, zero_stage=0, recompute="none")
    mem = layout_memory(bad, LLAMA70, P5X16)
    assert mem.weights_bytes == 140_000_000_000
    assert not mem.fits
    assert mem.proposal is not None
    again = layout_memory(mem.proposal, LLAMA70, P5X16)
    assert again.fits and again.total_bytes == mem.proposal_bytes <= GIB80


def test_tensor_parallel_must_stay_in_the_node() -> None:
    mem = layout_memory(
        Layout(tensor=16, pipeline=1, zero_stage=3, recompute="selective"),
        LLAMA70,
        P5X16,
    )
    assert not mem.fits
    assert any("NVLink domain" in p for p in mem.problems)


def test_context_parallel_divides_activations_and_shards_states_with_dp() -> None:
    # Llama 70B at 32K tokens on 128 GPUs, TP 8, CP 4: DP = 128 / (8 x 4) = 4. Each GPU holds 32,768 / 4 = 8,192
    # tokens of each layer (selective + SP: 34 sbh / t per layer); ZeRO-3 shards the weights over DP x CP = 16.
    long = LLAMA70.model_copy(update={"sequence_length": 32768})
    cp4 = Layout(tensor=8, pipeline=1, zero_stage=3, recompute="selective", context=4)
    parts, dp = layout_bytes(cp4, long, P5X16)
    assert dp == 4
    assert parts["activations"] == round(80 * 34 * 8192 * 8192 / 8)
    assert parts["weights"] == round(70e9 / 8 * 2 / 16)
    without, _ = layout_bytes(cp4.model_copy(update={"context": 1}), long, P5X16)
    assert without["activations"] == pytest.approx(4 * parts["activations"], rel=1e-9)
    assert "CP=4" in cp4.describe()


def test_context_parallel_degrees_must_divide_the_cluster_and_the_sequence() -> None:
    long = LLAMA70.model_copy(update={"sequence_length": 32768})
    odd = layout_memory(Layout(tensor=8, pipeline=1, zero_stage=3, recompute="selective", context=3), long, P5X16)
    assert any("TP x PP x CP = 24" in p for p in odd.problems)
    short = LLAMA70.model_copy(update={"sequence_length": 4100})
    mem = layout_memory(Layout(tensor=8, pipeline=1, zero_stage=3, recompute="selective", context=4), short, P5X16)
    assert any("split into 8 chunks" in p for p in mem.problems)


def test_the_spec_context_degree_reaches_the_layout_and_its_check() -> None:
    # llm-train (16 x p5, TP 8) at 32K tokens with CP 2: DP = 128 / 16 = 8; CP 3 does not divide 128 GPUs.
    long = {"model.architecture.sequence_length": 32768, "model.parallelism.context": 2}
    plan = checked("llm-train", long).plan
    assert isinstance(plan, TrainingPlan) and plan.layout is not None
    assert plan.layout.layout.context == 2 and plan.layout.data_parallel == 8
    bad = checked("llm-train", {**long, "model.parallelism.context": 3})
    assert any(f.rule == "layout-does-not-fit" and "TP x PP x CP" in f.message for f in bad.findings)
