"""A Google training stack: one provider pinned to the project, the fabric (VPCs, RoCE VPC, placement), the
storage (Managed Lustre, buckets), GKE; its outline is `build_gcp_training`, what the cloud registry hands the
program for a Google training stack."""

from __future__ import annotations

import pulumi

from gpuinfra.clouds.gcp.catalog.training import training_book
from gpuinfra.clouds.gcp.plan.training import GcpTrainingPlan
from gpuinfra.clouds.gcp.pulumi.base import label, provider
from gpuinfra.clouds.gcp.pulumi.training.acceptance import acceptance_pod_spec, gke_acceptance
from gpuinfra.clouds.gcp.pulumi.training.fabric import FabricArgs, TrainingFabric
from gpuinfra.clouds.gcp.pulumi.training.filestore import home_volume
from gpuinfra.clouds.gcp.pulumi.training.gke import GPU_POOL, GpuPoolArgs, TrainingGke
from gpuinfra.clouds.gcp.pulumi.training.jobset import (
    GkeTrainingJob,
    JobSetInputs,
    claim_name,
    trainer_pods,
    workload_args,
)
from gpuinfra.clouds.gcp.pulumi.training.kueue import GkeQueues, QueueArgs
from gpuinfra.clouds.gcp.pulumi.training.maintenance import create_notice, notice_daemonset
from gpuinfra.clouds.gcp.pulumi.training.networks import create_networks, pod_networks
from gpuinfra.clouds.gcp.pulumi.training.provisioning import QUEUED_TAINT
from gpuinfra.clouds.gcp.pulumi.training.pruner import create_gke_pruner, gke_retention, pruner_pod
from gpuinfra.clouds.gcp.pulumi.training.rdma_installer import create_installer
from gpuinfra.clouds.gcp.pulumi.training.slurm import SlurmArgs, SlurmCluster
from gpuinfra.clouds.gcp.pulumi.training.storage import TrainingStorage
from gpuinfra.clouds.gcp.spec import GcpProject
from gpuinfra.clouds.gcp.spec.training import GcpTrainingSpec
from gpuinfra.load import Inputs
from gpuinfra.pulumi.components.training.acceptance import create_acceptance
from gpuinfra.pulumi.components.training.cluster import workload_labels


def training_labels(stack: str, spec: GcpTrainingSpec, org_tags: dict[str, str]) -> dict[str, str]:
    """The organization's tags and the spec's labels as Google labels, with gpuinfra's own."""
    base = {label(k): label(v) for k, v in org_tags.items()}
    return {**base, **spec.labels, "gpuinfra-stack": label(stack), "gpuinfra-workload": "training"}


def _root(inputs: Inputs, project: GcpProject) -> tuple[GcpTrainingSpec, dict[str, str], pulumi.ResourceOptions]:
    """The spec, the stack's labels and the cluster's options: one provider pinned to the project, for every child."""
    spec = inputs.spec
    assert isinstance(spec, GcpTrainingSpec)
    labels = training_labels(inputs.stack.name, spec, inputs.org.org.default_tags)
    google = provider(f"gcp-{spec.account}", project, labels)
    return spec, labels, pulumi.ResourceOptions(providers=[google])


def queued_run(spec: GcpTrainingSpec) -> int | None:
    """Flex-start's run duration in seconds, which its ProvisioningRequests carry (None: not flex-start)."""
    capacity = spec.compute.capacity
    if capacity.model != "flex_start" or capacity.max_run_hours is None:
        return None
    return round(capacity.max_run_hours * 3600)


