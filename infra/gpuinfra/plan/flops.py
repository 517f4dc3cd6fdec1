"""Training compute and how fast a cluster delivers it: 6 x parameters x tokens, a model FLOPs utilization
(MFU) within one node, and a scaling efficiency that falls each time the node count doubles.

Every default below is an assumption with its source; the spec's `run` section overrides each one.
"""

from __future__ import annotations

import math

FLOPS_PER_PARAMETER_TOKEN = 6
"""Forward (2) plus backward (4) FLOPs per parameter per token of a dense transformer, attention excluded:
Kaplan et al. 2020, "Scaling Laws for Neural Language Models", section 2.1 (C ~ 6ND). Checked against
Brown et al. 2020 (GPT-3 175B on 300B tokens: 3.14e23 FLOPs, table D.1) and the Llama 3 paper (405B on
15.6T tokens: 3.8e25 FLOPs, section 3.2.1). A mixture of experts counts only the active parameters."""

DEFAULT_MFU = {"bf16": 0.45, "fp16": 0.45, "fp32": 0.45, "fp8": 0.30}
"""MFU inside one NVLink domain, as a share of the precision's dense peak. bf16/fp16: Narayanan et al. 2021,
"Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM" (SC21), table 1: 44-52%
of A100 peak; KempnerForge MFU-scaling benchmark (docs/reference/benchmarks.md): 13B with FSDP over 8 GPUs
44.4%. fp8 against the fp8 peak is lower, since attention, norms and communication do not speed up: Meta's
Llama 4 post reports 390 TFLOPS per H100 in FP8 (19.7% of 1,979) at 32K GPUs; 0.30 is that figure before
the scaling loss of ~12 doublings. fp32 uses the non-tensor FP32 peak."""

DEFAULT_SCALING_PER_DOUBLING = {"infiniband": 0.93, "efa": 0.93, "none": None}
"""Share of per-GPU throughput kept when the node count doubles. Calibrated on two published points of
different scale that agree: the Llama 3 paper, table 4 (8,192 -> 16,384 H100 on InfiniBand: 430 -> 400
TFLOPS per GPU, 0.93), and KempnerForge (8 -> 32 GPUs, two doublings: MFU 53% -> 47% of linear, 0.94 a
doubling). No published EFA pair was found, so EFA takes the same figure; without a GPU fabric (TCP sockets)
there is no figure and the run is not planned across nodes until `run.scaling_per_doubling` is set.
The seed article's "64 -> 128 GPUs gives 1.6x" is 0.80 a doubling: a poorly tuned or slow fabric."""


def training_flops(active_parameters: float, tokens: float) -> float:
    """Total training compute of a dense (or, by its active parameters, a mixture-of-experts) transformer."""
    return FLOPS_PER_PARAMETER_TOKEN * active_parameters * tokens


def scaling_efficiency(nodes: int, per_doubling: float) -> float:
    """Per-GPU throughput relative to one node: `per_doubling` to the power of the doublings, log2(nodes)."""
    return per_doubling ** math.log2(nodes) if nodes > 1 else 1.0


def cluster_flops_per_second(
    nodes: int, gpus_per_node: int, peak_tflops: float, mfu: float, per_doubling: float
) -> float:
    """Model FLOPs a cluster delivers each second: GPUs x dense peak x MFU x scaling efficiency."""
    return nodes * gpus_per_node * peak_tflops * 1e12 * mfu * scaling_efficiency(nodes, per_doubling)


def speedup(nodes: int, doubled: int, per_doubling: float) -> float:
    """How much faster `doubled` nodes are than `nodes`: their ratio times the efficiency lost between them."""
    return doubled / nodes * scaling_efficiency(doubled, per_doubling) / scaling_efficiency(nodes, per_doubling)


__all__ = [
    "DEFAULT_MFU",
    "DEFAULT_SCALING_PER_DOUBLING",
    "FLOPS_PER_PARAMETER_TOKEN",
    "cluster_flops_per_second",
    "scaling_efficiency",
    "speedup",
    "training_flops",
]
