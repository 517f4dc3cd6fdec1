"""The Ray engine's runs: KubeRay `RayJob`s (ray.io/v1, KubeRay v1.7.0's CRD), each starting a Ray cluster on the
stack's NodePools, running one program on it and deleting the cluster when it ends. They are emitted as manifests
for a runner (`kubectl apply`, in order), not created by `pulumi up`: a RayJob is a run, and a stack update must
not start or kill one. The stack makes what they run on (components/dataprep/ray_cluster.py): the operator, the
namespace, the service account and its role, the ConfigMap holding the programs, the NodePools.

- CPU dedup (or none): one RayJob runs every datatrove stage (`pipeline.py ray`) on the `cpu` workers, the MinHash
  cluster task on the `cluster` group's one memory-sized node.
- GPU dedup: three, in order: datatrove's filter stage (`pipeline.py ray filter`), NeMo Curator's fuzzy dedup and
  removal on the `gpu` group (`curator_dedup.py`, Curator's image), datatrove's PII and tokenize stage
  (`pipeline.py ray tokenize`). Separate Ray clusters keep CPU tasks off the GPU nodes.

Fields, from ray-project/kuberay@v1.7.0 ray-operator/apis/ray/v1/rayjob_types.go and raycluster_types.go:
entrypoint, shutdownAfterJobFinishes, ttlSecondsAfterFinished, activeDeadlineSeconds ("the duration in seconds
that the RayJob may be active before KubeRay actively tries to terminate the RayJob"), backoffLimit ("Each retry
creates a new RayCluster": datatrove's completion markers make a retry resume), submissionMode K8sJobMode,
rayClusterSpec with the head group and worker groups (min/max replicas for the in-tree autoscaler).
"""

from __future__ import annotations

from typing import Any

from gpuinfra.catalog.pins import OPERATOR_CHART, OPERATOR_REPO, OPERATOR_VERSION
from gpuinfra.plan.dataprep import DataprepPlan
from gpuinfra.pulumi.components.dataprep.ray_nodes import GPU_RESOURCE, POOL_LABEL, RayPool
from gpuinfra.spec.dataprep import DataprepSpec

PIPELINE_DIR = "/home/ray/pipeline"
"""Where every pod mounts the ConfigMap holding pipeline.py and curator_dedup.py (the entrypoint runs on the head;
the workers import the pipeline's steps by value, so the mount is for the head)."""
PIPELINE = "pipeline.py"
CURATOR = "curator_dedup.py"
RETRIES = 2
TTL_SECONDS = 3600
IDLE_SECONDS = 60
HEAD_CPUS = 2
HEAD_MEMORY = "8Gi"


def config_map_name(spec: DataprepSpec) -> str:
    return f"{spec.name}-pipeline"


def _pod(spec: DataprepSpec, container: str, image: str, pool: RayPool, shape: dict[str, str]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": container,
        "image": image,
        "resources": {"requests": dict(shape), "limits": dict(shape)},
        "volumeMounts": [{"name": "pipeline", "mountPath": PIPELINE_DIR, "readOnly": True}],
    }
    pod: dict[str, Any] = {
        "serviceAccountName": spec.name,
        "nodeSelector": {POOL_LABEL: pool.name},
        "containers": [body],
        "volumes": [{"name": "pipeline", "configMap": {"name": config_map_name(spec)}}],
    }
    pod["tolerations"] = pool.tolerations()
    return {"spec": pod}


def worker_shape(pool: RayPool) -> dict[str, str]:
    """A worker pod fills a node less one vCPU and a tenth of the memory (kubelet, daemon sets), and takes every
    GPU (requests equal limits for an extended resource)."""
    shape = {"cpu": str(max(1, pool.vcpus - 1)), "memory": f"{max(1, int(pool.memory_gib * 0.9))}Gi"}
    if pool.accelerators:
        shape[GPU_RESOURCE] = str(pool.accelerators)
    return shape


OBJECT_STORE_SHARE = 0.1
"""The cluster step's node keeps a tenth of its pod's memory for Ray's object store (Ray's default is 30%): the one
MinHash cluster task asks Ray for FineWeb's 8 CPUs x 25 GB, which must fit in what the store leaves."""


