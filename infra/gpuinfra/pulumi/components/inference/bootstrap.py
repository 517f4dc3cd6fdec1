"""A serving replica's cloud-init: image and verified weights first, the server, the launch and terminating
lifecycle hooks, and the region-level load metric."""

from __future__ import annotations

from dataclasses import dataclass

from gpuinfra.pulumi.templates import render

METRIC_NAMESPACE = "gpuinfra/Inference"
METRIC_NAME = "RequestsInFlight"
LAUNCH_HOOK = "launch"
TERMINATE_HOOK = "drain"


@dataclass(frozen=True)
class ServerConfig:
    fleet: str
    region: str
    instance_type: str
    bucket: str
    model_prefix: str
    weights_prefix: str
    image: str
    model_name: str
    server_port: int
    context_length: int
    max_sequences: int
    gpu_memory_utilization: float
    tensor_parallel: int
    health_path: str = "/health"
    drain_seconds: int = 300
    image_digest: str | None = None
    server_kind: str = "cuda"
    accelerators: int = 1
    server_args: tuple[str, ...] = ()
    api_key_secret: str | None = None
    """Secrets Manager secret name of the API key (None: no authentication at the server)."""

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


def replica_cloud_init(server: ServerConfig) -> str:
    values = {
        **vars(server),
        "image_ref": server.image_ref,
        "device_flags": server.device_flags,
        "namespace": METRIC_NAMESPACE,
        "metric_name": METRIC_NAME,
        "launch_hook": LAUNCH_HOOK,
        "terminate_hook": TERMINATE_HOOK,
    }
    scripts = {
        name: render(f"inference/{template}.sh.j2", **values)
        for name, template in (
            ("prefetch", "prefetch"),
            ("serve", "serve"),
            ("lifecycle", "lifecycle"),
            ("drain", "drain"),
            ("queue-metric", "queue-metric"),
        )
    }
    return render("inference/node-cloud-init.yaml.j2", **values, scripts=scripts)


__all__ = ["LAUNCH_HOOK", "METRIC_NAME", "METRIC_NAMESPACE", "TERMINATE_HOOK", "ServerConfig", "replica_cloud_init"]
