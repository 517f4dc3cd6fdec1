"""The Ray engine's run: a KubeRay `RayJob` (ray.io/v1, KubeRay v1.7.0's CRD) that starts a Ray cluster of CPU
workers on EKS, runs the rendered pipeline with datatrove's RayPipelineExecutor on it, and deletes the cluster
when the job ends. It is emitted as a manifest for a runner (`kubectl apply`), not created by `pulumi up`: a
RayJob is a run, and a stack update must not start or kill one. The stack makes the pods' IAM role (stack.py);
the operator (chart values below), the namespace's service account and a CPU NodePool are the cluster's for now.

Fields, from ray-project/kuberay@v1.7.0 ray-operator/apis/ray/v1/rayjob_types.go and raycluster_types.go:
entrypoint, shutdownAfterJobFinishes, ttlSecondsAfterFinished, activeDeadlineSeconds ("the duration in seconds
that the RayJob may be active before KubeRay actively tries to terminate the RayJob"), backoffLimit ("Each retry
creates a new RayCluster": datatrove's completion markers make a retry resume), submissionMode K8sJobMode,
rayClusterSpec with the head group and worker groups (min/max replicas for the in-tree autoscaler).
"""

from __future__ import annotations

from typing import Any

from gpuinfra.plan.dataprep import DataprepPlan
from gpuinfra.spec.dataprep import DataprepSpec

PIPELINE_DIR = "/home/ray/pipeline"
"""Where the head mounts the ConfigMap holding pipeline.py (the entrypoint runs on the head)."""
RETRIES = 2
TTL_SECONDS = 3600
CAPACITY_TYPE = "karpenter.sh/capacity-type"
"""Karpenter's well-known label: the head on on-demand, the workers where the spec says (spot by default)."""
HEAD_CPUS = 2
HEAD_MEMORY = "8Gi"


def _pod(spec: DataprepSpec, container: str, cpus: int, memory: str, capacity: str, mount: bool) -> dict[str, Any]:
    assert spec.ray is not None
    body: dict[str, Any] = {
        "name": container,
        "image": spec.ray.image,
        "resources": {"requests": {"cpu": str(cpus), "memory": memory}, "limits": {"cpu": str(cpus), "memory": memory}},
    }
    pod: dict[str, Any] = {
        "serviceAccountName": spec.name,
        "nodeSelector": {CAPACITY_TYPE: capacity},
        "containers": [body],
    }
    if mount:
        body["volumeMounts"] = [{"name": "pipeline", "mountPath": PIPELINE_DIR, "readOnly": True}]
        pod["volumes"] = [{"name": "pipeline", "configMap": {"name": f"{spec.name}-pipeline"}}]
    return {"spec": pod}


def worker_shape(plan: DataprepPlan, memory_gib: int) -> tuple[int, str]:
    """A worker pod fills a node less one vCPU and a tenth of the memory (kubelet, daemon sets)."""
    return max(1, plan.vcpus_per_node - 1), f"{max(1, int(memory_gib * 0.9))}Gi"


def ray_job(spec: DataprepSpec, plan: DataprepPlan, memory_gib: int) -> dict[str, Any]:
    """The RayJob manifest for the spec's pipeline (ConfigMap `<name>-pipeline`, key pipeline.py)."""
    assert spec.ray is not None
    cpus, memory = worker_shape(plan, memory_gib)
    capacity = "spot" if plan.spot else "on-demand"
    deadline = int((spec.deadline_hours or plan.hours) * 3600) or None
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": spec.name, "namespace": spec.ray.namespace, "labels": {"gpuinfra/stack": spec.name}},
        "spec": {
            "entrypoint": f"python {PIPELINE_DIR}/pipeline.py ray",
            "submissionMode": "K8sJobMode",
            "shutdownAfterJobFinishes": True,
            "ttlSecondsAfterFinished": TTL_SECONDS,
            **({"activeDeadlineSeconds": deadline} if deadline else {}),
            "backoffLimit": RETRIES,
            "rayClusterSpec": {
                "enableInTreeAutoscaling": True,
                "headGroupSpec": {
                    "rayStartParams": {"num-cpus": "0"},  # the head runs the driver, no tasks
                    "template": _pod(spec, "ray-head", HEAD_CPUS, HEAD_MEMORY, "on-demand", mount=True),
                },
                "workerGroupSpecs": [
                    {
                        "groupName": "cpu",
                        "replicas": plan.nodes,
                        "minReplicas": 0,
                        "maxReplicas": plan.nodes,
                        "rayStartParams": {},
                        "template": _pod(spec, "ray-worker", cpus, memory, capacity, mount=False),
                    }
                ],
            },
        },
    }


OPERATOR_CHART = "kuberay-operator"
OPERATOR_VERSION = "1.7.0"
OPERATOR_REPO = "https://ray-project.github.io/kuberay-helm/"
"""helm-chart/kuberay-operator/README.md at v1.7.0: `helm repo add kuberay https://ray-project.github.io/kuberay-helm/`
and `helm install kuberay-operator kuberay/kuberay-operator --version 1.7.0`."""


def operator_values(namespace: str) -> dict[str, Any]:
    """The operator's chart values (keys of the chart's values.yaml at 1.7.0): watch only the run's namespace."""
    return {"singleNamespaceInstall": True, "watchNamespace": [namespace]}


__all__ = ["OPERATOR_CHART", "OPERATOR_REPO", "OPERATOR_VERSION", "operator_values", "ray_job", "worker_shape"]
