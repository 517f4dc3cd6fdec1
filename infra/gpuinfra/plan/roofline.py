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

from gpuinfra.plan.memory import Plain


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


__all__ = [
    "ReplicaBound",
    "decode_step_bytes",
    "decode_steps_per_s_bound",
    "decode_tokens_per_s_bound",
    "in_flight",
    "kv_cache_concurrency",
    "mean_context_tokens",
    "replica_bound",
    "requests_per_s_bound",
]
