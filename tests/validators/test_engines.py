"""Serving-engine rules: the image is the engine's, and the fleet asks of it only what it does as launched."""

from __future__ import annotations

import pytest
from gpuinfra.catalog import load_catalog
from helpers import Case, run_case

INTERNAL = {"scheme": "internal", "auth": "none", "waf": None}
"""An internal fleet without a key: what an engine that cannot take the key from its environment is allowed."""


def runs(engine: str, image: str, digest: str, **more: object) -> dict[str, object]:
    """The example fleet on `engine` at its pinned image, internal and keyless."""
    return {
        "engine": engine,
        "server_image": image,
        "server_image_digest": digest,
        "access": INTERNAL,
        "model.adapters": [],
        **more,
    }


VLLM, SGLANG, TENSORRT_LLM = (load_catalog().engine(n) for n in ("vllm", "sglang", "tensorrt-llm"))
SGLANG_FLEET = runs("sglang", SGLANG.image, SGLANG.image_digest)
TRTLLM_FLEET = runs("tensorrt-llm", TENSORRT_LLM.image, TENSORRT_LLM.image_digest)

CASES = [
    # The example's vLLM image under engine sglang: SGLang's command line handed to `vllm serve`.
    Case(
        "engine-image-mismatch",
        "chat-serve",
        {"engine": "sglang"},
        message="engine sglang with server_image vllm/vllm-openai:v0.11.0, vLLM's image",
    ),
    Case(
        "engine-image-mismatch",
        "chat-serve",
        {**SGLANG_FLEET, "server_image": "docker.io/" + VLLM.image},
        message="vLLM's image",
    ),
    Case("engine-image-mismatch", "chat-serve", SGLANG_FLEET, fires=False),
    Case("engine-image-mismatch", "chat-serve", TRTLLM_FLEET, fires=False),
    # A repository no engine owns is taken as the team's own build.
    Case("engine-image-mismatch", "chat-serve", {**SGLANG_FLEET, "server_image": "acme/sglang-patched:1"}, fires=False),
    Case(
        "engine-queue-metric-mismatch",
        "chat-serve-k8s",
        {**SGLANG_FLEET, "kubernetes.queue_metric": "vllm:num_requests_waiting"},
        message="queue_metric vllm:num_requests_waiting is vLLM's, and the fleet runs SGLang",
    ),
    Case("engine-queue-metric-mismatch", "chat-serve-k8s", SGLANG_FLEET, fires=False),
    Case(
        "engine-queue-metric-mismatch",
        "chat-serve-k8s",
        {"kubernetes.queue_metric": "vllm:num_requests_waiting"},
        fires=False,
    ),
    Case(
        "engine-api-key",
        "chat-serve",
        {**SGLANG_FLEET, "access": {"auth": "api_key"}},
        message="SGLang cannot be given the API key outside its command line",
    ),
    Case("engine-api-key", "chat-serve", SGLANG_FLEET, fires=False),
    Case("engine-api-key", "chat-serve", fires=False),  # vLLM reads VLLM_API_KEY
    Case(
        "engine-adapters",
        "chat-serve",
        {
            **TRTLLM_FLEET,
            "model.adapters": [
                {
                    "name": "support",
                    "weights_prefix": "adapters/support/v2/",
                    "rank": 16,
                    "parameters_million": 13.6,
                    "base_model": "llama-3.1-8b-instruct",
                }
            ],
        },
        message="^1 LoRA adapter",
    ),
    Case("engine-adapters", "chat-serve", TRTLLM_FLEET, fires=False),
    Case(
        "engine-server-kind",
        "chat-serve",
        {**SGLANG_FLEET, "server_kind": "neuron"},
        message="server_kind neuron with engine sglang",
    ),
    Case("engine-server-kind", "chat-serve", {"server_kind": "neuron"}, fires=False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_engine_rules(case: Case) -> None:
    run_case(case)
