"""Training throughput from the terms the literature uses, instead of one MFU per precision.

A step of one GPU is the time of its share of the model FLOPs at the precision's peak, the FLOPs 6ND leaves out
(causal attention, at the bf16 peak), the memory-bound element-wise work (norms, activations, casts, the
mixture-of-experts permutation: bytes per token that grow with the width, over the HBM bandwidth), and the
communication the parallel layout implies: tensor-parallel collectives inside the NVLink domain, the pipeline
bubble, the data-parallel (ZeRO / FSDP) reduce-scatter and all-gather over the fabric where the backward pass does
not hide them, and the expert all-to-all. So model size, width, micro-batch, layout and scale at a fixed global
batch move the rate, each through its own term. The efficiencies (EFFICIENCY) are fitted to the published runs of
tests/plan/calibration_runs.yaml but its held-out and finetune groups; docs/planning.md shows the residuals per
hardware generation and precision, in and out of sample.

Sources of the terms: 6ND and the attention FLOPs, Narayanan et al. 2021 ("Efficient Large-Scale Language Model
Training on GPU Clusters", appendix: 72BsLh^2 (1 + s/6h + ...) FLOPs per iteration; causal masking halves the
attention part, as FlashAttention-2 counts it); the tensor-parallel collectives with sequence parallelism
(Korthikanti et al. 2022, section 4.2.2: an all-gather and a reduce-scatter before and after each of attention and
MLP, forward and backward); the interleaved pipeline bubble (p - 1) / (v m) (Narayanan et al. 2021, section 2.2.2);
ring reduce-scatter/all-gather traffic 2 (d - 1) / d of the gradient bytes (ZeRO, Rajbhandari et al. 2020, section
7: stage 1-2 move 2 Psi, stage 3 3 Psi); the expert all-to-all (dispatch and combine of top-k copies of each token,
forward and backward: GShard, Lepikhin et al. 2020, section 2.2).
"""

from __future__ import annotations

from gpuinfra.plan.memory import Plain

PCIE_GB_S = 25.0
"""PCIe Gen4 x16 one way (32 GB/s raw, ~25 GB/s delivered), for GPUs without NVLink."""


class Efficiency(Plain):
    """The fitted constants of the step model (tests/fit_throughput.py refits them)."""

    gemm: dict[str, float]
    """Share of the precision's dense peak the model's matmuls reach (bf16 and fp8 differ: fp8 adds scaling)."""
    attention: float
    """Share of the bf16 peak causal attention reaches (FlashAttention kernels run in bf16 in every recipe)."""
    elementwise_bytes: dict[str, float]
    """Bytes moved per token, per layer, per unit of hidden width by the memory-bound kernels (forward and
    backward; fp8 adds the casts and amax reductions)."""
    moe_bytes: float
    """Bytes per token, per MoE layer, per unit of width and per routed copy: permute, unpermute, router."""
    expert_gemm: float = 1.0
    """Share of the dense matmul efficiency a mixture of experts' grouped expert matmuls keep."""
    tp_exposed: float
    """Share of the tensor-parallel collective time the kernels do not overlap."""
    a2a_exposed: float = 1.0
    """Share of the expert all-to-all time the schedule does not overlap with compute."""
    dp_hidden: float
    """Share of the compute the data-parallel reduce-scatter / all-gather hides under (the backward pass)."""
    generation: dict[str, float] = {}
    """GEMM efficiency of an accelerator relative to the Hopper fit (A100 reaches more of its lower peak: its
    matmuls are less bound by the memory and launch overheads that a 3x faster tensor core exposes)."""
    fabric_efficiency: float = 0.8
    """Share of the per-GPU fabric bandwidth a ring collective reaches (NCCL bus bandwidth over line rate)."""


