"""Training compute and scaling, against published figures."""

from __future__ import annotations

import pytest
from gpuinfra.plan.flops import (
    DEFAULT_MFU,
    DEFAULT_SCALING_PER_DOUBLING,
    cluster_flops_per_second,
    scaling_efficiency,
    speedup,
    training_flops,
)


def test_gpt3_175b_on_300b_tokens_is_3_14e23_flops() -> None:
    # Brown et al. 2020, "Language Models are Few-Shot Learners", table D.1: GPT-3 175B, 3.14e23 FLOPs
    # (6 x 175e9 x 300e9 = 3.15e23; the paper rounds its parameter count down).
    assert training_flops(175e9, 300e9) == pytest.approx(3.14e23, rel=0.005)


def test_llama3_405b_on_15_6t_tokens_is_3_8e25_flops() -> None:
    # Llama 3 paper (Grattafiori et al. 2024), section 3.2.1: 405B on 15.6T tokens, 3.8e25 FLOPs.
    assert training_flops(405e9, 15.6e12) == pytest.approx(3.8e25, rel=0.01)


def test_mixture_of_experts_counts_active_parameters() -> None:
    # DeepSeek-V3 technical report: 671B total, 37B active per token; compute follows the 37B.
    assert training_flops(37e9, 1e12) == 6 * 37e9 * 1e12


def test_the_seed_articles_1_6x_is_0_8_a_doubling() -> None:
    # Issue 19's "64 -> 128 GPUs gives 1.6x": 8 -> 16 nodes of 8 GPUs, 2 x 0.8 = 1.6.
    assert speedup(8, 16, 0.8) == pytest.approx(1.6)


def test_defaults_reproduce_llama3_table_4() -> None:
    # Llama 3 paper, table 4: 430 TFLOPS per H100 at 8,192 GPUs and 400 at 16,384 (bf16). The defaults, by hand:
    # 989 x 0.48 x 0.985^10 (1,024 nodes: 10 doublings past one node) = 408.1; x 0.985 more at 2,048 nodes = 402.0:
    # 5% under and 0.5% over the paper.
    mfu, kept = DEFAULT_MFU["bf16"], DEFAULT_SCALING_PER_DOUBLING["infiniband"]
    assert kept is not None
    assert cluster_flops_per_second(1024, 8, 989, mfu, kept) / 8192 / 1e12 == pytest.approx(408.1, abs=0.1)
    assert cluster_flops_per_second(2048, 8, 989, mfu, kept) / 16384 / 1e12 == pytest.approx(402.0, abs=0.1)
    assert DEFAULT_SCALING_PER_DOUBLING["none"] is None


def test_no_loss_inside_one_nvlink_domain() -> None:
    # One 8-GPU node is one NVLink domain: no fabric traffic, the single-node MFU applies in full.
    assert scaling_efficiency(1, 0.985) == 1.0


def test_efficiency_falls_with_node_count() -> None:
    assert scaling_efficiency(1, 0.93) == 1.0
    assert scaling_efficiency(16, 0.93) == pytest.approx(0.93 * 0.93 * 0.93 * 0.93)
    assert speedup(16, 32, 0.93) == pytest.approx(1.86)
    assert speedup(16, 32, 0.93) < 2


def test_one_node_of_h100_at_45_percent() -> None:
    # 8 GPUs x 989 dense BF16 TFLOPS (H100 SXM datasheet, 1,979 with sparsity halved) x 0.45.
    assert cluster_flops_per_second(1, 8, 989, 0.45, 0.93) == pytest.approx(8 * 989e12 * 0.45)
