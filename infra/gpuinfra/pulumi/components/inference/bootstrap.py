"""A serving replica's cloud-init: image and verified weights first, the server, the launch and terminating
lifecycle hooks, and the region-level load metric."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from gpuinfra.catalog.engines import Engine
from gpuinfra.pulumi.components.inference.engine import TRTLLM_CONFIG
from gpuinfra.pulumi.templates import render

METRIC_NAMESPACE = "gpuinfra/Inference"
METRIC_NAME = "RequestsInFlight"
TTFT_METRIC = "TimeToFirstToken"
"""Mean seconds to the first token over the last minute, per replica (vllm:time_to_first_token_seconds)."""
ITL_METRIC = "InterTokenLatency"
"""Mean seconds between output tokens over the last minute, per replica (vLLM's inter-token histogram)."""
LAUNCH_HOOK = "launch"
TERMINATE_HOOK = "drain"
SCRIPTS = ("prefetch", "serve", "lifecycle", "drain", "queue-metric")
"""Installed as /usr/local/sbin/gpuinfra-<name> (on systemd's default PATH, so they call each other by name)."""
GPU_HEALTH = "gpu-health"
"""The NVIDIA GPU check (cuda servers only), installed beside SCRIPTS."""
FATAL_XIDS = (48, 64, 74, 79, 95, 119, 120)
"""Xids after which the replica is replaced: double-bit ECC (48), row-remapping failure (64), NVLink error (74),
GPU fallen off the bus (79), uncontained ECC error (95), GSP RPC timeout and GSP error (119, 120): hardware or
firmware faults whose remedy in NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors, "Resolution Bucket")
is a GPU reset or worse, which a replica cannot do for itself while serving. Application Xids (13, 31, 43, 45)
are left to vLLM and the load balancer."""


@dataclass(frozen=True)
class ServerConfig:
    fleet: str
    region: str
    instance_type: str
    bucket: str
    model_prefix: str
    weights_prefix: str
    image: str
    server_port: int
    engine_args: tuple[str, ...]
    """The server's argv after the image (engine.engine_args), one word each."""
    max_sequences: int
    """--max-num-seqs: what a replica whose server stops answering reports as its load (saturated)."""
    engine: Engine
    """The model server (the catalog's engines.yaml row): its metrics path and the series the scripts read."""
    launch_heartbeat_seconds: int
    """The launch hook's heartbeat timeout: the lifecycle script records a heartbeat three times within it."""
    launch_deadline_seconds: int
    """After this long without a healthy server the launch is abandoned (the group replaces the instance)."""
    health_path: str = "/health"
    drain_seconds: int = 300
    image_digest: str | None = None
    server_kind: str = "cuda"
    accelerators: int = 1
    api_key_secret: str | None = None
    """Secrets Manager secret name of the API key (None: no authentication at the server)."""
    adapters: tuple[tuple[str, str], ...] = ()
    """LoRA adapters as (name, prefix under the model prefix): fetched and verified like the weights, served from
    /adapters/<name> (engine.lora_flags)."""
    image_registry: str | None = None
    """ECR registry host (<account>.dkr.ecr.<region>.amazonaws.com) to log in to before pulling; None: a
    public registry needing no login."""
    engine_config: str | None = None
    """The engine's options file (engine.engine_config), written beside the weights and mounted read-only."""

    @property
    def image_ref(self) -> str:
        """The image by digest when the spec pins one (repository@sha256:...), else by tag."""
        if self.image_digest is None:
            return self.image
        repository = self.image.rsplit(":", 1)[0] if ":" in self.image.rsplit("/", 1)[-1] else self.image
        return f"{repository}@{self.image_digest}"

    @property
    def device_flags(self) -> str:
        """NVIDIA GPUs through the container toolkit; Neuron devices passed one by one."""
        if self.server_kind == "neuron":
            return " ".join(f"--device=/dev/neuron{i}" for i in range(self.accelerators))
        return "--gpus all"

    @property
    def heartbeat_seconds(self) -> int:
        """Three heartbeats per hook timeout, so one lost call does not let the hook lapse."""
        return max(1, self.launch_heartbeat_seconds // 3)


def engine_values(server: ServerConfig) -> dict[str, object]:
    """What the scripts read of the engine: where its metrics are, the series counted as load, its latency
    histograms, and where its options file goes."""
    engine = server.engine
    return {
        "engine": engine.name,
        "metrics_path": engine.metrics_path,
        "waiting_metric": engine.waiting_metric,
        "running_metric": engine.running_metric,
        "ttft_histogram": engine.ttft_histogram,
        "itl_histograms": engine.itl_histograms,
        "engine_config_path": TRTLLM_CONFIG,
    }


def render_scripts(server: ServerConfig) -> dict[str, str]:
    """Each script's text by name (prefetch, serve, lifecycle, drain, queue-metric; gpu-health on NVIDIA)."""
    values = {
        **vars(server),
        "image_ref": server.image_ref,
        "image_arg": shlex.quote(server.image_ref),
        "image_login": server.image_registry,
        "engine_command": shlex.join(server.engine_args),
        "device_flags": server.device_flags,
        "heartbeat_seconds": server.heartbeat_seconds,
        "saturated_load": server.max_sequences,
        "namespace": METRIC_NAMESPACE,
        "metric_name": METRIC_NAME,
        "ttft_metric": TTFT_METRIC,
        "itl_metric": ITL_METRIC,
        "launch_hook": LAUNCH_HOOK,
        "terminate_hook": TERMINATE_HOOK,
        "fatal_xids": FATAL_XIDS,
        **engine_values(server),
    }
    names = (*SCRIPTS, GPU_HEALTH) if server.server_kind == "cuda" else SCRIPTS
    return {name: render(f"inference/{name}.sh.j2", **values) for name in names}


def replica_cloud_init(server: ServerConfig) -> str:
    return render(
        "inference/node-cloud-init.yaml.j2",
        fleet=server.fleet,
        region=server.region,
        instance_type=server.instance_type,
        scripts=render_scripts(server),
        gpu_health=server.server_kind == "cuda",
    )


__all__ = [
    "FATAL_XIDS",
    "GPU_HEALTH",
    "ITL_METRIC",
    "LAUNCH_HOOK",
    "METRIC_NAME",
    "METRIC_NAMESPACE",
    "SCRIPTS",
    "TERMINATE_HOOK",
    "TTFT_METRIC",
    "ServerConfig",
    "render_scripts",
    "replica_cloud_init",
]
