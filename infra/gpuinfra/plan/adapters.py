"""Memory and compute of a parameter-efficient fine-tune: a frozen base plus trained low-rank adapters.

Sources:
- LoRA: Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models", section 4.1: a d_in x d_out
  projection W gains B (d_out x r) and A (r x d_in), r x (d_in + d_out) trainable parameters; W stays frozen, so
  it has no gradient and no optimizer state.
- QLoRA: Dettmers et al. 2023, "QLoRA: Efficient Finetuning of Quantized LLMs", section 3: the frozen base is
  stored in 4-bit NormalFloat with one fp32 quantization constant per block of 64 weights (0.5 bits a parameter),
  which double quantization brings to 8/64 + 32/(64 x 256) = 0.127 bits a parameter. The adapters train in 16 bit.
- Trainable state: ZeRO's (2 + 2 + K) bytes a parameter (plan/memory.py), for the adapter parameters only.
- Activations: Korthikanti et al. 2022, table 2 (plan/layout.py), one GPU (no tensor parallelism), FlashAttention
  (no s^2 attention scores kept). With gradient checkpointing each layer keeps only its input (2sbh bytes) and
  one layer's full activations (34sbh) exist at a time while it is recomputed. Frozen projections need no saved
  inputs for weight gradients, so 34sbh a layer is an upper bound for LoRA.
- FLOPs: Kaplan et al. 2020 section 2.1 count 6N a token, forward 2N and backward 4N; the backward splits evenly
  into gradients with respect to activations (2N) and to weights (2N) (Narayanan et al. 2021, "Efficient
  Large-Scale Language Model Training on GPU Clusters", section 5.1 counts the backward as two forwards for this
  reason). A frozen base skips the weight gradients: 4N a token; gradient checkpointing reruns the forward: 6N.
  The adapters' own FLOPs (r << d) are left out.
"""

from __future__ import annotations

from gpuinfra.plan.layout import activation_bytes_per_layer
from gpuinfra.plan.memory import Plain, training_bytes_per_parameter

NF4_BITS = 4.0
DOUBLE_QUANT_CONSTANT_BITS = 8 / 64 + 32 / (64 * 256)
"""QLoRA section 3 (Double Quantization): 8-bit constants per 64-block plus fp32 second-level constants per 256."""
BASE_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0}
"""Bytes a frozen weight: fp8 checkpoints store one byte a weight and one fp32 scale a tensor (or a 128 x 128 block
in DeepSeek-V3's: 4 / 16,384 bytes more a weight), which the count leaves out."""
ADAPTER_OPTIMIZER = "adamw"
"""PEFT trains LoRA adapters with AdamW in mixed precision: 16 bytes of state a trainable parameter in bf16."""
PAGED_GPU_BYTES = 4
"""QLoRA keeps only bf16 adapter weights and gradients (2 + 2 bytes a parameter) on the GPU: its trainer casts the
LoRA layers to bf16 under --bf16 (artidoro/qlora qlora.py @7f4e95a, lines 397-399) and its default optimizer is
paged_adamw_32bit (line 198), whose two fp32 moments live in paged unified memory that is evicted to CPU RAM when
the GPU runs short (QLoRA abstract: "(c) Paged Optimizers to manage memory spikes")."""
PAGED_STATE_BYTES = 8
"""The paged fp32 Adam moments a parameter: host-pageable, not counted against the GPU."""
FORWARD_FLOPS = 2
ACTIVATION_BACKWARD_FLOPS = 2
"""Per parameter per token; a frozen base has no weight-gradient FLOPs (the other 2 of Kaplan's 6)."""


