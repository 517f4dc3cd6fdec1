"""Training compute and how fast a cluster delivers it: 6 x parameters x tokens, a model FLOPs utilization
(MFU) within one node, and a scaling efficiency that falls each time the node count doubles, both fitted to the
published runs of tests/plan/test_calibration.py.

Every default below is an assumption with its source; the spec's `run` section overrides each one.
"""

from __future__ import annotations

import math

FLOPS_PER_PARAMETER_TOKEN = 6
"""Forward (2) plus backward (4) FLOPs per parameter per token of a dense transformer, attention excluded:
Kaplan et al. 2020, "Scaling Laws for Neural Language Models", section 2.1 (C ~ 6ND). Checked against
Brown et al. 2020 (GPT-3 175B on 300B tokens: 3.14e23 FLOPs, table D.1) and the Llama 3 paper (405B on
15.6T tokens: 3.8e25 FLOPs, section 3.2.1). A mixture of experts counts only the active parameters."""

DEFAULT_MFU = {"bf16": 0.48, "fp16": 0.48, "fp32": 0.48, "fp8": 0.25}
"""Model FLOPs utilization inside one NVLink domain (no fabric traffic), as a share of the precision's dense peak.
Fitted with DEFAULT_SCALING_PER_DOUBLING to the training cases of tests/plan/test_calibration.py (docs/planning.md
shows the residuals): bf16 on Llama 3 405B at 8K-16K H100 (430-380 TFLOPS, Llama 3 paper table 4), OPT-175B
(147 TFLOPS on 992 A100), torchtitan FSDP2 on 64 A100 (51.7% for 70B) and Narayanan et al. 2021 (163 TFLOPS on
3,072 A100); fp8 against the fp8 peak is lower, since attention, norms and communication do not speed up: Llama 4
Behemoth 390 TFLOPS per GPU at 32K GPUs (19.7% of 1,979) and DeepSeek-V3's 342.6 model TFLOPS on 2,048 H800
(6 x 37B x 14.8T over 2.664M GPU-hours) put 0.25 one node before their 11-12 doublings. fp32 uses the non-tensor
FP32 peak. A spec's `run.mfu` replaces it; one above every published run is warned about (PUBLISHED_MFU_CEILING)."""

PUBLISHED_MFU_CEILING = {"bf16": 0.594, "fp16": 0.594, "fp32": 0.594, "fp8": 0.344}
"""The highest MFU (6 x parameters x tokens/s over the dense peak) a published run in the calibration set reached at
each precision: bf16 59.4% (MPT-7B on 8 A100 80GB at 4,641 tokens/s/GPU, llm-foundry's benchmark table: 6 x 6.659B
x 4,641 / 312 TFLOPS); fp8 34.4% of the fp8 peak (NeMo 24.07, Llama 2 7B on 8 H100 at 16,847 tokens/s/GPU:
6 x 6.74B x 16,847 / 1,979 TFLOPS). A spec claiming more is warned about: it plans a run nobody has published."""

DEFAULT_SCALING_PER_DOUBLING = {"infiniband": 0.985, "efa": 0.985, "none": None}
"""Share of per-GPU throughput kept each time the node count doubles past one NVLink domain (one 8-GPU node: inside
it there is no fabric traffic and no loss). Fitted to the calibration set: Llama 3 keeps 430 -> 400 TFLOPS from
8,192 to 16,384 H100 on RoCE (with the batch per data-parallel group halved), MegaScale keeps 55.2% MFU on 12,288
GPUs, and 0.985 a doubling with the MFU above leaves every bf16 run of the set within 15% but the A100 outliers.
The older 0.93 (Llama 3's one doubling read as the rate from one node on) left a quarter of the throughput gone at
16 nodes, which no published run shows. Model size and layout did not separate in the set (bf16 FSDP and TP/PP runs
fit the same figure), so the default does not depend on them. No published EFA pair was found: EFA takes the
InfiniBand/RoCE figure. Without a GPU fabric there is no figure: `run.scaling_per_doubling` must be set."""


def scaling_per_doubling(fabric: str) -> float | None:
    """The default share kept per doubling across `fabric` (None: no published figure)."""
    return DEFAULT_SCALING_PER_DOUBLING.get(fabric)


def training_flops(active_parameters: float, tokens: float) -> float:
    """Total training compute of a dense (or, by its active parameters, a mixture-of-experts) transformer."""
    return FLOPS_PER_PARAMETER_TOKEN * active_parameters * tokens


def scaling_efficiency(nodes: int, per_doubling: float, nodes_per_domain: int = 1) -> float:
    """Per-GPU throughput relative to one NVLink domain: `per_doubling` to the power of the doublings of domains,
    log2(nodes / nodes_per_domain). A domain is one node, or several (a GB200 NVL72 rack's 18 trays are one
    72-GPU NVLink domain: no fabric traffic, no loss, inside it)."""
    domains = nodes / nodes_per_domain
    return per_doubling ** math.log2(domains) if domains > 1 else 1.0


def cluster_flops_per_second(
    nodes: int, gpus_per_node: int, peak_tflops: float, mfu: float, per_doubling: float, nodes_per_domain: int = 1
) -> float:
    """Model FLOPs a cluster delivers each second: GPUs x dense peak x MFU x scaling efficiency."""
    efficiency = scaling_efficiency(nodes, per_doubling, nodes_per_domain)
    return nodes * gpus_per_node * peak_tflops * 1e12 * mfu * efficiency


def speedup(nodes: int, doubled: int, per_doubling: float) -> float:
    """How much faster `doubled` nodes are than `nodes`: their ratio times the efficiency lost between them."""
    return doubled / nodes * scaling_efficiency(doubled, per_doubling) / scaling_efficiency(nodes, per_doubling)


__all__ = [
    "DEFAULT_MFU",
    "DEFAULT_SCALING_PER_DOUBLING",
    "FLOPS_PER_PARAMETER_TOKEN",
    "PUBLISHED_MFU_CEILING",
    "cluster_flops_per_second",
    "scaling_efficiency",
    "scaling_per_doubling",
    "speedup",
    "training_flops",
]
