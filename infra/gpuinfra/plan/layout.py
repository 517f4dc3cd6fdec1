"""Parallelism and per-GPU memory: tensor parallel inside the NVLink domain, pipeline, context and data parallel
across nodes, ZeRO over the data-parallel group; weights, gradients, optimizer states and activations per GPU.

States: Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
section 3.1 ((2 + 2 + K) bytes a parameter; stage 1 shards the K bytes of optimizer state over the data-parallel
group, stage 2 the gradients too, stage 3 the weights too). Activations: Korthikanti et al. 2022, "Reducing
Activation Recomputation in Large Transformer Models", table 2 (16-bit activations of one layer, in bytes).
Embedding and output-layer activations are left out (small beside L layers at long sequences).

Framework allocations beyond the textbook counts: Megatron-LM accumulates and reduces bf16 gradients in fp32 (its
distributed-optimizer guide: "bf16 param, fp32 grads | 18 | 6 + 12/d" bytes a parameter; the layout's
`grad_accumulation` picks fp32 or the low precision), and the first pipeline stage holds the input embedding (vocab
x hidden parameters, split over tensor parallelism) besides its share of the layers (the last stage the output
layer: Megatron's LanguageModelEmbedding and output_layer live on those stages only).

Context parallelism (CP) splits every layer's activations along the sequence: "CP divides the activations of all
layers" (NeMo Framework user guide, Context Parallelism), so a GPU holds s/CP tokens of each layer's activations.
CP ranks hold the same weights; the optimizer shards over data-parallel x context-parallel ranks (Megatron-core's
distributed optimizer uses the data-parallel group with context parallel; torchtitan shards FSDP over dp_shard x cp).
Llama 3 405B trained its 128K-token stage with CP 16 (Llama 3 paper, table 4).
"""

from __future__ import annotations

from itertools import product

from gpuinfra.plan.memory import Plain, training_bytes_per_parameter

RECOMPUTE_ORDER = ("none", "selective", "full")


class Shape(Plain):
    """The model's shape and batch (spec `model.architecture`)."""

    parameters: float
    layers: int
    hidden_size: int
    attention_heads: int
    sequence_length: int
    micro_batch_size: int
    vocab_size: int = 0
    """Vocabulary (embedding rows); 0: the embedding is not placed apart from the layers."""


class Layout(Plain):
    tensor: int
    pipeline: int
    zero_stage: int
    recompute: str
    sequence_parallel: bool = True
    context: int = 1
    """Context-parallel degree: ranks that split each sequence (Megatron-LM --context-parallel-size)."""
    grad_accumulation: str = "low"
    """Gradient accumulation and reduction dtype: `low` (the training precision's bytes) or fp32 (Megatron-LM's
    main_grad for bf16 params; the spec's default, parallelism.grad_accumulation)."""

    def describe(self) -> str:
        cp = f" CP={self.context}" if self.context > 1 else ""
        return f"TP={self.tensor}{cp} PP={self.pipeline} ZeRO-{self.zero_stage} recompute {self.recompute}" + (
            " +SP" if self.sequence_parallel and self.tensor > 1 else ""
        )


class Budget(Plain):
    """What a layout is sized against: the training precision and optimizer, and the cluster's GPUs."""

    precision: str
    optimizer: str
    gpus: int
    gpus_per_node: int
    gpu_bytes: int
    reserve_fraction: float
    nvlink_gpus: int | None = None
    """GPUs of one NVLink domain when it spans hosts (GB200 NVL72: 72); None: one node's GPUs."""

    @property
    def domain(self) -> int:
        return self.nvlink_gpus or self.gpus_per_node