class Shape(Plain):
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    intermediate_size: int
    vocab_size: int = 0
    """0: unknown (the embedding and output layers counted at the base's precision)."""

    def projection(self, module: str) -> tuple[int, int]:
        """(d_in, d_out) of a Llama-style projection."""
        h = self.hidden_size
        kv = self.kv_heads * (h // self.attention_heads)
        return {
            "q_proj": (h, h),
            "k_proj": (h, kv),
            "v_proj": (h, kv),
            "o_proj": (h, h),
            "gate_proj": (h, self.intermediate_size),
            "up_proj": (h, self.intermediate_size),
            "down_proj": (self.intermediate_size, h),
        }[module]


def adapter_parameters(shape: Shape, rank: int, modules: list[str]) -> int:
    """r x (d_in + d_out) for every adapted projection of every layer (LoRA section 4.1)."""
    per_layer = sum(rank * sum(shape.projection(m)) for m in modules)
    return shape.layers * per_layer


def base_bytes(parameters: float, method: str, precision: str, embedding_parameters: float = 0) -> int:
    """The frozen base: NF4 plus double-quantized constants for QLoRA, else the precision's bytes. An FP8 base keeps
    its input embedding and output layer (`embedding_parameters`, both) in 16 bit: FP8 checkpoints quantize the
    linear layers only (llm-compressor's FP8 recipes ignore lm_head; tinygrad's `--quantize fp8` of Llama 3 8B holds
    9.08 GB against 16.06 GB in bf16: tinygrad PR #12893)."""
    if method == "qlora":
        return round(parameters * (NF4_BITS + DOUBLE_QUANT_CONSTANT_BITS) / 8)
    if precision == "fp8":
        return round((parameters - embedding_parameters) * BASE_BYTES["fp8"] + embedding_parameters * 2)
    return round(parameters * BASE_BYTES[precision])


def activation_bytes(shape: Shape, sequence: int, micro_batch: int, checkpointing: bool) -> int:
    s, b, h, a, n = sequence, micro_batch, shape.hidden_size, shape.attention_heads, shape.layers
    full_layer = activation_bytes_per_layer(s, b, h, a, 1, False, "selective")
    if checkpointing:
        return round(n * activation_bytes_per_layer(s, b, h, a, 1, False, "full") + full_layer)
    return round(n * full_layer)


class FinetuneMemory(Plain):
    """Bytes on each GPU of one node (the base and the adapter state sharded over the node's GPUs, FSDP)."""

    base_bytes: int
    adapter_parameters: int
    adapter_state_bytes: int
    """On the GPU: adapter weights, gradients, fp32 master copy and AdamW moments (QLoRA: bf16 weights and
    gradients only, its moments paged)."""
    paged_state_bytes: int = 0
    """QLoRA's paged optimizer moments, in unified memory the GPU evicts to host RAM (not counted on the GPU)."""
    activation_bytes: int
    """Per GPU: one micro-batch."""
    gpus: int
    per_gpu_bytes: int
    reserve_bytes: int
    gpu_bytes: int
    fits: bool


def finetune_memory(
    shape: Shape,
    parameters: float,
    method: str,
    precision: str,
    rank: int,
    modules: list[str],
    sequence: int,
    micro_batch: int,
    checkpointing: bool,
    gpus: int,
    gpu_bytes: int,
    reserve_fraction: float,
) -> FinetuneMemory:
    base = base_bytes(parameters, method, precision, 2 * shape.vocab_size * shape.hidden_size)
    adapters = adapter_parameters(shape, rank, modules)
    paged = method == "qlora"
    state = adapters * (PAGED_GPU_BYTES if paged else training_bytes_per_parameter("bf16", ADAPTER_OPTIMIZER))
    acts = activation_bytes(shape, sequence, micro_batch, checkpointing)
    per_gpu = -(-(base + state) // gpus) + acts
    reserve = int(gpu_bytes * reserve_fraction)
    return FinetuneMemory(
        base_bytes=base,
        adapter_parameters=adapters,
        adapter_state_bytes=state,
        paged_state_bytes=adapters * PAGED_STATE_BYTES if paged else 0,
        activation_bytes=acts,
        gpus=gpus,
        per_gpu_bytes=per_gpu,
        reserve_bytes=reserve,
        gpu_bytes=gpu_bytes,
        fits=per_gpu + reserve <= gpu_bytes,
    )


LORA_SLOT_BYTES_PER_PARAMETER = 2
"""vLLM keeps adapter weights in lora_dtype `auto`, the model's 16-bit dtype (vllm/config/lora.py LoRAConfig)."""


def served_max_rank(ranks: list[int], allowed: tuple[int, ...]) -> int:
    """The smallest rank vLLM accepts for --max-lora-rank that covers every adapter."""
    top = max(ranks)
    return next(r for r in allowed if r >= top)


def lora_slot_bytes(adapters: list[tuple[int, float]], max_rank: int, max_loras: int) -> int:
    """GPU memory of vLLM's adapter slots: it preallocates `--max-loras` slots, each sized for `--max-lora-rank`
    (vLLM docs, "LoRA Adapters": max_loras adapters in a batch are held on the GPU; vllm/lora/layers allocate the
    stacked A/B buffers at max_lora_rank). A slot is the largest adapter, (rank, parameters), scaled to max_rank
    (LoRA parameters grow linearly in r: Hu et al. 2021, section 4.1)."""
    if not adapters:
        return 0
    slot = max(parameters * max_rank / rank for rank, parameters in adapters)
    return round(max_loras * slot * LORA_SLOT_BYTES_PER_PARAMETER)


def finetune_flops(parameters: float, tokens: float, checkpointing: bool) -> float:
    """4N a token for a frozen base (forward plus activation gradients), 6N with the recomputed forward."""
    per_token = FORWARD_FLOPS + ACTIVATION_BACKWARD_FLOPS + (FORWARD_FLOPS if checkpointing else 0)
    return per_token * parameters * tokens


__all__ = [
    "DOUBLE_QUANT_CONSTANT_BITS",
    "FinetuneMemory",
    "Shape",
    "activation_bytes",
    "adapter_parameters",
    "base_bytes",
    "finetune_flops",
    "finetune_memory",
    "lora_slot_bytes",
    "served_max_rank",
]
