"""The serving roofline: what one replica can physically do, from memory bandwidth and memory size.

Autoregressive decode is memory-bandwidth bound: every decode step (one token for each sequence in the
batch) reads all the weights once plus every in-flight sequence's KV cache. So a replica's step rate is at
most bandwidth / (weights + batch x KV bytes of the mean context), and its token rate that times the batch
(the roofline model, Williams et al. 2009; applied to LLM decode in vLLM's and NVIDIA's serving guides).
Concurrency is bounded by the KV-cache memory left after the weights. Little's law ties them to demand:
requests in flight = arrival rate x time in system.

Every function is pure and takes plain numbers (bytes, bytes/s, tokens, seconds), so the planner's other
models (serving economics, cost per token) can reuse them. They are upper bounds: a measured benchmark
(`vllm bench serve`) is always lower and, when given, wins.
"""

from __future__ import annotations

import math

from gpuinfra.plan.memory import Plain, ServingMemory
from gpuinfra.plan.throughput import EFFICIENCY


def mean_context_tokens(input_tokens: int, output_tokens: int) -> float:
    """Tokens a sequence holds in KV cache on average over its decode: the prompt plus half the answer."""
    return input_tokens + output_tokens / 2


def decode_step_bytes(weights_bytes: float, batch: int, kv_bytes_per_token: float, context_tokens: float) -> float:
    """Bytes read from device memory per decode step: all weights once, plus each sequence's KV cache."""
    return weights_bytes + batch * kv_bytes_per_token * context_tokens


def decode_steps_per_s_bound(
    bandwidth_bytes_per_s: float,
    weights_bytes: float,
    batch: int,
    kv_bytes_per_token: float,
    context_tokens: float,
) -> float:
    """Decode steps per second a replica cannot exceed: bandwidth over the bytes one step reads."""
    return bandwidth_bytes_per_s / decode_step_bytes(weights_bytes, batch, kv_bytes_per_token, context_tokens)


def decode_tokens_per_s_bound(
    bandwidth_bytes_per_s: float,
    weights_bytes: float,
    batch: int,
    kv_bytes_per_token: float,
    context_tokens: float,
) -> float:
    """Output tokens per second of a replica decoding `batch` sequences at once (steps/s x batch)."""
    return batch * decode_steps_per_s_bound(
        bandwidth_bytes_per_s, weights_bytes, batch, kv_bytes_per_token, context_tokens
    )


def kv_cache_concurrency(kv_memory_bytes: float, kv_bytes_per_token: float, tokens_per_sequence: float) -> int:
    """Sequences whose KV cache fits in `kv_memory_bytes` at `tokens_per_sequence` each (paged: no padding)."""
    if kv_memory_bytes <= 0 or kv_bytes_per_token <= 0 or tokens_per_sequence <= 0:
        return 0
    return math.floor(kv_memory_bytes / (kv_bytes_per_token * tokens_per_sequence))


def requests_per_s_bound(tokens_per_s: float, output_tokens: int) -> float:
    """Requests per second a token rate sustains when each request generates `output_tokens`."""
    return tokens_per_s / output_tokens


def in_flight(requests_per_s: float, seconds_in_system: float) -> float:
    """Little's law: requests in flight at `requests_per_s` when each spends `seconds_in_system`."""
    return requests_per_s * seconds_in_system


class ReplicaBound(Plain):
    """The roofline of one replica for one request shape."""

    bandwidth_gb_s: float
    """Summed over the replica's accelerators (tensor parallelism splits weights and KV over them)."""
    batch: int
    """Sequences decoded together: the server's max-num-seqs, lowered to what the KV cache holds."""
    steps_per_s: float
    tokens_per_s: float
    requests_per_s: float
    generation_seconds: float
    """Time to decode one request's output at that step rate (the latency floor at full batch)."""
    bandwidth_tokens_per_s: float | None = None
    """The calibrated ceiling's decode-only bound (None: the plain bandwidth roofline)."""
    compute_tokens_per_s: float | None = None
    """The calibrated ceiling's compute-only bound (None: no dense peak known, or the plain roofline)."""
    physical_tokens_per_s: float | None = None
    """The same ceiling at 100% of the datasheet bandwidth and peak: what no server can exceed."""


