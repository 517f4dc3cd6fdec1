"""TrainingCluster on AWS: network and storage, then either Slurm (an AWS PCS cluster: node groups per capacity
type, a queue, a login group) or Kubernetes (EKS node groups plus Kueue, device plugins and the job template)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi

from gpuinfra.clouds import type_part
from gpuinfra.graph import tokens
from gpuinfra.plan import TrainingPlan
from gpuinfra.plan.training import EKS_SYSTEM_NODES
from gpuinfra.pulumi.components.base import STACK_TAG
from gpuinfra.pulumi.components.training.alarms import AlarmArgs, StackAlarms
from gpuinfra.pulumi.components.training.bootstrap import (
    CHECKPOINT_ROOT_VAR,
    CHECKPOINT_SIGNAL,
    COMPLETE_MARKER,
)
from gpuinfra.pulumi.components.training.compute import CapacityArgs, ComputeArgs
from gpuinfra.pulumi.components.training.fabric import nccl_environment
from gpuinfra.pulumi.components.training.network import NetworkArgs, TrainingNetwork
from gpuinfra.pulumi.components.training.pod_stop import grace_seconds
from gpuinfra.pulumi.components.training.pruner import pruner_service_account
from gpuinfra.pulumi.components.training.slurm_pcs import SlurmOnPcs
from gpuinfra.pulumi.components.training.storage import (
    CHECKPOINT_PATH,
    DATASET_PATH,
    LustreArgs,
    StorageArgs,
    TrainingStorage,
    split_s3,
)
from gpuinfra.pulumi.components.vpc_logs import FlowLogSettings
from gpuinfra.spec import Account, Registry, TrainingSpec
from gpuinfra.spec.org import Alerts
from gpuinfra.spec.training import DEFAULT_EKS_NODE_IMAGE

if TYPE_CHECKING:  # EKS and its Kubernetes objects (pulumi_aws.eks, pulumi_kubernetes) load only for an EKS cluster
    import pulumi_aws as aws

    from gpuinfra.pulumi.components.training.eks import EksArgs, EksTrainingCluster
    from gpuinfra.pulumi.components.training.kubernetes import LustreVolume

TYPE = "gpuinfra:training:Cluster"


@dataclass(frozen=True)
class ClusterArgs:
    spec: TrainingSpec
    plan: TrainingPlan
    account: Account
    registry: Registry | None
    registry_account_id: str | None
    tags: dict[str, str]


def other_zone(zone: str) -> str:
    """A second zone of the same region (EKS control-plane subnets must span two)."""
    return zone[:-1] + ("b" if zone[-1] == "a" else "a")


def checkpoint_uri(spec: TrainingSpec) -> str:
    """Where checkpoints land in S3: the Lustre export path, else a bucket named for the cluster."""
    if spec.lustre is not None:
        return spec.lustre.export_path
    return f"s3://{spec.name}-checkpoints/checkpoints/"


def training_env(spec: TrainingSpec, plan: TrainingPlan, mount_path: str) -> dict[str, str]:
    """What the trainer reads: the fabric's NCCL settings and where and how often to checkpoint."""
    env = nccl_environment(spec.interconnect.type, spec.interconnect.hcas, spec.interconnect.gpudirect_rdma)
    ckpt = spec.checkpointing
    if ckpt is not None:
        env[CHECKPOINT_ROOT_VAR] = f"{mount_path}{CHECKPOINT_PATH}" if ckpt.target == "lustre" else checkpoint_uri(spec)
        interval = plan.checkpoint.interval_minutes if plan.checkpoint else ckpt.interval_minutes
        env["GPUINFRA_CHECKPOINT_INTERVAL_SECONDS"] = str(round(interval * 60))
        env["GPUINFRA_CHECKPOINT_KEEP_LAST"] = str(ckpt.keep_last)
        env["GPUINFRA_CHECKPOINT_SIGNAL"] = CHECKPOINT_SIGNAL
        env["GPUINFRA_CHECKPOINT_COMPLETE_MARKER"] = COMPLETE_MARKER
        env["GPUINFRA_CHECKPOINT_MILESTONE_MARKER"] = ckpt.milestone_marker
    if plan.block_checkpoint_at is not None:
        env["GPUINFRA_CAPACITY_BLOCK_CHECKPOINT_AT"] = plan.block_checkpoint_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    env["GPUINFRA_DATASET_DIR"] = f"{mount_path}{DATASET_PATH}"
    return env


def workload_labels(tags: dict[str, str]) -> dict[str, str]:
    """The Kubernetes form of the workload tag, on every object."""
    return {
        tokens.WORKLOAD_LABEL: tags["workload"],
        "gpuinfra.io/stack": tags["gpuinfra:stack"],
        "app.kubernetes.io/managed-by": "gpuinfra",
    }


