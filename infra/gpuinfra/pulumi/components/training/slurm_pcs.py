"""Slurm on AWS from the spec and plan: the node identity, the placement group, the pinned image, each node
group's user data, and the AWS PCS cluster (pcs.py) built from them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pulumi
import pulumi_aws as aws

import gpuinfra.pulumi.components.training.gpu_metrics as gpu_metrics
from gpuinfra.plan import TrainingPlan
from gpuinfra.plan.training import LOGIN_NODES
from gpuinfra.pulumi.components import iam
from gpuinfra.pulumi.components.base import STACK_TAG, child
from gpuinfra.pulumi.components.profiles import InstanceIdentity, instance_identity
from gpuinfra.pulumi.components.training.bootstrap import (
    CHECKPOINT_NOW_FILE,
    CHECKPOINT_NOW_VAR,
    Acceptance,
    Download,
    HomeMount,
    LustreMount,
    NodeRole,
    Retention,
    mime_user_data,
    node_cloud_config,
)
from gpuinfra.pulumi.components.training.compute import ComputeArgs, node_statements
from gpuinfra.pulumi.components.training.home import HOME, MOUNT_OPTIONS, SharedHome
from gpuinfra.pulumi.components.training.network import TrainingNetwork
from gpuinfra.pulumi.components.training.node_repair import Repair, login_statements
from gpuinfra.pulumi.components.training.pcs import PROFILE_PATH, PURCHASE_OPTIONS, GroupArgs, PcsArgs, PcsCluster
from gpuinfra.pulumi.components.training.pcs_logs import PcsLogArgs, PcsLogs, pcs_logs
from gpuinfra.pulumi.components.training.pruner import retention_for
from gpuinfra.pulumi.components.training.storage import TrainingStorage, split_s3
from gpuinfra.spec import TrainingSpec
from gpuinfra.spec.training import ClusterUser, Elastic

TYPE = "gpuinfra:training:Slurm"
SSM_IMAGE = "resolve:ssm:"


def ssm_image(image_id: str) -> tuple[str, int] | None:
    """(parameter name, version) of `resolve:ssm:<name>:<version>`; None for an AMI id."""
    if not image_id.startswith(SSM_IMAGE):
        return None
    name, _, version = image_id.removeprefix(SSM_IMAGE).rpartition(":")
    return name, int(version)


def pcs_node_policy(args: ComputeArgs, kms_key_arn: str) -> str:
    """The training node policy, plus what PCS nodes need: register with the cluster (AWS PCS User Guide, "IAM
    instance profiles for AWS PCS": pcs:RegisterComputeNodeGroupInstance), publish GPU metrics into their one
    namespace (gpu_metrics.py) and tag superseded checkpoints for expiry (the login node's pruner)."""
    return iam.document(*pcs_node_statements(args, kms_key_arn))


def pcs_node_statements(args: ComputeArgs, kms_key_arn: str) -> list[iam.Statement]:
    bucket, prefix = split_s3(args.checkpoint_uri)
    return [
        *node_statements(args, kms_key_arn),
        *gpu_metrics.node_statements(args.region, args.account_id, args.cluster),
        {
            "Sid": "RegisterWithPcs",
            "Effect": "Allow",
            "Action": ["pcs:RegisterComputeNodeGroupInstance"],
            "Resource": ["*"],
        },
        {
            "Sid": "MarkSupersededCheckpoints",
            "Effect": "Allow",
            "Action": ["s3:PutObjectTagging"],
            "Resource": [f"arn:aws:s3:::{bucket}/{prefix}*"],
        },
    ]


def pcs_login_policy(args: ComputeArgs, kms_key_arn: str) -> str:
    """The login node's policy: the nodes' (it registers with PCS, prunes and preloads), and the repair loop's
    (node_repair.py), which compute nodes, where jobs run, do not get."""
    stack = args.tags[STACK_TAG]
    return iam.document(*pcs_node_statements(args, kms_key_arn), *login_statements(args.region, args.account_id, stack))


def root_device_name(ami_id: pulumi.Input[str], o: pulumi.ResourceOptions) -> pulumi.Output[str]:
    """The pinned image's root device, read from the image (DescribeImages' RootDeviceName) at preview: a launch
    template mapping another name adds an empty volume and leaves the root at the image's size and encryption
    (aws/aws-parallelcluster v3.11.1 cli/src/pcluster/templates/queues_stack.py maps the image's device_name; the
    PCS sample AMIs boot from /dev/xvda, not /dev/sda1)."""
    image = aws.ec2.get_ami_output(
        # The *_output invoke resolves nested Inputs; the Args class's annotation says str only.
        filters=[aws.ec2.GetAmiFilterArgs(name="image-id", values=[ami_id])],  # type: ignore[list-item]
        opts=pulumi.InvokeOutputOptions(provider=o.provider, parent=o.parent),
    )
    return image.root_device_name


def acceptance(spec: TrainingSpec, plan: TrainingPlan) -> Acceptance | None:
    """The NCCL acceptance job over every compute node; none for a type without GPUs or a network figure."""
    if not plan.gpus_per_node or plan.network_gbps_per_node is None:
        return None
    return Acceptance(spec.scheduler.partition, plan.instance_type, plan.gpus_per_node, plan.network_gbps_per_node)


UserData = Callable[[NodeRole], pulumi.Output[str]]
"""A node role's MIME user data (it waits on the file systems' names and the agent's parameter)."""


def lustre_mount(
    spec: TrainingSpec, plan: TrainingPlan, fs: aws.fsx.LustreFileSystem | None
) -> pulumi.Output[LustreMount | None]:
    """How every node mounts the FSx file system (its DNS and mount names, once it exists), and the EFA client package
    the stack pins, if it pins its own; None without a file system."""
    lustre = spec.lustre
    if fs is None or lustre is None:
        return pulumi.Output.from_input(None)
    pinned = lustre.efa_client_package
    package = Download(pinned.url, pinned.sha256) if pinned else None
    return pulumi.Output.all(fs.dns_name, fs.mount_name).apply(
        lambda v: LustreMount(v[0], v[1], lustre.mount_path, plan.lustre_efa, plan.lustre_preload, package)
    )


def pcs_retention(spec: TrainingSpec, compute: ComputeArgs) -> Retention | None:
    """The login node's pruner: the spec's retention on the Lustre checkpoint root, publishing PrunerRuns
    (alarms.py) into the training namespace; None without Lustre."""
    lustre = spec.lustre
    if lustre is None:
        return None
    retention = retention_for(spec, lustre.mount_path, compute.checkpoint_uri)
    if retention is None:
        return None
    return dataclasses.replace(retention, metric_namespace=gpu_metrics.NAMESPACE, region=compute.region)


GANG_GROUPS = {"capacity_reservation": "od", "capacity_block": "block"}
"""The one node group of a reserved gang, by capacity type. An ODCR's group keeps the on-demand group's name: moving
a gang from on-demand (or spot above an on-demand base) onto a reservation updates that group in place."""


def gang_counts(spec: TrainingSpec, plan: TrainingPlan) -> list[tuple[str, str, int]]:
    """(suffix, capacity type, nodes) of the gang's node groups: the reservation's, or on-demand and spot."""
    kind = spec.compute.capacity.type
    if kind in GANG_GROUPS:
        return [(GANG_GROUPS[kind], kind, plan.nodes)]
    return [("od", "on_demand", plan.on_demand_nodes), ("spot", "spot", plan.spot_nodes)]


def compute_groups(
    spec: TrainingSpec, plan: TrainingPlan, compute: ComputeArgs, user_data: UserData
) -> list[GroupArgs]:
    """The gang's node groups, one per capacity type with nodes, in the cluster's partition; and the elastic spot
    nodes, in a partition of their own, scaled from none."""
    capacity = spec.compute.capacity

    def group(suffix: str, kind: str, count: int, elastic: Elastic | None = None) -> GroupArgs:
        return GroupArgs(
            suffix=suffix,
            purchase_option=PURCHASE_OPTIONS[kind],
            instance_type=plan.instance_type,
            count=count,
            memory_gib=plan.memory_gib_per_node,
            user_data=user_data(compute_role(plan, compute, kind)),
            efa_cards=tuple(plan.efa_cards),
            capacity_reservation_id=capacity.capacity_reservation_id if kind in GANG_GROUPS else None,
            min_count=0 if elastic else None,
            partition=elastic.partition if elastic else None,
        )

    groups = [group(suffix, kind, count) for suffix, kind, count in gang_counts(spec, plan) if count > 0]
    elastic = spec.compute.elastic
    return groups + ([group("elastic", "spot", elastic.max_nodes, elastic)] if elastic else [])


def compute_role(plan: TrainingPlan, compute: ComputeArgs, kind: str) -> NodeRole:
    """What a compute node bought as `kind` sets up at boot: GPUs, EFA, scratch, the spot watcher (spot), the
    checkpoint before its block ends (capacity_block)."""
    return NodeRole(
        "compute",
        plan.instance_type,
        gpus=plan.gpus_per_node,
        efa=len(plan.efa_cards),
        instance_store_gb=plan.instance_store_gb,
        spot=kind == "spot",
        block_checkpoint_at=plan.block_checkpoint_at if kind == "capacity_block" else None,
        checkpoint_write_seconds=plan.checkpoint.write_seconds if plan.checkpoint else None,
        metrics_region=compute.region,
    )


def login_group(
    spec: TrainingSpec,
    plan: TrainingPlan,
    compute: ComputeArgs,
    user_data: UserData,
    profile_arn: pulumi.Input[str],
) -> GroupArgs:
    """The login node: where users submit, and where the pruner, the dataset preload, the NCCL acceptance job and
    the node repair loop live (with its own instance profile, which compute nodes do not get)."""
    login_type = spec.scheduler.login_instance_type
    return GroupArgs(
        suffix="login",
        purchase_option="ONDEMAND",
        instance_type=login_type,
        count=LOGIN_NODES,
        memory_gib=plan.login_memory_gib,
        user_data=user_data(
            NodeRole(
                "login",
                login_type,
                retention=pcs_retention(spec, compute),
                acceptance=acceptance(spec, plan),
                repair=Repair(compute.tags[STACK_TAG], compute.region, metric_namespace=gpu_metrics.NAMESPACE),
            )
        ),
        placement=False,
        role="login",
        instance_profile_arn=profile_arn,
    )


class SlurmOnPcs(pulumi.ComponentResource):
    pcs: PcsCluster
    logs: PcsLogs
    agent_config: aws.ssm.Parameter
    placement_group: aws.ec2.PlacementGroup
    home: SharedHome

    def __init__(
        self,
        name: str,
        spec: TrainingSpec,
        plan: TrainingPlan,
        compute: ComputeArgs,
        network: TrainingNetwork,
        storage: TrainingStorage,
        env: dict[str, str],
        provider: pulumi.ProviderResource,
        native: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        o = child(self, provider)
        self.placement_group = aws.ec2.PlacementGroup(f"{name}-pg", strategy="cluster", opts=o)
        nodes, login = self._identities(name, spec, compute, o)
        mount = lustre_mount(spec, plan, storage.lustre)
        # The interruption watcher's side of the checkpoint contract (bootstrap.py): the file it writes.
        env = {**env, CHECKPOINT_NOW_VAR: CHECKPOINT_NOW_FILE}
        home = self._home(name, network, compute, spec.scheduler.users, provider)
        # The agent's configuration exists before any node boots: its name rides along into the user data.
        self.agent_config = gpu_metrics.agent_parameter(name, spec.name, o)

        user_data = self._user_data(spec, env, mount, home)
        groups = compute_groups(spec, plan, compute, user_data)
        login_args = login_group(spec, plan, compute, user_data, login.profile.arn)
        ami = self._image(spec.compute.image_id, o)
        self.pcs = PcsCluster(
            f"{name}-pcs",
            PcsArgs(
                cluster=spec.name,
                slurm_version=spec.scheduler.slurm_version,
                size=plan.pcs_size or "LARGE",
                partition=spec.scheduler.partition,
                subnet_id=network.private_subnet.id,
                vpc_id=network.vpc.id,
                security_group_id=network.security_group.id,
                ami_id=ami,
                root_device_name=root_device_name(ami, o),
                instance_profile_arn=nodes.profile.arn,
                placement_group=self.placement_group.name,
                root_volume_gib=spec.compute.root_volume_gib,
                compute=groups,
                login=login_args,
                tags=compute.tags,
                zone=spec.availability_zone or "",
            ),
            provider,
            native,
            pulumi.ResourceOptions(parent=self),
        )
        self.logs = pcs_logs(
            name,
            PcsLogArgs(spec.name, compute.region, compute.account_id, spec.log_retention_days),
            self.pcs.cluster.arn,
            o,
        )
        self.register_outputs({"placement_group": self.placement_group.name})

    def _user_data(
        self,
        spec: TrainingSpec,
        env: dict[str, str],
        mount: pulumi.Output[LustreMount | None],
        home: pulumi.Output[HomeMount],
    ) -> UserData:
        """Each node role's user data, once the file systems and the agent's parameter have their names."""

        def user_data(node: NodeRole) -> pulumi.Output[str]:
            return pulumi.Output.all(mount, home, self.agent_config.name).apply(
                lambda v: mime_user_data(
                    node_cloud_config(
                        spec.name, node, env, v[0], spec.scheduler.slurm_version, home=v[1], gpu_metrics_parameter=v[2]
                    )
                )
            )

        return user_data

    @staticmethod
    def _identities(
        name: str, spec: TrainingSpec, compute: ComputeArgs, o: pulumi.ResourceOptions
    ) -> tuple[InstanceIdentity, InstanceIdentity]:
        """The compute nodes' instance profile, and the login node's (the nodes' grants plus the repair loop's),
        both under the path PCS requires."""
        key = pulumi.Output.from_input(compute.kms_key_arn)
        nodes = instance_identity(
            name, f"{spec.name} AWS PCS nodes", key.apply(lambda k: pcs_node_policy(compute, k)), o, path=PROFILE_PATH
        )
        login = instance_identity(
            f"{name}-login",
            f"{spec.name} AWS PCS login node (and its node repair loop)",
            key.apply(lambda k: pcs_login_policy(compute, k)),
            o,
            path=PROFILE_PATH,
        )
        return nodes, login

    def _home(
        self,
        name: str,
        network: TrainingNetwork,
        compute: ComputeArgs,
        users: list[ClusterUser],
        provider: pulumi.ProviderResource,
    ) -> pulumi.Output[HomeMount]:
        """The shared /home on EFS, and the users every node creates with homes there. The mount targets' ids ride
        along so every launch template waits for them: the file system's DNS name resolves only once a mount target
        exists in the node's zone (Amazon EFS User Guide, mount targets)."""
        self.home = SharedHome(
            f"{name}-home",
            network.vpc.id,
            [network.private_subnet.id],
            network.security_group.id,
            compute.tags,
            provider,
            pulumi.ResourceOptions(parent=self),
        )
        return pulumi.Output.all(self.home.file_system.dns_name, *[t.id for t in self.home.mount_targets]).apply(
            lambda v: HomeMount(v[0], HOME, MOUNT_OPTIONS, tuple(users))
        )

    @staticmethod
    def _image(image_id: str | None, o: pulumi.ResourceOptions) -> pulumi.Input[str]:
        """The AMI id: as given, or the pinned version of an SSM parameter, read at preview (so the diff shows the
        AMI that will launch, and a new version shows as a node group change)."""
        if image_id is None:  # the image-not-pinned rule refuses the spec before any resource exists
            raise ValueError("compute.image_id is required for AWS PCS nodes")
        ssm = ssm_image(image_id)
        if ssm is None:
            return image_id
        parameter = aws.ssm.get_parameter_output(
            name=f"{ssm[0]}:{ssm[1]}", opts=pulumi.InvokeOutputOptions(provider=o.provider, parent=o.parent)
        )
        return parameter.value


__all__ = [
    "GANG_GROUPS",
    "TYPE",
    "SlurmOnPcs",
    "acceptance",
    "compute_groups",
    "compute_role",
    "gang_counts",
    "login_group",
    "lustre_mount",
    "pcs_login_policy",
    "pcs_node_policy",
    "pcs_node_statements",
    "pcs_retention",
    "root_device_name",
    "ssm_image",
]