EFFICIENCY = Efficiency(
    gemm={"bf16": 0.687, "fp16": 0.687, "fp32": 0.687, "fp8": 0.560},
    attention=0.732,
    elementwise_bytes={"bf16": 638.0, "fp16": 638.0, "fp32": 638.0, "fp8": 599.0},
    moe_bytes=171.0,
    expert_gemm=1.0,
    tp_exposed=0.749,
    a2a_exposed=0.486,
    dp_hidden=0.058,
    generation={"ampere": 1.062},
)
"""Fitted (least squares on log ratios, tests/fit_throughput.py) to the 39 runs of tests/plan/calibration_runs.yaml
outside its held-out and finetune groups, from three starting points; docs/planning.md shows the residuals per
hardware generation and precision."""


class ModelShape(Plain):
    """What the step time depends on in the model: sizes, width, depth, sequence, experts."""

    parameters: float
    """All parameters (a mixture of experts: every expert)."""
    active_parameters: float
    """Parameters each token passes through (dense: all of them)."""
    layers: int
    hidden_size: int
    sequence_length: int
    experts: int = 1
    top_k: int = 1
    moe_layers: int = 0
    """Layers with routed experts (0: dense)."""
    vocab_size: int = 0
    """Tokens of the output layer (0: unknown, the last pipeline stage is taken as even)."""
    stored_bytes: float | None = None
    """Bytes a weight is stored in when below the matmuls' precision (QLoRA's NF4 with its constants: 0.516): each
    matmul pass dequantizes the weights to 16 bit first (QLoRA, section 3: "we dequantize the storage data type to
    the computation data type to perform the forward and backward pass"), reading them stored and writing and
    reading them back in 16 bit, once a micro-batch and pass."""
    frozen_base: bool = False
    """LoRA: the base's weights get no gradients, so its matmuls run forward and activation-gradient passes only
    (4N a token, not 6N: plan/adapters.py), the element-wise work splits as the matmuls do (the weight-gradient
    pass's casts and transposes go with it), and the data-parallel group reduces no base gradients."""