def network_args(spec: TrainingSpec, account: Account) -> NetworkArgs:
    """One private subnet in the spec's zone; Kubernetes adds a second zone for EKS's control plane."""
    assert spec.region and spec.availability_zone, "aws clusters have a region and zone (validated)"
    return NetworkArgs(
        spec.region,
        spec.availability_zone,
        control_plane_zone=other_zone(spec.availability_zone) if spec.scheduler.type == "kubernetes" else None,
        account_id=account.id,
        flow_logs=FlowLogSettings.of(spec),
    )


def storage_args(spec: TrainingSpec, plan: TrainingPlan, account: Account, network: TrainingNetwork) -> StorageArgs:
    """The checkpoint bucket (with its retention), the KMS key and, when the spec has one, the Lustre file system
    at the planned capacity."""
    ckpt_bucket, ckpt_prefix = split_s3(checkpoint_uri(spec))
    lustre = spec.lustre
    return StorageArgs(
        checkpoint_bucket=ckpt_bucket,
        checkpoint_prefix=ckpt_prefix,
        retention_days=spec.checkpointing.retention_days if spec.checkpointing else 14,
        account_id=account.id,
        lustre=LustreArgs(
            lustre.deployment_type,
            plan.lustre_capacity_gib or lustre.storage_capacity_gib,
            lustre.throughput_mb_s_per_tib,
            lustre.import_path,
            lustre.export_path,
            lustre.code_path,
            efa=plan.lustre_efa,
        )
        if lustre
        else None,
        subnet_id=network.private_subnet.id,
        security_group_id=network.security_group.id,
        kms_alias=f"alias/gpuinfra/{spec.name}",
        protect=spec.protect_data,
    )


def eks_args(args: ClusterArgs, compute: ComputeArgs, control_plane_subnet_id: pulumi.Input[str]) -> EksArgs:
    """The EKS cluster of a Kubernetes spec: node groups per capacity type, the system group, Pod Identity for the
    trainer and (Lustre checkpoints) the pruner, the pinned node release."""
    from gpuinfra.pulumi.components.training.eks import EksArgs
    from gpuinfra.pulumi.components.training.workloads import (
        eks_gpu_labels,
        job_checkpoint_window,
        trainer_service_account,
    )

    spec, plan = args.spec, args.plan
    return EksArgs(
        compute=compute,
        kubernetes_version=spec.scheduler.kubernetes_version,
        control_plane_subnet_id=control_plane_subnet_id,
        on_demand_nodes=plan.on_demand_nodes,
        spot_nodes=plan.spot_nodes,
        system_instance_type=EKS_SYSTEM_NODES[0],
        system_nodes=EKS_SYSTEM_NODES[1],
        deploy_role_arn=args.account.role_arn,
        gpu_labels=eks_gpu_labels(spec),
        public_access_cidrs=spec.scheduler.api_access.public_cidrs,
        trainer=(spec.scheduler.namespace, trainer_service_account(spec)),
        pruner=(spec.scheduler.namespace, pruner_service_account(spec.name), *split_s3(checkpoint_uri(spec)))
        if spec.checkpointing is not None and spec.checkpointing.target == "lustre"
        else None,
        node_release=type_part(tokens.EKS_CLUSTER, "eks_versions")().node_release(spec.scheduler.kubernetes_version),
        instance_store_gb=plan.instance_store_gb,
        pod_grace_seconds=grace_seconds(job_checkpoint_window(spec, plan)),
        device_resource=plan.device_resource or "",
    )


def fsx_volume(spec: TrainingSpec, plan: TrainingPlan, fs: aws.fsx.LustreFileSystem) -> LustreVolume:
    """The FSx file system as the pods mount it: a static PersistentVolume of the FSx CSI driver."""
    from gpuinfra.pulumi.components.training.kubernetes import LustreVolume

    assert spec.lustre is not None
    return LustreVolume(
        capacity_gib=plan.lustre_capacity_gib or 0,
        mount_path=spec.lustre.mount_path,
        csi={
            "driver": "fsx.csi.aws.com",
            "volume_handle": fs.id,
            "volume_attributes": {"dnsname": fs.dns_name, "mountname": fs.mount_name},
        },
    )


def alarm_args(args: ClusterArgs, alerts: Alerts, lustre: aws.fsx.LustreFileSystem | None) -> AlarmArgs:
    """What the stack's alarms watch: the Lustre file system, and the Slurm nodes' health on PCS."""
    return AlarmArgs(
        stack=args.tags[STACK_TAG],
        account_id=args.account.id,
        alerts=alerts,
        cluster=args.spec.name,
        lustre_id=lustre.id if lustre is not None else None,
        lustre_capacity_gib=args.plan.lustre_capacity_gib or 0,
        slurm=args.spec.scheduler.type != "kubernetes",
    )