class GcpTrainingCluster(pulumi.ComponentResource):
    def __init__(self, inputs: Inputs, plan: GcpTrainingPlan, project: GcpProject) -> None:
        spec, labels, options = _root(inputs, project)
        name = spec.name
        super().__init__("gpuinfra:training:GcpCluster", name, None, options)
        fabric = plan.fabric
        assert fabric is not None, "the planner finds every catalog machine's fabric"
        self.fabric = TrainingFabric(
            name,
            FabricArgs(
                spec,
                project.id,
                fabric.gvnics,
                fabric.mrdma_nics,
                fabric.mtu,
                fabric.roce_profile if spec.network.roce_vpc else None,
            ),
            self,
        )
        system_network = self.fabric.system_network
        self.storage = TrainingStorage(name, spec, system_network, self)
        machine = training_book().machine(plan.instance_type)
        assert machine is not None
        pool = GpuPoolArgs(spec, machine.gke_accelerator, plan.gpus_per_node, labels)
        self.gke = TrainingGke(name, project.id, pool, self.fabric, self)
        self._workloads(inputs, plan, project, machine.gke_accelerator)
        self.register_outputs({"cluster": self.gke.cluster.name})

    def _workloads(self, inputs: Inputs, plan: GcpTrainingPlan, project: GcpProject, accelerator: str) -> None:
        """Kueue and its queues; the pods' extra networks and the gIB plugin on the nodes (without them no trainer
        pod starts); with a job, the trainer's JobSet template and the NCCL acceptance job."""
        spec = inputs.spec
        assert isinstance(spec, GcpTrainingSpec) and plan.fabric is not None
        name = spec.name
        kube_labels = workload_labels({"workload": "training", "gpuinfra:stack": inputs.stack.name})
        queues = QueueArgs(name, spec.scheduler.namespace, GPU_POOL, plan.gpus, kube_labels, queued_run(spec))
        job = workload_args(JobSetInputs(spec, plan, name, GPU_POOL, kube_labels)) if spec.job else None
        acceptance = gke_acceptance(job, plan.fabric.rdma_gbps) if job else None
        pods = trainer_pods(job, claim_name(name)) if job else []
        pods += [acceptance_pod_spec(acceptance[1])] if acceptance else []
        retention = gke_retention(spec) if job else None
        if job is not None and retention is not None:
            pods.append(pruner_pod(name, retention, job.job.image, claim_name(name)))
        notice = job if job and job.job.checkpoint_window is not None and plan.consumption != "spot" else None
        queued = [QUEUED_TAINT] if queues.queued_run_seconds is not None else []
        if notice is not None:
            pods.append(notice_daemonset(notice, queued)["template"]["spec"])
        gke = GkeQueues(name, queues, self.gke.cluster, [self.gke.system_pool, self.gke.gpu_pool], self, pods)
        if self.storage.home is not None and spec.filestore is not None:  # /home for the trainers
            home_volume(name, name, spec.filestore, self.storage.home, gke.namespace, kube_labels, gke.kubernetes)
        if notice is not None:
            create_notice(name, notice, plan.maintenance_notice_seconds, queued, gke.namespace, gke.kubernetes)
        create_networks(name, pod_networks(name, plan.fabric), kube_labels, gke.kubernetes)
        create_installer(name, accelerator, kube_labels, gke.kubernetes)
        if acceptance is not None:
            create_acceptance(name, name, gke.namespace, kube_labels, *acceptance, gke.kubernetes)
        if job is not None and self.storage.lustre is not None and spec.lustre is not None:
            lustre = self.storage.lustre
            GkeTrainingJob(name, job, lustre, spec.lustre.capacity_gib, project.id, gke.namespace, gke.kubernetes)
            if retention is not None:
                create_gke_pruner(
                    name, name, retention, job.job.image, claim_name(name), gke.namespace, kube_labels, gke.kubernetes
                )


class GcpSlurmTraining(pulumi.ComponentResource):
    """The managed Slurm path (scheduler slurm): the system network alone (Cluster Director takes one), the same
    storage as the GKE path, and the Cluster Director cluster (slurm.py)."""

    def __init__(self, inputs: Inputs, plan: GcpTrainingPlan, project: GcpProject) -> None:
        spec, labels, options = _root(inputs, project)
        name = spec.name
        super().__init__("gpuinfra:training:GcpCluster", name, None, options)
        assert plan.fabric is not None, "the planner finds every catalog machine's fabric"
        self.fabric = TrainingFabric(name, FabricArgs(spec, project.id, 1, 0, plan.fabric.mtu, None), self)
        self.storage = TrainingStorage(name, spec, self.fabric.system_network, self)
        args = SlurmArgs(spec, plan, project.id, labels)
        self.slurm = SlurmCluster(name, args, self.fabric.gvnic_subnets[0], self.storage, self)
        self.register_outputs({"cluster": self.slurm.cluster.name})


def build_gcp_slurm(inputs: Inputs, plan: GcpTrainingPlan, project: GcpProject) -> None:
    cluster = GcpSlurmTraining(inputs, plan, project)
    pulumi.export("cluster", cluster.slurm.cluster.name)
    pulumi.export("project", project.id)
    pulumi.export("zone", inputs.spec.compute.zone)  # type: ignore[union-attr]
    pulumi.export("checkpoint_bucket", cluster.storage.checkpoints.url)


def build_gcp_training(inputs: Inputs, plan: GcpTrainingPlan) -> None:
    """The program of a Google training stack (the cloud registry's `program` part for gcp training)."""
    spec = inputs.spec
    assert isinstance(spec, GcpTrainingSpec)
    project = inputs.org.org.accounts[spec.account]
    assert isinstance(project, GcpProject), "the validators refuse a cluster outside a Google project"
    if spec.scheduler.type == "slurm":  # Cluster Director's managed Slurm
        build_gcp_slurm(inputs, plan, project)
        return
    cluster = GcpTrainingCluster(inputs, plan, project)
    pulumi.export("cluster", cluster.gke.cluster.name)
    pulumi.export("project", project.id)
    pulumi.export("zone", spec.compute.zone)
    pulumi.export("checkpoint_bucket", cluster.storage.checkpoints.url)
    if cluster.storage.lustre is not None:
        pulumi.export("lustre_mount_point", cluster.storage.lustre.mount_point)
    if cluster.storage.home is not None:
        pulumi.export("home_filestore", cluster.storage.home.name)


__all__ = [
    "GcpSlurmTraining",
    "GcpTrainingCluster",
    "build_gcp_slurm",
    "build_gcp_training",
    "queued_run",
    "training_labels",
]
