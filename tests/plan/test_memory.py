"""Memory rules checked against the published figures."""

from __future__ import annotations

import pytest
from gpuinfra.plan.memory import kv_bytes_per_token, serving_memory, training_bytes_per_parameter, training_memory


def test_mixed_precision_adam_is_16_bytes_per_parameter() -> None:
    assert training_bytes_per_parameter("bf16", "adamw") == 16
    assert training_bytes_per_parameter("fp32", "adam") == 16
    assert training_bytes_per_parameter("bf16", "sgd_momentum") == 12


def test_70b_needs_1120_gb_before_activations() -> None:
    mem = training_memory(70, "bf16", "adamw", gpus=128, gpu_memory_mib=81920, activation_headroom_fraction=0.25)
    assert mem.total_bytes == 1_120 * 10**9
    assert mem.per_gpu_bytes == 8_750_000_000
    assert mem.fits


def test_70b_does_not_fit_on_one_node_of_h100() -> None:
    mem = training_memory(70, "bf16", "adamw", gpus=8, gpu_memory_mib=81920, activation_headroom_fraction=0.25)
    assert mem.per_gpu_bytes == 140 * 10**9
    assert not mem.fits


def test_llama_3_1_70b_kv_cache_is_327680_bytes_per_token() -> None:
    assert kv_bytes_per_token(layers=80, kv_heads=8, head_dim=128, element_bytes=2) == 327_680


def test_70b_fp16_weights_are_140_gb_plus_kv() -> None:
    mem = serving_memory(70, "fp16", 80, 8, 128, None, context_length_tokens=4096, concurrent_sequences=1)
    assert mem.weights_bytes == 140 * 10**9
    assert mem.kv_cache_bytes == 327_680 * 4096  # about 1.34 GB per 4K-token sequence
    assert mem.needed_bytes == 140 * 10**9 + 1_342_177_280


@pytest.mark.parametrize(("precision", "kv", "expected"), [("int4", None, 2), ("fp8", None, 1), ("int8", "fp8", 1)])
def test_kv_precision_defaults(precision: str, kv: str | None, expected: int) -> None:
    mem = serving_memory(1, precision, 1, 1, 1, kv, 1, 1)
    assert mem.kv_bytes_per_token == 2 * expected


def test_model_memory_of_a_spec_model() -> None:
    """The one memory step of AWS's and Google's training planners (both specs' model is spec.training's
    TrainedModel). 70B at bf16 with AdamW is 1,120 GB (16 bytes a parameter); over 128 GPUs 8.75 GB each; the usable
    share of 80 GiB is what the headroom leaves."""
    from gpuinfra.plan.memory import model_memory
    from gpuinfra.spec.training import TrainedModel

    model = TrainedModel.model_validate(
        {"name": "m", "parameters_billion": 70, "precision": "bf16", "optimizer": "adamw"}
    )
    mem = model_memory(model, 128, 81920)
    assert (mem.total_bytes, mem.per_gpu_bytes, mem.gpus) == (1_120 * 10**9, 8_750_000_000, 128)
    assert mem.usable_bytes_per_gpu == int(81920 * 1024**2 * (1 - model.activation_headroom_fraction))
