"""A serving replica's cloud-init: weights from the registry replica, the server, the queue metric."""

from __future__ import annotations

from dataclasses import dataclass

from infra.pulumi.templates import render

METRIC_NAMESPACE = "gpuinfra/Inference"
METRIC_NAME = "QueueDepth"


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
    metric_source: str = "vllm:num_requests_waiting"


def replica_cloud_init(server: ServerConfig) -> str:
    values = vars(server)
    serve = render("inference/serve.sh.j2", **values)
    metric = render("inference/queue-metric.sh.j2", **values, namespace=METRIC_NAMESPACE, metric_name=METRIC_NAME)
    return render("inference/node-cloud-init.yaml.j2", **values, serve=serve, queue_metric=metric)


__all__ = ["METRIC_NAME", "METRIC_NAMESPACE", "ServerConfig", "replica_cloud_init"]
