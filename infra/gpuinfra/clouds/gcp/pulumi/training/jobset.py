"""The training JobSet's template on GKE: the shared template (templates/kubernetes/jobset.yaml.j2, as EKS and on
premises render it, with their failure policy and checkpoint contract) fed what GKE's GPUDirect RDMA asks of a pod
(GKE docs, "Create an AI-optimized GKE cluster with custom configuration", A3 Ultra and A4 workloads):

- the multi-network annotations: `networking.gke.io/default-interface: eth0` and `networking.gke.io/interfaces`,
  eth0 on the pod network, eth1 on the second gVNIC's network (`gvnic-1`), eth2.. one per MRDMA NIC (`rdma-0`..);
- the node's NVIDIA libraries and Google's gIB NCCL plugin mounted from the host (/home/kubernetes/bin/nvidia and
  /home/kubernetes/bin/gib, at /usr/local/nvidia and /usr/local/gib), `NCCL_NET=gIB`, the libraries on
  LD_LIBRARY_PATH;
- the 8 GPUs as `nvidia.com/gpu` (the RDMA NICs are pod networks, not a device resource);
- Managed Lustre through GKE's CSI driver (a static PV and its claim: GKE docs, "Access existing Managed Lustre
  instances": volumeHandle `<project>/<zone>/<instance>`, attributes `ip` and `filesystem`).

The pod networks name GKE `Network` objects (networking.gke.io/v1, each with a `GKENetworkParamSet`), which the stack
creates beside the queues (networks.py)."""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
import yaml

from gpuinfra.clouds.gcp.plan.jobs import spot_stop
from gpuinfra.clouds.gcp.plan.training import GcpFabric, GcpTrainingPlan
from gpuinfra.clouds.gcp.pulumi.training.filestore import home_mounts
from gpuinfra.clouds.gcp.pulumi.training.kueue import GPU, TOPOLOGY_LEVELS
from gpuinfra.clouds.gcp.pulumi.training.networks import POD_NETWORK, pod_networks
from gpuinfra.clouds.gcp.pulumi.training.pruner import MILESTONE_MARKER
from gpuinfra.clouds.gcp.spec.training import GcpTrainingSpec
from gpuinfra.pulumi.components.training.bootstrap import CHECKPOINT_ROOT_VAR, CHECKPOINT_SIGNAL, COMPLETE_MARKER
from gpuinfra.pulumi.components.training.kubernetes import (
    Flavor,
    HostMount,
    JobArgs,
    LustreVolume,
    Topology,
    WorkloadArgs,
    disruption_budget,
    job_template,
    lustre_claim,
)
from gpuinfra.pulumi.components.training.pod_stop import checkpoint_window
from gpuinfra.pulumi.components.training.storage import CHECKPOINT_PATH

LUSTRE_DRIVER = "lustre.csi.storage.gke.io"
DEFAULT_INTERFACE = "eth0"
HOST_MOUNTS = (
    HostMount(
        "nvidia", "/home/kubernetes/bin/nvidia", "/usr/local/nvidia", "GKE's NVIDIA driver libraries on the node"
    ),
    HostMount(
        "gib",
        "/home/kubernetes/bin/gib",
        "/usr/local/gib",
        "the gIB NCCL plugin for GPUDirect RDMA, installed on the node by Google's nccl-rdma-installer DaemonSet",
    ),
)
NCCL_ENV = {"NCCL_NET": "gIB", "LD_LIBRARY_PATH": "/usr/local/gib/lib64:/usr/local/nvidia/lib64"}
"""NCCL through the gIB plugin (Google's NCCL test manifests set NCCL_NET=gIB and source
/usr/local/gib/scripts/set_nccl_env.sh, whose tuning a trainer image may source too)."""


def pod_interfaces(cluster: str, fabric: GcpFabric) -> list[dict[str, str]]:
    """The pod's interfaces in order: the pod network, then each GKE Network of the node's extra NICs."""
    names = [POD_NETWORK] + [n.name for n in pod_networks(cluster, fabric)]
    return [{"interfaceName": f"eth{i}", "network": name} for i, name in enumerate(names)]


def pod_annotations(cluster: str, fabric: GcpFabric) -> tuple[tuple[str, str], ...]:
    return (
        ("networking.gke.io/default-interface", DEFAULT_INTERFACE),
        ("networking.gke.io/interfaces", json.dumps(pod_interfaces(cluster, fabric))),
    )


def trainer_env(spec: GcpTrainingSpec, plan: GcpTrainingPlan, mount_path: str) -> dict[str, str]:
    """NCCL's gIB settings and the checkpoint contract's variables (AWS's names: bootstrap.py)."""
    return {**NCCL_ENV, **checkpoint_env(spec, plan, mount_path)}


def checkpoint_env(spec: GcpTrainingSpec, plan: GcpTrainingPlan, mount_path: str) -> dict[str, str]:
    """The checkpoint contract's variables (AWS's names: bootstrap.py); the Slurm path exports them too."""
    env: dict[str, str] = {}
    ckpt = spec.checkpointing
    if ckpt is not None:
        bucket = f"gs://{spec.storage.checkpoint_bucket}/checkpoints/"
        env[CHECKPOINT_ROOT_VAR] = f"{mount_path}{CHECKPOINT_PATH}" if ckpt.target == "lustre" else bucket
        interval = plan.checkpoint.interval_minutes if plan.checkpoint else ckpt.interval_minutes
        env["GPUINFRA_CHECKPOINT_INTERVAL_SECONDS"] = str(round(interval * 60))
        env["GPUINFRA_CHECKPOINT_KEEP_LAST"] = str(ckpt.keep_last)
        env["GPUINFRA_CHECKPOINT_SIGNAL"] = CHECKPOINT_SIGNAL
        env["GPUINFRA_CHECKPOINT_COMPLETE_MARKER"] = COMPLETE_MARKER
        env["GPUINFRA_CHECKPOINT_MILESTONE_MARKER"] = MILESTONE_MARKER
    return env


