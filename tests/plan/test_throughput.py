"""The step model's layout terms (plan/throughput.py), each against a figure computed by hand from the sources'
rules: the last pipeline stage carries the output layer; ZeRO-3 gathers and reduces its shard every micro-batch."""

from __future__ import annotations

import pytest
from gpuinfra.plan.throughput import EFFICIENCY, Hardware, ModelShape, Parallel, step_time

NEMOTRON_22B = ModelShape(
    parameters=22e9, active_parameters=22e9, layers=40, hidden_size=6144, sequence_length=4096, vocab_size=256000
)
"""NeMo's Nemotron-22B: 40 layers, hidden 6,144, a 256,000-token vocabulary (output layer 1.57B parameters)."""
H100 = Hardware(peak_tflops={"bf16": 989, "fp8": 1979}, hbm_gb_s=3350, nvlink_gb_s=450, fabric_gb_s=50, domain_gpus=8)


def _step(shape: ModelShape, layout: Parallel) -> float:
    return step_time(shape, layout, H100, "bf16").total


def test_the_last_stage_carries_the_output_layer() -> None:
    # By hand: output = 256,000 x 6,144 = 1.573e9 parameters; a layer = (22e9 - 2 x 1.573e9) / 40 = 471.4e6; so
    # the output layer is 3.336 layers' worth. PP 4: the last stage runs 10 + 3.336 = 13.336 against an average of
    # (40 + 3.336) / 4 = 10.834: 1.231x. The compute and tensor-parallel time stretch by it.
    layout = Parallel(gpus=64, tensor=2, pipeline=4, virtual=10, micro_batch=2, global_batch=256)
    even = _step(NEMOTRON_22B.model_copy(update={"vocab_size": 0}), layout)
    st = step_time(NEMOTRON_22B, layout, H100, "bf16")
    stage = (st.total - st.data_parallel - st.all_to_all) / (even - st.data_parallel - st.all_to_all)
    assert stage == pytest.approx(13.336 / 10.834, rel=1e-3)


def test_a_balanced_recipe_takes_a_layer_off_the_last_stage() -> None:
    # Llama 3's "we reduce one Transformer layer each from the first and the last stages": 9 + 3.336 = 12.336
    # against 10.834: 1.139x.
    layout = Parallel(gpus=64, tensor=2, pipeline=4, virtual=10, micro_batch=2, global_batch=256)
    balanced = layout.model_copy(update={"balanced_stages": True})
    even = _step(NEMOTRON_22B.model_copy(update={"vocab_size": 0}), layout)
    assert _step(NEMOTRON_22B, balanced) / even == pytest.approx(12.336 / 10.834, rel=2e-3)
    assert _step(NEMOTRON_22B, balanced) < _step(NEMOTRON_22B, layout)


def test_one_stage_has_no_imbalance() -> None:
    layout = Parallel(gpus=8, micro_batch=1, global_batch=8)
    assert _step(NEMOTRON_22B, layout) == _step(NEMOTRON_22B.model_copy(update={"vocab_size": 0}), layout)


def test_zero3_moves_its_shard_every_micro_batch() -> None:
    # ZeRO-3 / FSDP gathers the parameters for every forward and backward and reduce-scatters every micro-batch's
    # gradients (ZeRO, section 7.2.2); ZeRO-1 reduces once a step. 8 GPUs in one node (NVLink 450 GB/s), a 7B
    # model: 3 x 7/8 x 7e9 x 2 bytes = 36.75 GB a micro-batch = 81.7 ms; at 4 micro-batches a step, 326.7 ms.
    shape = ModelShape(parameters=7e9, active_parameters=7e9, layers=32, hidden_size=4096, sequence_length=2048)
    one = Parallel(gpus=8, micro_batch=1, global_batch=8, zero_stage=3)
    four = one.model_copy(update={"global_batch": 32})

    def traffic(layout: Parallel) -> float:
        st = step_time(shape, layout, H100, "bf16")
        compute = st.gemm + st.recompute + st.attention + st.elementwise + st.moe
        return st.data_parallel + EFFICIENCY.dp_hidden * compute  # exposed = traffic - the hidden share

    assert step_time(shape, one, H100, "bf16").data_parallel > 0
    assert traffic(one) == pytest.approx(3 * 7 / 8 * 7e9 * 2 / 450e9, rel=1e-6)
    assert traffic(four) == pytest.approx(4 * 3 * 7 / 8 * 7e9 * 2 / 450e9, rel=1e-6)
    zero1 = four.model_copy(update={"zero_stage": 1})
    st1 = step_time(shape, zero1, H100, "bf16")
    compute1 = st1.gemm + st1.recompute + st1.attention + st1.elementwise + st1.moe
    assert st1.data_parallel == max(0.0, 2 * 7 / 8 * 7e9 * 2 / 450e9 - EFFICIENCY.dp_hidden * compute1)
