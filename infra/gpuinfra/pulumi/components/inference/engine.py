"""The vLLM engine's command line, from the spec: one function both platforms (Docker on EC2, a Kubernetes
container) call, so what the planner assumed (weights precision, KV-cache element size) is what runs.

Flags and their values are vLLM's engine arguments at the pinned image (vllm/vllm-openai:v0.11.0;
docs/configuration/engine_args.md, vllm/engine/arg_utils.py, vllm/config/cache.py):
- ``--kv-cache-dtype``: ``auto`` uses the model's dtype (CacheConfig.cache_dtype: "If "auto", will use
  model data type"); ``fp8`` stores the cache in FP8 (docs/features/quantization/quantized_kvcache.md).
  The planner sizes the cache from the same precision (plan/memory.py: an explicit kv_cache.precision, or
  KV_DEFAULT_BYTES of the weights' precision), so an FP8 plan becomes ``--kv-cache-dtype fp8`` here.
- ``--quantization``: the checkpoint's method. ``fp8`` loads an FP8-serialized checkpoint with its scales,
  or quantizes a bf16 checkpoint at load (docs/features/quantization/fp8.md); a checkpoint whose
  config.json names another method (compressed-tensors, awq, gptq) must be given that name
  (model.quantization), or vLLM refuses the mismatch (ModelConfig._verify_quantization).
- ``--dtype``: bfloat16 / float16 / float32 for unquantized weights.
"""

from __future__ import annotations

from gpuinfra.plan.adapters import served_max_rank
from gpuinfra.plan.memory import KV_DEFAULT_BYTES, SERVING_BYTES
from gpuinfra.spec.inference import LORA_RANKS, ServedModel

DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
"""Spec precision -> vLLM --dtype, for weights served unquantized."""


def kv_cache_dtype(model: ServedModel) -> str:
    """fp8 when the plan sized the cache at one byte per element (explicitly or by default), else auto."""
    kv = model.kv_cache.precision
    element = SERVING_BYTES[kv] if kv else KV_DEFAULT_BYTES[model.precision]
    return "fp8" if element == 1.0 else "auto"


def weight_flags(model: ServedModel) -> list[str]:
    """--quantization for quantized weights, --dtype for the rest (int8/int4 read their method from the
    checkpoint unless the spec names it)."""
    if model.quantization is not None:
        return ["--quantization", model.quantization]
    if model.precision == "fp8":
        return ["--quantization", "fp8"]
    if model.precision in DTYPE:
        return ["--dtype", DTYPE[model.precision]]
    return []


ADAPTER_DIR = "/adapters"
"""Where the server container sees the verified adapters (one directory per adapter name)."""


def lora_flags(model: ServedModel) -> list[str]:
    """vLLM's multi-LoRA serving (docs/features/lora.md; vllm/engine/arg_utils.py): --enable-lora, --max-loras
    adapters a batch may mix, --max-lora-rank (one of LoRAConfig's MaxLoRARanks, covering the largest rank) and
    --lora-modules name=path for each adapter fetched from the registry."""
    if not model.adapters:
        return []
    rank = served_max_rank([a.rank for a in model.adapters], LORA_RANKS)
    return [
        "--enable-lora",
        "--max-loras",
        str(model.max_loras or len(model.adapters)),
        "--max-lora-rank",
        str(rank),
        "--lora-modules",
        *(f"{a.name}={ADAPTER_DIR}/{a.name}" for a in model.adapters),
    ]


def engine_args(
    model: ServedModel, model_dir: str, tensor_parallel: int, extra: list[str] | tuple[str, ...] = ()
) -> list[str]:
    """`vllm serve` arguments (the image's entrypoint), one list element per argv word."""
    return [
        "--model",
        model_dir,
        "--served-model-name",
        model.name,
        "--max-model-len",
        str(model.context_length_tokens),
        "--max-num-seqs",
        str(model.max_concurrent_sequences),
        "--gpu-memory-utilization",
        str(model.gpu_memory_utilization),
        "--tensor-parallel-size",
        str(tensor_parallel),
        *weight_flags(model),
        "--kv-cache-dtype",
        kv_cache_dtype(model),
        *lora_flags(model),
        *extra,
    ]


__all__ = ["ADAPTER_DIR", "DTYPE", "engine_args", "kv_cache_dtype", "lora_flags", "weight_flags"]
