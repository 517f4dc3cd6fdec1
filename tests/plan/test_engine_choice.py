"""The fleet plan admits and rates a replica by the engine the spec runs, each by its documented KV rule:

- vLLM: gpu_memory_utilization x memory - weights - 1 GiB activation workspace per GPU (vllm/v1/worker/gpu_worker.py
  determine_available_memory);
- TensorRT-LLM: free_gpu_memory_fraction x (memory - weights - workspace) ("TensorRT LLM will try to allocate 90% of
  free GPU memory for KV cache", TensorRT-LLM docs, "How to Change KV Cache Behavior");
- SGLang: mem_fraction_static x memory - weights (weights and KV pool share the static fraction).

Hand figures: the example fleet on g6e.xlarge (one L40S, 45,776 MiB = 47,999,565,824 bytes), 8B bf16 weights
(16e9 bytes), FP8 KV of 32 layers x 8 heads x 128 x 2 (K, V) = 65,536 bytes a token, 4,000 tokens in and 2,000 out
(a mean context of 4,000 + 2,000 / 2 = 5,000 tokens: 327,680,000 bytes a sequence), utilization 0.9, 256 sequences
allowed (so the KV memory, not the cap, sets the batch):
- vLLM: 0.9 x 47,999,565,824 - 16e9 - 1,073,741,824 = 26,125,867,417.6 bytes -> 79 sequences;
- SGLang: 0.9 x 47,999,565,824 - 16e9 = 27,199,609,241.6 -> 83;
- TensorRT-LLM: 0.9 x (47,999,565,824 - 16e9 - 1,073,741,824) = 27,833,241,600 -> 84.
"""

from __future__ import annotations

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.plan import InferencePlan
from helpers import checked

KV_BOUND = {
    "model.precision": "bf16",
    "model.adapters": [],
    "model.max_concurrent_sequences": 256,
    "instance.type": "g6e.xlarge",
    "regions[3].instance_type": "g6e.xlarge",
    "requests": {"input_tokens": 4000, "output_tokens": 2000, "latency_target_seconds": 60},
    "throughput_rps_per_replica": 0.1,
}


def plan_on(engine: str) -> InferencePlan:
    e = load_catalog().engine(engine)
    access = {"scheme": "internal", "auth": "none", "waf": None}
    spec = {**KV_BOUND, "engine": engine, "server_image": e.image, "server_image_digest": e.image_digest}
    plan = checked("chat-serve", {**spec, "access": access}).plan
    assert isinstance(plan, InferencePlan)
    return plan


@pytest.mark.parametrize(("engine", "batch"), [("vllm", 79), ("sglang", 83), ("tensorrt-llm", 84)])
def test_each_engine_sizes_the_batch_by_its_own_rule(engine: str, batch: int) -> None:
    plan = plan_on(engine)
    assert plan.memory.weights_bytes == 16 * 10**9  # the hand figures' weights
    assert plan.memory.kv_bytes_per_token == 65_536
    assert {r.bound.batch for r in plan.regions if r.bound} == {batch}
    assert plan.economics is not None and plan.economics.engine == engine
    bf16 = next(p for p in plan.economics.quantization if p.precision == "bf16")
    assert bf16.concurrency == batch  # the quantization table applies the same rule


def test_the_admission_follows_the_engine() -> None:
    """Admission: one 8,192-token sequence of bf16 KV (32 x 8 x 128 x 2 x 2 = 131,072 bytes a token: 1,073,741,824
    bytes) beside 42.4e9 bytes of bf16 weights (21.2B parameters) on the L40S. vLLM leaves 0.9 x 47,999,565,824 -
    42.4e9 - 1,073,741,824 = -274,132,582.4 bytes (refused), SGLang 0.9 x 47,999,565,824 - 42.4e9 = 799,609,241.6
    (refused: less than the sequence), TensorRT-LLM 0.9 x (47,999,565,824 - 42.4e9 - 1,073,741,824) =
    4,073,241,600 (admitted)."""
    shape = {"model.parameters_billion": 21.2, "model.kv_cache.precision": "bf16"}
    fits = {}
    for engine in load_catalog().engine_table.names:
        e = load_catalog().engine(engine)
        spec = {**KV_BOUND, **shape, "engine": engine, "server_image": e.image, "server_image_digest": e.image_digest}
        result = checked("chat-serve", {**spec, "access": {"scheme": "internal", "auth": "none", "waf": None}})
        fits[engine] = "model-does-not-fit-instance" not in {f.rule for f in result.findings}
    assert fits == {"vllm": False, "sglang": False, "tensorrt-llm": True}
