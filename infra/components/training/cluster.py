"""TrainingCluster: network, storage, compute and the scheduler, parented to one component."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from ...plan import TrainingPlan
from ...spec import Account, Registry, TrainingSpec
from .bootstrap import LustreMount, SlurmCluster, controller_cloud_init, node_cloud_init
from .compute import CapacityArgs, ComputeArgs, TrainingCompute, asg_name
from .network import NetworkArgs, TrainingNetwork
from .slurm import SlurmArgs, SlurmController
from .storage import LustreArgs, StorageArgs, TrainingStorage, split_s3

TYPE = "gpuinfra:training:Cluster"
CONTROLLER_IP = "10.0.0.10"


@dataclass(frozen=True)
class ClusterArgs:
    spec: TrainingSpec
    plan: TrainingPlan
    account: Account
    registry: Registry | None
    registry_account_id: str | None
    tags: dict[str, str]


class TrainingCluster(pulumi.ComponentResource):
    network: TrainingNetwork
    storage: TrainingStorage
    compute: TrainingCompute
    scheduler: SlurmController | None

    def __init__(self, name: str, args: ClusterArgs, provider: pulumi.ProviderResource,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE, name, None, opts)
        spec, plan = args.spec, args.plan
        assert spec.region and spec.availability_zone, "aws clusters have a region and zone (validated)"
        here = pulumi.ResourceOptions(parent=self)
        self.network = TrainingNetwork(f"{name}-net", NetworkArgs(spec.region, spec.availability_zone), provider, here)
        ckpt_uri = checkpoint_uri(spec)
        bucket, prefix = split_s3(ckpt_uri)
        self.storage = TrainingStorage(
            f"{name}-storage",
            StorageArgs(
                checkpoint_bucket=bucket,
                checkpoint_prefix=prefix,
                retention_days=spec.checkpointing.retention_days if spec.checkpointing else 14,
                lustre=LustreArgs(spec.lustre.deployment_type, plan.lustre_capacity_gib or spec.lustre.storage_capacity_gib,
                                  spec.lustre.throughput_mb_s_per_tib, spec.lustre.import_path, spec.lustre.export_path)
                if spec.lustre else None,
                subnet_id=self.network.private_subnet.id,
                security_group_id=self.network.security_group.id,
                kms_alias=f"alias/gpuinfra/{spec.name}",
            ),
            provider,
            here,
        )
        slurm = slurm_cluster(spec, plan) if spec.scheduler.type == "slurm" else None
        user_data = self._user_data(spec, plan, slurm)
        registry = args.registry
        self.compute = TrainingCompute(
            f"{name}-compute",
            ComputeArgs(
                cluster=spec.name,
                region=spec.region,
                account_id=args.account.id,
                instance_type=plan.instance_type,
                image_id=spec.compute.image_id,
                node_count=plan.nodes,
                efa_interfaces=plan.efa_interfaces_per_node,
                capacity=CapacityArgs(spec.compute.capacity.type, spec.compute.capacity.on_demand_base,
                                      spec.compute.capacity.capacity_reservation_id),
                root_volume_gib=spec.compute.root_volume_gib,
                subnet_id=self.network.private_subnet.id,
                security_group_id=self.network.security_group.id,
                kms_key_arn=self.storage.key.arn,
                user_data=user_data,
                dataset_uri=spec.lustre.import_path if spec.lustre else None,
                checkpoint_uri=ckpt_uri,
                registry_upload=(registry.bucket, registry.upload_prefix, args.registry_account_id or "", registry.region)
                if registry else None,
                munge_parameter=slurm.munge_parameter if slurm else None,
                tags=args.tags,
            ),
            provider,
            here,
        )
        self.scheduler = None
        if slurm is not None:
            self.scheduler = SlurmController(
                f"{name}-slurm",
                SlurmArgs(cluster=spec.name, region=spec.region, account_id=args.account.id,
                          instance_type=spec.scheduler.controller_instance_type, controller_ip=CONTROLLER_IP,
                          subnet_id=self.network.private_subnet.id, security_group_id=self.network.security_group.id,
                          kms_key_arn=self.storage.key.arn, user_data=controller_cloud_init(slurm, spec.region),
                          munge_parameter=slurm.munge_parameter),
                provider,
                here,
            )
        self.register_outputs({
            "vpc_id": self.network.vpc.id,
            "asg_name": self.compute.group.name,
            "checkpoint_bucket": self.storage.bucket.bucket,
            "lustre_dns_name": self.storage.lustre.dns_name if self.storage.lustre else None,
        })

    def _user_data(self, spec: TrainingSpec, plan: TrainingPlan, slurm: SlurmCluster | None) -> pulumi.Output[str]:
        region = spec.region or ""
        spot = plan.spot_nodes > 0
        fs = self.storage.lustre
        if fs is None or spec.lustre is None:
            return pulumi.Output.from_input(
                node_cloud_init(spec.name, region, plan.instance_type, spec.interconnect.type, None, slurm, spot))
        mount_path = spec.lustre.mount_path
        return pulumi.Output.all(fs.dns_name, fs.mount_name).apply(
            lambda v: node_cloud_init(spec.name, region, plan.instance_type, spec.interconnect.type,
                                      LustreMount(v[0], v[1], mount_path), slurm, spot))


def checkpoint_uri(spec: TrainingSpec) -> str:
    """Where checkpoints land in S3: the Lustre export path, else a bucket named for the cluster."""
    if spec.lustre is not None:
        return spec.lustre.export_path
    return f"s3://{spec.name}-checkpoints/checkpoints/"


def slurm_cluster(spec: TrainingSpec, plan: TrainingPlan) -> SlurmCluster:
    return SlurmCluster(
        cluster=spec.name,
        controller_ip=CONTROLLER_IP,
        node_count=plan.nodes,
        cpus=plan.vcpus_per_node,
        memory_gib=plan.memory_gib_per_node,
        gpus_per_node=plan.gpus_per_node,
        partition=spec.scheduler.partition,
        racks=plan.racks.racks if plan.racks else [],
        asg_name=asg_name(spec.name),
        munge_parameter=f"/gpuinfra/{spec.name}/munge-key",
    )


__all__ = ["TYPE", "ClusterArgs", "TrainingCluster", "checkpoint_uri", "slurm_cluster"]
