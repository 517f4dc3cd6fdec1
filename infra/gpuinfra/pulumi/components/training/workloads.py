"""From a training spec and plan to the Kubernetes workload arguments: the one flavor of the fabric domain, the
queues (spot jobs get their own), the Topology, the job (image, script under the shared mount, pod size,
restart budget). EKS's choices are here; on premises adds the site's inventory (onprem.py)."""

from __future__ import annotations

import posixpath
from typing import Any

from gpuinfra.plan import TrainingPlan
from gpuinfra.pulumi.components.training.eks import TOPOLOGY_LEVELS
from gpuinfra.pulumi.components.training.kubernetes import (
    DOMAIN_LABEL,
    HOST_LABEL,
    POOL_LABEL,
    Flavor,
    JobArgs,
    LustreVolume,
    Topology,
    WorkloadArgs,
)
from gpuinfra.pulumi.components.training.pod_stop import checkpoint_window
from gpuinfra.pulumi.components.training.pruner import retention_for
from gpuinfra.spec import TrainingSpec

GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
"""One of the labels the NVIDIA device plugin chart's default node affinity accepts (values.yaml `affinity`);
nothing in the EKS managed-node-group flow sets it (eksctl PR #8866), so the GPU node groups carry it."""


def flavor_name(spec: TrainingSpec) -> str:
    """The fabric domain's flavor; a job that may run on spot gets its own (`-spot`) flavor and queues."""
    return f"{spec.name}-spot" if spec.job is not None and spec.job.spot else spec.name


def local_queue(spec: TrainingSpec) -> str:
    return f"{spec.scheduler.partition}-spot" if spec.job is not None and spec.job.spot else spec.scheduler.partition


def trainer_service_account(spec: TrainingSpec) -> str:
    return f"{spec.name}-trainer"


def job_args(spec: TrainingSpec, plan: TrainingPlan, mount_path: str) -> JobArgs:
    """The spec's job: the script resolved under the shared file system's mount (where every node sees it)."""
    assert spec.job is not None and plan.job_pod is not None and plan.job_max_restarts is not None
    return JobArgs(
        image=spec.job.image,
        script=posixpath.join(mount_path, spec.job.script),
        args=tuple(spec.job.args),
        pod=plan.job_pod,
        max_restarts=plan.job_max_restarts,
        spot=spec.job.spot,
        checkpoint_window=job_checkpoint_window(spec, plan),
    )


def job_checkpoint_window(spec: TrainingSpec, plan: TrainingPlan) -> int | None:
    """The preStop checkpoint window of the job's pods (None: the job does not checkpoint)."""
    if spec.checkpointing is None:
        return None
    return checkpoint_window(plan.checkpoint.write_seconds if plan.checkpoint else None)


def eks_gpu_labels(spec: TrainingSpec) -> dict[str, str]:
    """Every GPU node's labels: the pool, the fabric domain (the cluster's placement group) and the label
    the NVIDIA device plugin's default affinity selects."""
    return {POOL_LABEL: "gpu", DOMAIN_LABEL: spec.name, GPU_PRESENT_LABEL: "true"}


def eks_topology(spec: TrainingSpec, plan: TrainingPlan) -> Topology | None:
    """EC2's network layers, then the host; None for a type EC2 describes no topology for."""
    if not plan.network_topology:
        return None
    return Topology(f"{spec.name}-network", (*TOPOLOGY_LEVELS, HOST_LABEL), TOPOLOGY_LEVELS[-1])


def queue_and_gang(spec: TrainingSpec, plan: TrainingPlan) -> dict[str, Any]:
    """The WorkloadArgs every platform fills alike: the cluster's queues and the gang's shape from the plan."""
    return {
        "cluster": spec.name,
        "cluster_queue": flavor_name(spec),
        "namespace": spec.scheduler.namespace,
        "queue": local_queue(spec),
        "fabric": spec.interconnect.type,
        "nodes": plan.nodes,
        "gpus_per_node": plan.gpus_per_node,
        "device_resource": plan.device_resource or "",
        "instance_type": plan.instance_type,
        "network_gbps": plan.network_gbps_per_node,
    }


def eks_workload_args(
    spec: TrainingSpec, plan: TrainingPlan, lustre: LustreVolume, labels: dict[str, str], env: dict[str, str]
) -> WorkloadArgs:
    topology = eks_topology(spec, plan)
    gpu_labels = eks_gpu_labels(spec)
    return WorkloadArgs(
        **queue_and_gang(spec, plan),
        platform="eks",
        fabric_per_node=plan.efa_interfaces_per_node,
        flavor=Flavor(
            flavor_name(spec),
            {POOL_LABEL: gpu_labels[POOL_LABEL], DOMAIN_LABEL: gpu_labels[DOMAIN_LABEL]},
            topology.name if topology else None,
        ),
        job=job_args(spec, plan, lustre.mount_path),
        env=env,
        labels=labels,
        mount_path=lustre.mount_path,
        lustre=lustre,
        topology=topology,
        service_account=trainer_service_account(spec),
        region=spec.region,
        retention=retention_for(spec, lustre.mount_path, spec.lustre.export_path if spec.lustre else None),
    )


__all__ = [
    "GPU_PRESENT_LABEL",
    "eks_gpu_labels",
    "eks_topology",
    "eks_workload_args",
    "flavor_name",
    "job_args",
    "job_checkpoint_window",
    "local_queue",
    "queue_and_gang",
    "trainer_service_account",
]