class Parallel(Plain):
    """The parallel layout and batch of one run."""

    gpus: int
    tensor: int = 1
    pipeline: int = 1
    context: int = 1
    expert: int = 1
    virtual: int | None = None
    """Interleaved stages per pipeline rank; None takes one layer a virtual stage (what published recipes run)."""
    micro_batch: int = 1
    global_batch: int
    """Sequences per optimizer step."""
    zero_stage: int = 1
    recompute: str = "selective"
    balanced_stages: bool = False
    """The recipe gives the last pipeline stage a layer fewer for the output layer and loss (Llama 3 paper, section
    3.3.2; Megatron's account_for_loss_in_pipeline_split); False: Megatron's default even split by layers."""

    @property
    def data(self) -> int:
        return max(1, self.gpus // (self.tensor * self.pipeline * self.context))


class Hardware(Plain):
    """One GPU and its links."""

    peak_tflops: dict[str, float]
    hbm_gb_s: float
    nvlink_gb_s: float
    fabric_gb_s: float
    """Per GPU across nodes: the node's network rate / 8 / its GPUs."""
    domain_gpus: int
    """GPUs one NVLink domain joins (8 in a node; 72 in a GB200 NVL72 rack)."""
    accelerator: str = ""
    generation: str | None = None
    """The architecture (the catalog's peaks row): the fit's per-generation GEMM factor."""


class StepTime(Plain):
    """Seconds of one optimizer step on one GPU, term by term, and what they come to."""

    tokens_per_gpu: float
    gemm: float
    recompute: float
    attention: float
    elementwise: float
    moe: float
    tensor_parallel: float
    pipeline_bubble: float
    """As a share of the compute and tensor-parallel time."""
    data_parallel: float
    """Exposed: what the backward pass does not hide."""
    all_to_all: float
    total: float
    tokens_per_s: float
    """Per GPU."""
    model_tflops: float
    """6 x active parameters x tokens/s per GPU: the model FLOPs (attention excluded) a GPU delivers."""


def _micro_batches(layout: Parallel) -> float:
    """Micro-batches each data-parallel rank runs per optimizer step (gradient accumulation x pipeline); a share
    where the batch does not divide (the ranks' mean), so the rate moves smoothly with the GPU count."""
    return max(1.0, layout.global_batch / (layout.data * layout.micro_batch))


def _bubble(layout: Parallel, shape: ModelShape) -> float:
    p = layout.pipeline
    if p == 1:
        return 0.0
    v = layout.virtual or max(1, shape.layers // p)
    return (p - 1) / (v * _micro_batches(layout))


def _last_stage(shape: ModelShape, layout: Parallel) -> float:
    """How much longer the last pipeline stage runs than the average: it holds its share of the layers and the
    output layer (2 h V FLOPs a token, against 2 x a layer's parameters), a layer fewer where the recipe balances
    it. The step waits for the slowest stage (Narayanan et al. 2021, section 2.2; Llama 3 paper, section 3.3.2)."""
    p, vocab = layout.pipeline, shape.vocab_size
    if p == 1 or not vocab:
        return 1.0
    output = vocab * shape.hidden_size
    per_layer = max(1.0, (shape.active_parameters - 2 * output) / shape.layers)
    heads = output / per_layer
    last = shape.layers / p + heads - (1 if layout.balanced_stages else 0)
    return max(1.0, last / ((shape.layers + heads) / p))


def _dp_seconds(shape: ModelShape, layout: Parallel, hw: Hardware) -> float:
    """Ring reduce-scatter + all-gather of this GPU's gradient shard (ZeRO-3 / FSDP: one more all-gather).

    NCCL runs one ring per NIC: a data-parallel group whose ranks share a node crosses the fabric once per ring,
    so the group moves its shard at the NICs of as many GPUs as it has in one node (all eight with TP = 1; one
    with TP = 8), never faster than NVLink."""
    ranks = layout.data * layout.context
    if ranks <= 1:
        return 0.0
    params = shape.parameters / (layout.tensor * layout.pipeline * max(1, layout.expert))
    passes = 3 if layout.zero_stage >= 3 else 2
    if shape.frozen_base:  # no base gradients to reduce; ZeRO-3 still gathers the weights twice
        passes = 2 if layout.zero_stage >= 3 else 0
    moved = passes * (ranks - 1) / ranks * params * 2  # bf16 gradients and weights
    if layout.zero_stage >= 3:
        moved *= _micro_batches(layout)
    if layout.gpus <= hw.domain_gpus:
        bandwidth = hw.nvlink_gb_s
    else:
        in_node = max(1, hw.domain_gpus // (layout.tensor * layout.context))
        bandwidth = min(hw.nvlink_gb_s, hw.fabric_gb_s * in_node) * EFFICIENCY.fabric_efficiency
    return moved / (bandwidth * 1e9)


def _a2a_seconds(shape: ModelShape, layout: Parallel, hw: Hardware, tokens: float) -> float:
    """Dispatch and combine of top-k copies of each token, forward and backward, across the expert group: copies
    to experts in the node over NVLink; across nodes one copy per remote node a token reaches (DeepEP and
    Megatron's all-to-all send a token once per node, then forward it over NVLink)."""
    e = layout.expert
    if shape.moe_layers == 0 or e <= 1:
        return 0.0
    per_copy = 4 * shape.hidden_size * 2 * shape.moe_layers * tokens  # dispatch + combine, fwd + bwd, bf16
    group = e * layout.tensor
    nodes = max(1, -(-group // hw.domain_gpus))
    local = shape.top_k * (min(group, hw.domain_gpus) - 1) / group
    remote = min(shape.top_k * (group - min(group, hw.domain_gpus)) / group, nodes - 1)
    nvlink = per_copy * local / (hw.nvlink_gb_s * 1e9)
    fabric = per_copy * remote / (hw.fabric_gb_s * EFFICIENCY.fabric_efficiency * 1e9) if remote else 0.0
    return nvlink + fabric


def step_time(
    shape: ModelShape, layout: Parallel, hw: Hardware, precision: str, eff: Efficiency = EFFICIENCY
) -> StepTime:
    """One optimizer step of one GPU, each term from the layout and the hardware (module docstring)."""
    tokens = layout.global_batch * shape.sequence_length / layout.gpus
    peak = hw.peak_tflops[precision] * 1e12
    bf16 = hw.peak_tflops.get("bf16", hw.peak_tflops[precision]) * 1e12
    moe_share = eff.expert_gemm if shape.moe_layers else 1.0
    generation = eff.generation.get(hw.generation or "", 1.0)
    passes = 4 if shape.frozen_base else 6
    gemm = passes * shape.active_parameters * tokens / (peak * eff.gemm[precision] * moe_share * generation)
    recompute = gemm * 2 / passes if layout.recompute == "full" else 0.0
    h, s, L = shape.hidden_size, shape.sequence_length, shape.layers
    attention = 6 * L * s * h * tokens / (bf16 * eff.attention)
    elementwise = eff.elementwise_bytes[precision] * L * h * tokens / (hw.hbm_gb_s * 1e9) * passes / 6
    moe = eff.moe_bytes * shape.top_k * shape.moe_layers * h * tokens / (hw.hbm_gb_s * 1e9)
    if shape.stored_bytes is not None:  # dequantize before each matmul pass (forward, backward, recompute)
        weights = shape.active_parameters / (layout.tensor * layout.pipeline)
        matmul_passes = passes // 2 + (1 if layout.recompute == "full" else 0)
        moved = weights * (shape.stored_bytes + 4) * matmul_passes * _micro_batches(layout)
        elementwise += moved / (hw.hbm_gb_s * 1e9)
    t = layout.tensor
    tp_bw = hw.nvlink_gb_s if t <= hw.domain_gpus else hw.fabric_gb_s
    tensor_parallel = eff.tp_exposed * 16 * h * (t - 1) * L * tokens / (tp_bw * 1e9) if t > 1 else 0.0
    compute = gemm + recompute + attention + elementwise + moe
    bubble = _bubble(layout, shape)
    dp = max(0.0, _dp_seconds(shape, layout, hw) - eff.dp_hidden * compute)
    a2a = eff.a2a_exposed * _a2a_seconds(shape, layout, hw, tokens)
    total = (compute + tensor_parallel) * _last_stage(shape, layout) * (1 + bubble) + dp + a2a
    rate = tokens / total
    return StepTime(
        tokens_per_gpu=tokens,
        gemm=gemm,
        recompute=recompute,
        attention=attention,
        elementwise=elementwise,
        moe=moe,
        tensor_parallel=tensor_parallel,
        pipeline_bubble=bubble,
        data_parallel=dp,
        all_to_all=a2a,
        total=total,
        tokens_per_s=rate,
        model_tflops=6 * shape.active_parameters * rate / 1e12,
    )


class StepInputs(Plain):
    """What the run plan needs to price any node count with the step model: the spec's model, its layout and
    global batch (kept fixed across node counts), the hardware and the precision."""

    shape: ModelShape
    layout: Parallel
    hardware: Hardware
    precision: str

    def tflops_per_gpu(self, gpus: int) -> float:
        """Model TFLOPS (6 x active parameters) one GPU delivers when the run has `gpus` GPUs."""
        layout = self.layout.model_copy(update={"gpus": gpus})
        return step_time(self.shape, layout, self.hardware, self.precision).model_tflops


def hardware(
    accelerator: str,
    peak_tflops: dict[str, float],
    hbm_gb_s: float,
    node_gbps: float,
    gpus_per_node: int,
    domain_gpus: int | None = None,
    nvlink_gb_s: float | None = None,
    generation: str | None = None,
) -> Hardware:
    """A GPU's links from the catalog's figures: NVLink (catalog accelerators.yaml `nvlink`; none: PCIe at
    PCIE_GB_S), the fabric from the node's network."""
    return Hardware(
        peak_tflops=peak_tflops,
        hbm_gb_s=hbm_gb_s,
        nvlink_gb_s=nvlink_gb_s or PCIE_GB_S,
        fabric_gb_s=node_gbps / 8 / gpus_per_node,
        domain_gpus=domain_gpus or gpus_per_node,
        accelerator=accelerator,
        generation=generation,
    )


__all__ = [
    "EFFICIENCY",
    "Efficiency",
    "Hardware",
    "ModelShape",
    "Parallel",
    "StepInputs",
    "StepTime",
    "hardware",
    "step_time",
]
