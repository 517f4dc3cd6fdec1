"""The model server's command line, from the spec: one function both platforms (Docker on EC2, a Kubernetes
container) call, so what the planner assumed (engine, weights precision, KV-cache element size, memory share,
sequences in flight) is what runs. vLLM below; SGLang and TensorRT-LLM after it (their sources there).

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

from gpuinfra.catalog.engines import Engine
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
    model: ServedModel,
    model_dir: str,
    tensor_parallel: int,
    engine: Engine,
    extra: list[str] | tuple[str, ...] = (),
    port: int | None = None,
) -> list[str]:
    """The server's argv after the image, one list element per word: the engine's launcher (none for vLLM, whose
    image's entrypoint is `vllm serve`), then its flags. `port`: where it listens in the container (vLLM's default
    8000 when None); `extra` (the spec's server_args) last, so a flag there wins."""
    if engine.name == "sglang":
        flags = sglang_flags(model, model_dir, tensor_parallel, port or SERVER_PORT, engine.memory_flag)
    elif engine.name == "tensorrt-llm":
        flags = trtllm_flags(model, model_dir, tensor_parallel, port or SERVER_PORT, engine.memory_flag)
    else:
        flags = [
            *vllm_flags(model, model_dir, tensor_parallel, engine.memory_flag),
            *(["--port", str(port)] if port else []),
        ]
    return [*engine.launcher, *flags, *extra]


def vllm_flags(model: ServedModel, model_dir: str, tensor_parallel: int, memory_flag: str) -> list[str]:
    """`vllm serve` flags for the plan's values (`memory_flag`: engines.yaml's, --gpu-memory-utilization)."""
    return [
        "--model",
        model_dir,
        "--served-model-name",
        model.name,
        "--max-model-len",
        str(model.context_length_tokens),
        "--max-num-seqs",
        str(model.max_concurrent_sequences),
        memory_flag,
        str(model.gpu_memory_utilization),
        "--tensor-parallel-size",
        str(tensor_parallel),
        *weight_flags(model),
        "--kv-cache-dtype",
        kv_cache_dtype(model),
        *lora_flags(model),
    ]


SERVER_PORT = 8000
"""Where every engine listens inside its container (vLLM's default; SGLang's is 30000 and trtllm-serve's host
localhost, so both get --host and --port)."""
ANY_ADDRESS = "0.0.0.0"
SGLANG_KV_DTYPE = {"fp8": "fp8_e4m3", "auto": "auto"}
"""--kv-cache-dtype choices (sglang/srt/server_args.py): fp8_e4m3 for the plan's one-byte cache."""


def sglang_flags(model: ServedModel, model_dir: str, tensor_parallel: int, port: int, memory_flag: str) -> list[str]:
    """`python3 -m sglang.launch_server` flags (docs.sglang.io, "Server Arguments"; sglang/srt/server_args.py):
    --max-running-requests caps the batch as vLLM's --max-num-seqs does; --mem-fraction-static is the share of
    memory for weights and the KV pool together (SGLang's rule, plan/roofline.py kv_memory_bytes);
    --enable-metrics turns on /metrics, which the autoscaler reads (off by default)."""
    return [
        "--model-path",
        model_dir,
        "--served-model-name",
        model.name,
        "--context-length",
        str(model.context_length_tokens),
        "--max-running-requests",
        str(model.max_concurrent_sequences),
        memory_flag,
        str(model.gpu_memory_utilization),
        "--tp-size",
        str(tensor_parallel),
        *weight_flags(model),
        "--kv-cache-dtype",
        SGLANG_KV_DTYPE[kv_cache_dtype(model)],
        "--enable-metrics",
        "--host",
        ANY_ADDRESS,
        "--port",
        str(port),
    ]


TRTLLM_CONFIG = "/etc/gpuinfra/trtllm.yaml"
"""Where the container sees the options file trtllm_config writes (--config, alias --extra_llm_api_options)."""


def trtllm_flags(model: ServedModel, model_dir: str, tensor_parallel: int, port: int, memory_flag: str) -> list[str]:
    """`trtllm-serve serve <model>` flags (tensorrt_llm/commands/serve.py): the PyTorch backend, which reads the
    checkpoint's own quantization (a ModelOpt FP8 checkpoint stays FP8); --max_batch_size caps the requests it
    schedules (vLLM's --max-num-seqs); --kv_cache_free_gpu_memory_fraction is its share of the memory the weights
    leave (TensorRT-LLM's rule); the options file holds what has no flag."""
    return [
        model_dir,
        "--served_model_name",
        model.name,
        "--host",
        ANY_ADDRESS,
        "--port",
        str(port),
        "--backend",
        "pytorch",
        "--max_batch_size",
        str(model.max_concurrent_sequences),
        "--max_seq_len",
        str(model.context_length_tokens),
        "--tp_size",
        str(tensor_parallel),
        memory_flag,
        str(model.gpu_memory_utilization),
        "--config",
        TRTLLM_CONFIG,
    ]


def trtllm_config(model: ServedModel) -> str:
    """The options file (YAML, LLM API arguments): Prometheus on /prometheus/metrics (return_perf_metrics) with
    the iteration stats the queue gauges come from (enable_iter_perf_stats; tensorrt_llm/metrics/collector.py),
    and the KV cache: its element type and the same memory share (the file's kv_cache_config replaces the one the
    flag built, so it repeats the fraction)."""
    dtype = "fp8" if kv_cache_dtype(model) == "fp8" else "auto"
    return (
        "return_perf_metrics: true\n"
        "enable_iter_perf_stats: true\n"
        "kv_cache_config:\n"
        f"  free_gpu_memory_fraction: {model.gpu_memory_utilization}\n"
        f"  dtype: {dtype}\n"
    )


def engine_config(model: ServedModel, engine: str) -> str | None:
    """The options file the engine reads at TRTLLM_CONFIG (TensorRT-LLM only), else None."""
    return trtllm_config(model) if engine == "tensorrt-llm" else None


__all__ = [
    "ADAPTER_DIR",
    "DTYPE",
    "SERVER_PORT",
    "TRTLLM_CONFIG",
    "engine_args",
    "engine_config",
    "kv_cache_dtype",
    "lora_flags",
    "sglang_flags",
    "trtllm_config",
    "trtllm_flags",
    "vllm_flags",
    "weight_flags",
]