def replica_bound(
    bandwidth_gb_s: float,
    weights_bytes: float,
    kv_bytes_per_token: float,
    max_num_seqs: int,
    kv_memory_bytes: float,
    input_tokens: int,
    output_tokens: int,
) -> ReplicaBound:
    """Throughput ceiling of one replica serving requests of `input_tokens` in and `output_tokens` out."""
    context = mean_context_tokens(input_tokens, output_tokens)
    batch = max(1, min(max_num_seqs, kv_cache_concurrency(kv_memory_bytes, kv_bytes_per_token, context)))
    steps = decode_steps_per_s_bound(bandwidth_gb_s * 1e9, weights_bytes, batch, kv_bytes_per_token, context)
    tokens = batch * steps
    return ReplicaBound(
        bandwidth_gb_s=bandwidth_gb_s,
        batch=batch,
        steps_per_s=steps,
        tokens_per_s=tokens,
        requests_per_s=requests_per_s_bound(tokens, output_tokens),
        generation_seconds=output_tokens / steps,
    )


ACTIVATION_WORKSPACE_BYTES = 2**30
"""Per GPU, what vLLM's memory profiling takes besides weights and KV cache (activation peak of a
max-num-batched-tokens forward pass plus non-torch memory): vLLM's own log, Llama 3.1 8B bf16 on H100 at 0.90,
"model weights take 14.99GiB; non_torch_memory takes 0.12GiB; PyTorch activation peak memory takes 1.19GiB"
(1.31 GiB); Qwen3-8B "non_torch_memory takes 0.06GiB; PyTorch activation peak memory takes 1.40GiB"; on a
22 GiB GPU "non_torch_memory takes 0.05GiB; PyTorch activation peak memory takes 0.22GiB". 1 GiB is their middle."""
DECODE_BANDWIDTH_EFFICIENCY = 0.60
"""Share of the datasheet memory bandwidth a decode step reaches. Fitted (least squares on log ratios) to the six
TensorRT-LLM throughput rows of the calibration set (docs/source/performance/perf-overview.md: H100, H200, L40S,
A100) with prefill at matmul_efficiency (tests/plan/test_calibration.py, docs/planning.md); 0.62 when prefill ran
at one fitted 0.52."""


def matmul_efficiency(precision: str, generation: str | None = None) -> float:
    """Share of the dense peak (fp8 peak for fp8 matmuls, bf16 otherwise) prefill and decode matmuls reach: the step
    model's GEMM efficiency at that precision and architecture (plan/throughput.py EFFICIENCY, fitted to published
    training runs), one figure for a matmul whether it trains or serves. It replaced a single 0.52 fitted to the
    serving rows, which held fp8 and bf16 alike: A100's bf16 prefill-bound rows sat at 0.67-0.72 of TensorRT-LLM's
    published figures (docs/planning.md)."""
    return EFFICIENCY.gemm.get(precision, EFFICIENCY.gemm["bf16"]) * EFFICIENCY.generation.get(generation or "", 1.0)


ENGINES = ("vllm", "tensorrt-llm", "sglang")
"""The serving engines whose KV-cache admission rule the planner knows (kv_memory_bytes)."""


def kv_memory_bytes(
    memory_bytes: float, utilization: float, weights_bytes: float, gpus: int, engine: str = "vllm"
) -> float:
    """What the engine leaves for the KV cache, by its own rule:

    - vllm: its share (gpu_memory_utilization) of the replica's memory, less the weights and each GPU's activation
      workspace (vllm/v1/worker/gpu_worker.py determine_available_memory);
    - tensorrt-llm: its share (free_gpu_memory_fraction, default 0.9) of the memory still free once the weights
      and the activation workspace are allocated ("The default for free_gpu_memory_fraction is 0.9, which means
      TensorRT LLM will try to allocate 90% of free GPU memory for KV cache", TensorRT-LLM docs, "How to Change KV
      Cache Behavior");
    - sglang: its static share (mem_fraction_static) of the memory holds the weights and the KV pool together,
      activations outside it (kv = total x mem_fraction_static - weights; SGLang model_runner's memory pool)."""
    if engine == "tensorrt-llm":
        return utilization * (memory_bytes - weights_bytes - gpus * ACTIVATION_WORKSPACE_BYTES)
    if engine == "sglang":
        return memory_bytes * utilization - weights_bytes
    return memory_bytes * utilization - weights_bytes - gpus * ACTIVATION_WORKSPACE_BYTES


def serving_admits(
    memory: ServingMemory, memory_bytes: float, utilization: float, gpus: int = 1, engine: str = "vllm"
) -> bool:
    """The engine starts when the KV memory its rule leaves holds one maximum-length sequence (vLLM:
    vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory: "To serve at least one request with the models's
    max seq len ... KV cache is needed, which is larger than the available KV cache memory"). `memory` carries the
    KV cache of one sequence at the maximum model length (serving_memory with one sequence)."""
    free = kv_memory_bytes(memory_bytes, utilization, memory.weights_bytes, gpus, engine)
    return memory.kv_cache_bytes + memory.adapter_bytes <= free