@dataclass(frozen=True)
class JobSetInputs:
    spec: GcpTrainingSpec
    plan: GcpTrainingPlan
    queue: str
    """The team's LocalQueue (GkeQueues names it for the cluster)."""
    gpu_pool: str
    labels: dict[str, str]


def workload_args(inputs: JobSetInputs) -> WorkloadArgs:
    """The shared template's arguments for the GKE trainer (the spec has a job and the plan a fabric)."""
    spec, plan = inputs.spec, inputs.plan
    assert spec.job is not None and plan.job_pod is not None and plan.job_max_restarts is not None
    assert plan.fabric is not None, "the planner finds every catalog machine's fabric"
    mount = spec.lustre.mount_path if spec.lustre else "/lustre"
    write = plan.checkpoint.write_seconds if plan.checkpoint else None
    notice = plan.preemption_notice_seconds
    window, grace = spot_stop(write, notice) if notice is not None else (checkpoint_window(write), None)
    job = JobArgs(
        image=spec.job.image,
        script=posixpath.join(mount, spec.job.script),
        args=tuple(spec.job.args),
        pod=plan.job_pod,
        max_restarts=plan.job_max_restarts,
        spot=plan.consumption == "spot",
        checkpoint_window=window if spec.checkpointing else None,
        grace_seconds=grace,
    )
    return WorkloadArgs(
        cluster=spec.name,
        namespace=spec.scheduler.namespace,
        queue=inputs.queue,
        platform="gke",
        fabric="roce",
        nodes=plan.nodes,
        gpus_per_node=plan.gpus_per_node,
        fabric_per_node=plan.fabric.mrdma_nics,
        flavor=Flavor(f"{spec.name}-gpu", {"cloud.google.com/gke-nodepool": inputs.gpu_pool}),
        job=job,
        env=trainer_env(spec, plan, mount),
        labels=inputs.labels,
        mount_path=mount,
        topology=Topology(f"{spec.name}-topology", TOPOLOGY_LEVELS, TOPOLOGY_LEVELS[1]),
        device_resource=plan.device_resource or GPU,
        pod_annotations=pod_annotations(spec.name, plan.fabric),
        host_mounts=HOST_MOUNTS,
        claim_mounts=home_mounts(spec),
        instance_type=spec.compute.machine_type,
        network_gbps=plan.fabric.rdma_gbps,
    )


def claim_name(cluster: str) -> str:
    return f"{cluster}-lustre"


def trainer_pods(args: WorkloadArgs, claim: str) -> list[dict[str, Any]]:
    """The JobSet template's pod specs (the namespace's Pod Security level is judged on them)."""
    jobset = yaml.safe_load(job_template(args, claim))
    return [job["template"]["spec"]["template"]["spec"] for job in jobset["spec"]["replicatedJobs"]]


class GkeTrainingJob(pulumi.ComponentResource):
    """The Lustre claim, the gang's disruption budget and the ConfigMap holding the JobSet the team submits, in the
    team's namespace."""

    def __init__(
        self,
        name: str,
        args: WorkloadArgs,
        lustre: gcp.lustre.Instance,
        capacity_gib: int,
        project: str,
        namespace: pulumi.Input[str],
        o: pulumi.ResourceOptions,
    ) -> None:
        super().__init__("gpuinfra:training:GkeJob", name, None, o)
        inner = pulumi.ResourceOptions(parent=self, provider=o.provider)
        claim = claim_name(args.cluster)
        volume = LustreVolume(
            capacity_gib=capacity_gib,
            mount_path=args.mount_path,
            csi={
                "driver": LUSTRE_DRIVER,
                "volume_handle": pulumi.Output.concat(project, "/", lustre.location, "/", lustre.instance_id),
                "volume_attributes": {
                    "ip": lustre.mount_point.apply(lambda m: (m or "").split("@")[0]),
                    "filesystem": lustre.filesystem,
                },
            },
        )
        lustre_claim(name, args.labels, volume, claim, namespace, inner)
        # No voluntary eviction of a running gang (EKS's budget, disruption_budget): GKE honours it while draining
        # for an upgrade (for up to an hour); a Spot preemption or a repair is not voluntary and still stops the pod.
        disruption_budget(name, args, namespace, inner)
        k8s.core.v1.ConfigMap(
            f"{name}-job-template",
            metadata={"name": f"{args.cluster}-job-template", "namespace": namespace, "labels": args.labels},
            data={"jobset.yaml": job_template(args, claim)},
            opts=inner,
        )
        self.register_outputs({})


__all__ = [
    "HOST_MOUNTS",
    "LUSTRE_DRIVER",
    "NCCL_ENV",
    "GkeTrainingJob",
    "JobSetInputs",
    "checkpoint_env",
    "claim_name",
    "pod_annotations",
    "pod_interfaces",
    "trainer_env",
    "trainer_pods",
    "workload_args",
]