class LayoutMemory(Plain):
    """Per-GPU memory of one layout (on the first pipeline stage, which holds the most activations)."""

    layout: Layout
    data_parallel: int
    weights_bytes: int
    gradients_bytes: int
    optimizer_bytes: int
    activations_bytes: int
    buffers_bytes: int
    """ZeRO-3 unshard buffers: two layers' weights gathered at once (the one computing, the one prefetched)."""
    reserve_bytes: int
    total_bytes: int
    gpu_bytes: int
    fits: bool
    problems: list[str] = []
    """Why the layout cannot be run at all (degrees that do not divide the cluster, the heads or the layers)."""
    proposal: Layout | None = None
    """When it does not fit: the nearest layout that does, if any."""
    proposal_bytes: int | None = None


def activation_bytes_per_layer(
    s: int, b: int, h: int, a: int, t: int, sequence_parallel: bool, recompute: str
) -> float:
    """Korthikanti et al. 2022, table 2: sbh(34 + 5as/h) with no parallelism; tensor parallel divides all but 10sbh
    of it by t, sequence parallel that rest as well; selective recompute drops the 5as/h attention term; full
    recompute keeps only the layer input, 2sbh (sbh(34 + 5as/h) for 70B-class shapes is about 1 GB)."""
    if recompute == "full":
        return 2 * s * b * h / (t if sequence_parallel else 1)
    attention = 5 * a * s / h if recompute == "none" else 0.0
    if sequence_parallel:
        return s * b * h * (34 + attention) / t
    return s * b * h * (10 + 24 / t + attention / t)


def state_bytes(precision: str, optimizer: str, grad_accumulation: str = "low") -> tuple[int, int, int]:
    """(weights, gradients, optimizer states incl. fp32 master) bytes a parameter: 2, 2, 12 for bf16 AdamW; with
    fp32 gradient accumulation 2, 4, 12 (Megatron-LM's 18 bytes for bf16 params and fp32 grads)."""
    total = training_bytes_per_parameter(precision, optimizer)
    low = 4 if precision == "fp32" else 2
    grads = 4 if grad_accumulation == "fp32" else low
    return low, grads, total - 2 * low


def layout_problems(layout: Layout, shape: Shape, gpus: int, domain: int) -> list[str]:
    """Why the layout cannot run; `domain` is the GPUs of one NVLink domain (a node's, or an NVL72 rack's 72)."""
    out = []
    t, p, c = layout.tensor, layout.pipeline, layout.context
    if t > domain or domain % t:
        out.append(f"tensor parallel {t} must divide the {domain} GPUs of the NVLink domain")
    if shape.attention_heads % t:
        out.append(f"tensor parallel {t} must divide the {shape.attention_heads} attention heads")
    if shape.layers < p:
        out.append(f"pipeline parallel {p} needs at least one of the {shape.layers} layers a stage")
    if gpus % (t * p * c):
        out.append(f"{gpus} GPUs are not a multiple of TP x PP x CP = {t * p * c}")
    if c > 1 and shape.sequence_length % (2 * c):
        # Megatron-LM cuts each sequence into 2 x CP chunks to balance causal attention (get_batch_on_this_cp_rank)
        out.append(
            f"context parallel {c} needs the sequence length {shape.sequence_length} to split into {2 * c} chunks"
        )
    return out