def _group(spec: DataprepSpec, image: str, pool: RayPool) -> dict[str, Any]:
    shape = worker_shape(pool)
    params: dict[str, str] = {}
    if pool.role == "cluster":
        params["object-store-memory"] = str(int(int(shape["memory"].removesuffix("Gi")) * OBJECT_STORE_SHARE * 2**30))
    return {
        "groupName": pool.role,
        "replicas": 0 if pool.role == "cluster" else pool.nodes,
        "minReplicas": 0,
        "maxReplicas": pool.nodes,
        "rayStartParams": params,
        "template": _pod(spec, f"ray-{pool.role}", image, pool, shape),
    }


def _job(
    spec: DataprepSpec, name: str, entrypoint: str, image: str, head: RayPool, workers: list[RayPool], deadline: int
) -> dict[str, Any]:
    assert spec.ray is not None
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": spec.ray.namespace, "labels": {"gpuinfra/stack": spec.name}},
        "spec": {
            "entrypoint": entrypoint,
            "submissionMode": "K8sJobMode",
            "shutdownAfterJobFinishes": True,
            "ttlSecondsAfterFinished": TTL_SECONDS,
            "activeDeadlineSeconds": deadline,
            "backoffLimit": RETRIES,
            "rayClusterSpec": {
                "enableInTreeAutoscaling": True,
                # idle workers go after a minute (the planner bills no worker through the serial cluster step)
                "autoscalerOptions": {"idleTimeoutSeconds": IDLE_SECONDS},
                "headGroupSpec": {
                    "rayStartParams": {"num-cpus": "0"},  # the head runs the driver, no tasks
                    "template": _pod(spec, "ray-head", image, head, {"cpu": str(HEAD_CPUS), "memory": HEAD_MEMORY}),
                },
                "workerGroupSpecs": [_group(spec, image, pool) for pool in workers],
            },
        },
    }


def ray_jobs(spec: DataprepSpec, plan: DataprepPlan, pools: list[RayPool]) -> list[dict[str, Any]]:
    """The RayJob manifests of a run, in the order a runner applies them (each after the one before succeeded).
    Each may run for the whole deadline (or the planned hours when the spec sets only a budget)."""
    assert spec.ray is not None
    by_role = {p.role: p for p in pools}
    head, cpu = by_role["system"], by_role["cpu"]
    deadline = max(1, int((spec.deadline_hours or plan.hours) * 3600))
    run = f"python {PIPELINE_DIR}/{PIPELINE} ray"
    image = spec.ray.image
    gpu = by_role.get("gpu")
    if gpu is None:
        workers = [cpu, *([by_role["cluster"]] if "cluster" in by_role else [])]
        return [_job(spec, spec.name, run, image, head, workers, deadline)]
    assert spec.ray.curator_image is not None, "the spec refuses a GPU stage without ray.curator_image"
    curator = f"python {PIPELINE_DIR}/{CURATOR}"
    return [
        _job(spec, f"{spec.name}-filter", f"{run} filter", image, head, [cpu], deadline),
        _job(spec, f"{spec.name}-gpu-dedup", curator, spec.ray.curator_image, head, [gpu], deadline),
        _job(spec, f"{spec.name}-tokenize", f"{run} tokenize", image, head, [cpu], deadline),
    ]


def operator_values(namespace: str, system: RayPool) -> dict[str, Any]:
    """The operator's chart values (keys of the chart's values.yaml at 1.7.0): namespaced RBAC, watching only the
    run's namespace (singleNamespaceInstall: "If watchNamespace is not set, the KubeRay operator will, by default,
    only listen to resource events within its own namespace"), on the system pool's node, tolerating its taint."""
    return {
        "singleNamespaceInstall": True,
        "watchNamespace": [namespace],
        "nodeSelector": {POOL_LABEL: system.name},
        "tolerations": system.tolerations(),
    }


__all__ = [
    "CURATOR",
    "OPERATOR_CHART",
    "OPERATOR_REPO",
    "OPERATOR_VERSION",
    "PIPELINE",
    "config_map_name",
    "operator_values",
    "ray_jobs",
    "worker_shape",
]