class ReplicaCeiling(Plain):
    """What one replica can sustain for one request shape: decode steps share the GPUs with prefill."""

    batch: int
    """Sequences in flight: max-num-seqs, lowered to what the KV memory holds at the mean context."""
    step_seconds: float
    """One decode step (memory- or compute-bound, the longer) plus the prefill work that step's share of requests
    brings (continuous batching time-shares them)."""
    bandwidth_tokens_per_s: float
    """Decode alone at the measured share of the memory bandwidth."""
    compute_tokens_per_s: float | None
    """Prefill and decode FLOPs alone at the measured share of the dense peak (None: no peak known, so the
    ceiling is the bandwidth bound alone)."""
    tokens_per_s: float
    """The ceiling: batch / step_seconds, never above either bound."""


def replica_ceiling(
    bandwidth_gb_s: float,
    peak_tflops: float | None,
    memory_bytes: float,
    utilization: float,
    gpus: int,
    memory: ServingMemory,
    active_parameters: float,
    max_num_seqs: int,
    input_tokens: int,
    output_tokens: int,
    bandwidth_efficiency: float = DECODE_BANDWIDTH_EFFICIENCY,
    compute_efficiency: float | None = None,
    engine: str = "vllm",
) -> ReplicaCeiling:
    """The output-token ceiling of one replica (bandwidth, peak and memory summed over its GPUs); at efficiencies
    of 1.0 the physical bound no server exceeds. `compute_efficiency` defaults to bf16 matmuls on Hopper
    (matmul_efficiency)."""
    if compute_efficiency is None:
        compute_efficiency = matmul_efficiency("bf16")
    context = mean_context_tokens(input_tokens, output_tokens)
    kv_memory = kv_memory_bytes(memory_bytes, utilization, memory.weights_bytes, gpus, engine)
    batch = max(1, min(max_num_seqs, kv_cache_concurrency(kv_memory, memory.kv_bytes_per_token, context)))
    read_s = decode_step_bytes(memory.weights_bytes, batch, memory.kv_bytes_per_token, context) / (
        bandwidth_gb_s * 1e9 * bandwidth_efficiency
    )
    decode_flops_s, prefill_s = 0.0, 0.0
    if peak_tflops:
        flops_per_s = peak_tflops * 1e12 * compute_efficiency
        decode_flops_s = 2 * active_parameters * batch / flops_per_s
        prefill_s = 2 * active_parameters * batch * input_tokens / output_tokens / flops_per_s
    step = max(read_s, decode_flops_s) + prefill_s
    return ReplicaCeiling(
        batch=batch,
        step_seconds=step,
        bandwidth_tokens_per_s=batch / read_s,
        compute_tokens_per_s=batch / (decode_flops_s + prefill_s) if peak_tflops else None,
        tokens_per_s=batch / step,
    )


def ceiling_bound(
    ceiling: ReplicaCeiling, bandwidth_gb_s: float, output_tokens: int, physical: ReplicaCeiling | None = None
) -> ReplicaBound:
    """The ceiling in the plan's ReplicaBound shape (steps/s, requests/s, time to generate one answer)."""
    steps = 1.0 / ceiling.step_seconds
    return ReplicaBound(
        bandwidth_gb_s=bandwidth_gb_s,
        batch=ceiling.batch,
        steps_per_s=steps,
        tokens_per_s=ceiling.tokens_per_s,
        requests_per_s=requests_per_s_bound(ceiling.tokens_per_s, output_tokens),
        generation_seconds=output_tokens / steps,
        bandwidth_tokens_per_s=ceiling.bandwidth_tokens_per_s,
        compute_tokens_per_s=ceiling.compute_tokens_per_s,
        physical_tokens_per_s=physical.tokens_per_s if physical else None,
    )


__all__ = [
    "ACTIVATION_WORKSPACE_BYTES",
    "DECODE_BANDWIDTH_EFFICIENCY",
    "ENGINES",
    "ReplicaBound",
    "ReplicaCeiling",
    "ceiling_bound",
    "decode_step_bytes",
    "decode_steps_per_s_bound",
    "decode_tokens_per_s_bound",
    "in_flight",
    "kv_cache_concurrency",
    "kv_memory_bytes",
    "matmul_efficiency",
    "mean_context_tokens",
    "replica_bound",
    "replica_ceiling",
    "requests_per_s_bound",
    "serving_admits",
]