def stage_layer_count(layers: int, pipeline: int) -> int:
    """Layers of the heaviest pipeline stage. Stages may be uneven: Llama 3 405B ran 126 layers on 16 stages ("we
    reduce one Transformer layer each from the first and the last stages", Llama 3 paper section 3.3.2); Megatron-LM
    takes --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers for it."""
    return -(-layers // pipeline)


def layout_bytes(layout: Layout, shape: Shape, budget: Budget) -> tuple[dict[str, int], int]:
    """Per-GPU bytes by kind, and the data-parallel degree."""
    t, p, c = layout.tensor, layout.pipeline, layout.context
    d = max(1, budget.gpus // (t * p * c))
    shards = d * c  # ZeRO shards states over the data-parallel x context-parallel ranks
    w, g, o = state_bytes(budget.precision, budget.optimizer, layout.grad_accumulation)
    stage_layers = stage_layer_count(shape.layers, p)
    embedding = shape.vocab_size * shape.hidden_size
    # the first stage: its layers' share of the non-embedding parameters plus the input embedding
    shard = ((shape.parameters - embedding) * stage_layers / shape.layers + embedding) / t
    z = layout.zero_stage
    per_layer = activation_bytes_per_layer(
        shape.sequence_length // c,
        shape.micro_batch_size,
        shape.hidden_size,
        shape.attention_heads,
        t,
        layout.sequence_parallel and t > 1,
        layout.recompute,
    )
    parts = {
        "weights": round(shard * w / (shards if z >= 3 else 1)),
        "gradients": round(shard * g / (shards if z >= 2 else 1)),
        "optimizer": round(shard * o / (shards if z >= 1 else 1)),
        # 1F1B: the first stage holds p micro-batches of its L/p layers = L layers' activations (Korthikanti 4.2.3);
        # with uneven stages the heaviest stage's ceil(L/p) layers count.
        "activations": round(p * stage_layers * per_layer),
        "buffers": round(2 * shape.parameters / shape.layers / t * w) if z >= 3 else 0,
        "reserve": round(budget.gpu_bytes * budget.reserve_fraction),
    }
    return parts, d


def fits_on(layout: Layout, shape: Shape, budget: Budget) -> bool:
    """The layout can run on the cluster and its per-GPU bytes fit a GPU."""
    if layout_problems(layout, shape, budget.gpus, budget.domain):
        return False
    parts, _ = layout_bytes(layout, shape, budget)
    return sum(parts.values()) <= budget.gpu_bytes


def propose_layout(layout: Layout, shape: Shape, budget: Budget) -> Layout | None:
    """The nearest layout that fits: fewest pipeline stages first, then the least recomputation, the smallest
    tensor-parallel degree and the lowest ZeRO stage at or above the spec's."""
    gpn = budget.domain
    pipelines = [
        p for p in range(1, shape.layers + 1) if shape.layers % p == 0 and budget.gpus % (p * layout.context) == 0
    ]
    tensors = [t for t in range(1, gpn + 1) if gpn % t == 0 and t >= layout.tensor]
    recomputes = RECOMPUTE_ORDER[RECOMPUTE_ORDER.index(layout.recompute) :]
    zeros = range(layout.zero_stage, 4)
    for p, r, t, z in product(pipelines, recomputes, tensors, zeros):
        candidate = Layout(
            tensor=t,
            pipeline=p,
            zero_stage=z,
            recompute=r,
            sequence_parallel=True,
            context=layout.context,
            grad_accumulation=layout.grad_accumulation,
        )
        if fits_on(candidate, shape, budget):
            return candidate
    return None


def layout_memory(layout: Layout, shape: Shape, budget: Budget) -> LayoutMemory:
    problems = layout_problems(layout, shape, budget.gpus, budget.domain)
    parts, d = layout_bytes(layout, shape, budget)
    total = sum(parts.values())
    fits = not problems and total <= budget.gpu_bytes
    proposal = None if fits else propose_layout(layout, shape, budget)
    return LayoutMemory(
        layout=layout,
        data_parallel=d,
        weights_bytes=parts["weights"],
        gradients_bytes=parts["gradients"],
        optimizer_bytes=parts["optimizer"],
        activations_bytes=parts["activations"],
        buffers_bytes=parts["buffers"],
        reserve_bytes=parts["reserve"],
        total_bytes=total,
        gpu_bytes=budget.gpu_bytes,
        fits=fits,
        problems=problems,
        proposal=proposal,
        proposal_bytes=sum(layout_bytes(proposal, shape, budget)[0].values()) if proposal else None,
    )


__all__ = [
    "Budget",
    "Layout",
    "LayoutMemory",
    "Shape",
    "activation_bytes_per_layer",
    "fits_on",
    "layout_bytes",
    "layout_memory",
    "layout_problems",
    "propose_layout",
    "stage_layer_count",
    "state_bytes",
]