class TrainingCluster(pulumi.ComponentResource):
    network: TrainingNetwork
    storage: TrainingStorage
    scheduler: SlurmOnPcs | None

    def __init__(
        self,
        name: str,
        args: ClusterArgs,
        provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
        native: pulumi.ProviderResource | None = None,
    ) -> None:
        """`native` is the pulumi-aws-native provider of the same account and region (Slurm: the PCS cluster)."""
        super().__init__(TYPE, name, None, opts)
        spec, plan = args.spec, args.plan
        here = pulumi.ResourceOptions(parent=self)
        self.network = TrainingNetwork(f"{name}-net", network_args(spec, args.account), provider, here)
        self.storage = TrainingStorage(
            f"{name}-storage", storage_args(spec, plan, args.account, self.network), provider, here
        )
        compute = self._compute_args(args)
        self.scheduler = None
        self.eks: EksTrainingCluster | None = None  # not a class annotation: Pulumi resolves those at registration
        if spec.scheduler.type == "kubernetes":
            self._kubernetes(name, args, compute, provider, here)
        else:
            assert native is not None, "Slurm on AWS is an AWS PCS cluster: it needs the aws-native provider"
            mount = spec.lustre.mount_path if spec.lustre else "/fsx"
            self.scheduler = SlurmOnPcs(
                f"{name}-slurm",
                spec,
                plan,
                compute,
                self.network,
                self.storage,
                training_env(spec, plan, mount),
                provider,
                native,
                here,
            )
        # Alarms only where someone receives them: the account's alerts (organization file; required when production).
        alerts = args.account.alerts
        self.alarms = (
            None
            if alerts is None
            else StackAlarms(f"{name}-alarms", alarm_args(args, alerts, self.storage.lustre), provider, here)
        )
        self.register_outputs(
            {
                "vpc_id": self.network.vpc.id,
                "checkpoint_bucket": self.storage.bucket.bucket,
                "lustre_dns_name": self.storage.lustre.dns_name if self.storage.lustre else None,
            }
        )

    def _compute_args(self, args: ClusterArgs) -> ComputeArgs:
        spec, plan, registry = args.spec, args.plan, args.registry
        assert spec.region is not None
        return ComputeArgs(
            cluster=spec.name,
            region=spec.region,
            account_id=args.account.id,
            instance_type=plan.instance_type,
            image_id=spec.compute.image_id or DEFAULT_EKS_NODE_IMAGE,  # PCS requires one (image-not-pinned)
            node_count=plan.nodes,
            efa_interfaces=plan.efa_interfaces_per_node,
            capacity=CapacityArgs(
                spec.compute.capacity.type,
                spec.compute.capacity.on_demand_base,
                spec.compute.capacity.capacity_reservation_id,
            ),
            root_volume_gib=spec.compute.root_volume_gib,
            subnet_id=self.network.private_subnet.id,
            security_group_id=self.network.security_group.id,
            kms_key_arn=self.storage.key.arn,
            user_data="",
            dataset_uri=spec.lustre.import_path if spec.lustre else None,
            checkpoint_uri=checkpoint_uri(spec),
            registry_upload=(registry.bucket, registry.upload_prefix, args.registry_account_id or "", registry.region)
            if registry
            else None,
            tags=args.tags,
        )

    def _kubernetes(
        self,
        name: str,
        args: ClusterArgs,
        compute: ComputeArgs,
        provider: pulumi.ProviderResource,
        here: pulumi.ResourceOptions,
    ) -> None:
        from gpuinfra.pulumi.components.training.eks import EksTrainingCluster
        from gpuinfra.pulumi.components.training.kubernetes import TrainingWorkloads
        from gpuinfra.pulumi.components.training.workloads import eks_workload_args

        spec, plan = args.spec, args.plan
        control_plane = self.network.control_plane_subnet
        assert control_plane is not None
        self.eks = EksTrainingCluster(f"{name}-eks", eks_args(args, compute, control_plane.id), provider, here)
        fs = self.storage.lustre
        assert fs is not None and spec.lustre is not None, "a Kubernetes job needs the shared file system (validated)"
        TrainingWorkloads(
            f"{name}-k8s",
            eks_workload_args(
                spec,
                plan,
                fsx_volume(spec, plan, fs),
                workload_labels(args.tags),
                training_env(spec, plan, spec.lustre.mount_path),
            ),
            self.eks.kubernetes,
            here,
            nodes=[self.eks.system_nodes],
        )


__all__ = [
    "TYPE",
    "ClusterArgs",
    "TrainingCluster",
    "alarm_args",
    "checkpoint_uri",
    "eks_args",
    "fsx_volume",
    "network_args",
    "other_zone",
    "storage_args",
    "training_env",
    "workload_labels",
]
