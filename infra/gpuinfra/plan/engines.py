"""What each serving engine is, as the fleet runs it: its official image at the pin, the command the image runs, where
it answers health checks and metrics, and which Prometheus series count its queue. One table, read by the
validators (an image that is not the engine's, a queue metric the engine does not export), the EC2 launch and
metric scripts and the Kubernetes Deployment and autoscaler, so a flag or a metric name is written once.

Sources, per engine, at the pinned version (docs/serving-engines.md quotes each):
- vLLM v0.11.0: `vllm serve` is the image's entrypoint (docker/Dockerfile); /health; /metrics with
  vllm:num_requests_waiting and vllm:num_requests_running (vllm/v1/metrics/loggers.py).
- SGLang: `python3 -m sglang.launch_server` (docs.sglang.io, "Server Arguments"); /health; /metrics only with
  --enable-metrics, with sglang:num_queue_reqs and sglang:num_running_reqs (docs.sglang.io, "Production Metrics").
- TensorRT-LLM 1.3.0rc19: `trtllm-serve serve` (tensorrt_llm/commands/serve.py); /health; Prometheus text on
  /prometheus/metrics (its /metrics is a JSON list of iteration stats), with trtllm_num_requests_waiting and
  trtllm_num_requests_running from the iteration stats (tensorrt_llm/metrics/collector.py; NVIDIA/TensorRT-LLM
  PR #12545), published only with `return_perf_metrics: true` and `enable_iter_perf_stats: true` in the options
  file the launch writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuinfra.spec.inference import ServingEngine


@dataclass(frozen=True)
class Engine:
    """One model server's facts as the fleet uses them."""

    name: ServingEngine
    label: str
    """How its project writes its name."""
    admission: str
    """Its KV admission rule in a phrase, as the report and the quantization table state it."""
    image: str
    """The official image, repository:tag at the pin."""
    image_digest: str
    """The pinned tag's digest (what `server_image_digest` should hold with `image`)."""
    digest_source: str
    """Where the digest was read (docs/serving-engines.md)."""
    launcher: tuple[str, ...]
    """argv before the flags; empty: the image's own entrypoint takes the flags (vLLM)."""
    metrics_path: str
    waiting_metric: str
    """The gauge of requests queued for a slot, which the autoscaler counts (each engine here exports one at its
    pin; one that did not could not be autoscaled, and is not offered)."""
    running_metric: str
    """The gauge of requests being generated."""
    ttft_histogram: str
    """Time to first token, seconds."""
    itl_histograms: tuple[str, ...]
    """Time between output tokens, seconds: the first the server exports is read."""
    api_key_env: str | None
    """The variable the server reads its API key from (kept off the command line); None: the launch cannot hand it
    a key without putting it in argv, so api_key auth is refused (engine-api-key)."""
    memory_flag: str
    """The flag `model.gpu_memory_utilization` becomes (each engine reads it by its own KV rule,
    plan/roofline.py kv_memory_bytes)."""

    @property
    def repository(self) -> str:
        return image_repository(self.image)


def image_repository(image: str) -> str:
    """An image reference without tag, digest or Docker Hub's own host names (docker.io/vllm/vllm-openai:v1 and
    vllm/vllm-openai@sha256:... are both vllm/vllm-openai), so two spellings of one repository compare equal."""
    path = image.split("@", 1)[0]
    first, _, rest = path.partition("/")
    if rest and first in ("docker.io", "index.docker.io", "registry-1.docker.io"):
        path = rest
    last = path.rsplit("/", 1)[-1]
    return path.rsplit(":", 1)[0] if ":" in last else path


VLLM = Engine(
    name="vllm",
    label="vLLM",
    admission="vLLM's admission rule; each GPU also keeps 1 GiB of activation workspace",
    image="vllm/vllm-openai:v0.11.0",
    image_digest="sha256:014a95f21c9edf6abe0aea6b07353f96baa4ec291c427bb1176dc7c93a85845c",
    digest_source="the examples' pin (stacks/Pulumi.chat-serve.yaml)",
    launcher=(),
    metrics_path="/metrics",
    waiting_metric="vllm:num_requests_waiting",
    running_metric="vllm:num_requests_running",
    ttft_histogram="vllm:time_to_first_token_seconds",
    itl_histograms=("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
    api_key_env="VLLM_API_KEY",
    memory_flag="--gpu-memory-utilization",
)

SGLANG = Engine(
    name="sglang",
    label="SGLang",
    admission="SGLang's rule: mem_fraction_static of memory holds the weights and the KV pool",
    image="lmsysorg/sglang:v0.5.17",
    image_digest="sha256:297f0bfea5e9f92680f8dd49ae18d048c9634f953be50b37f9bfe9509e947405",
    digest_source="a deployment pinning SGLang 0.5.17 by digest (docs/serving-engines.md)",
    launcher=("python3", "-m", "sglang.launch_server"),
    metrics_path="/metrics",
    waiting_metric="sglang:num_queue_reqs",
    running_metric="sglang:num_running_reqs",
    ttft_histogram="sglang:time_to_first_token_seconds",
    itl_histograms=("sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"),
    api_key_env=None,
    memory_flag="--mem-fraction-static",
)

TENSORRT_LLM = Engine(
    name="tensorrt-llm",
    label="TensorRT-LLM",
    admission="TensorRT-LLM's rule: free_gpu_memory_fraction of what the weights and 1 GiB of activation "
    "workspace per GPU leave",
    image="nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc19",
    image_digest="sha256:0082fd4f9934326e46bc77c7eb1e14404b168f2c8fd830d926a2da5a092bac28",
    digest_source="benchmark records of the 1.3.0rc19 release image (docs/serving-engines.md)",
    launcher=("trtllm-serve", "serve"),
    metrics_path="/prometheus/metrics",
    waiting_metric="trtllm_num_requests_waiting",
    running_metric="trtllm_num_requests_running",
    ttft_histogram="trtllm_time_to_first_token_seconds",
    itl_histograms=("trtllm_time_per_output_token_seconds",),
    api_key_env=None,
    memory_flag="--kv_cache_free_gpu_memory_fraction",
)

ENGINE_TABLE: dict[str, Engine] = {e.name: e for e in (VLLM, SGLANG, TENSORRT_LLM)}


def engine_of(name: str) -> Engine:
    """The engine a spec names (the spec's Literal admits only these)."""
    return ENGINE_TABLE[name]


__all__ = ["ENGINE_TABLE", "SGLANG", "TENSORRT_LLM", "VLLM", "Engine", "engine_of", "image_repository"]
