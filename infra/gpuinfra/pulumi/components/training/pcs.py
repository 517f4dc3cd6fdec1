"""Slurm on AWS as an AWS Parallel Computing Service cluster (pulumi-aws-native, Cloud Control): the PCS cluster
(PCS runs slurmctld and slurmdbd in its own account), one compute node group per capacity type, a queue over
them, and a small on-demand login node group. PCS owns Slurm's configuration, node names and the instances'
lifecycle; gpuinfra owns the launch templates (EFA per network card, placement group, IMDSv2, encrypted EBS,
user data) and the instance profile.

Every property is checked against the CloudFormation schemas AWS::PCS::Cluster, ::ComputeNodeGroup and ::Queue
(cfn-lint's bundled copies, which preflight validates against) and the AWS PCS User Guide:
- instance profile: the role needs pcs:RegisterComputeNodeGroupInstance, and its name must start with AWSPCS or
  its path be /aws-pcs/ ("IAM instance profiles for AWS PCS");
- launch templates: no instance type or instance profile of their own (the node group's), security groups on
  every interface, user data in MIME multi-part ("Using Amazon EC2 launch templates with AWS PCS");
- the controller's ENI has a group of its own with exactly the rules the PCS API Reference requires of it
  (Networking.securityGroupIds: inbound all from itself, outbound all to itself and to 0.0.0.0/0), as AWS's
  recipe does (aws-samples/aws-hpc-recipes recipes/pcs/getting_started/assets/pcs-cluster-sg.yaml); every node's
  primary interface joins it too, so slurmctld, slurmd, sackd and srun reach each other (6817-6819 and srun's
  ephemeral ports), while EFA traffic stays in network.py's self-only EFA group on every interface.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_aws_native as aws_native

from gpuinfra.graph import tokens
from gpuinfra.pulumi.components.base import child
from gpuinfra.pulumi.components.training.bootstrap import TASK_PROLOG
from gpuinfra.pulumi.components.training.compute import reservation_options
from gpuinfra.pulumi.components.training.node_repair import ROLE_TAG

TYPE = "gpuinfra:training:Pcs"
PROFILE_PATH = "/aws-pcs/"
"""IAM path PCS accepts for node roles and instance profiles."""
SCALE_DOWN_IDLE_SECONDS = 600
"""Dynamic nodes only: the elastic partition's spot nodes; the gang's groups are static (min = max), the login group
too."""
CLUSTER_SLURM_SETTINGS = {
    "SelectTypeParameters": "CR_Core_Memory",
    "TaskProlog": TASK_PROLOG,
}
"""Cluster-level Slurm settings; a name outside PCS's allow-list is a ValidationException at CreateCluster.
SCHEMA_CLUSTER_SETTINGS is what the CloudFormation schema's own text documents; TaskProlog is the one setting beyond
it, on the User Guide's list below only (review finding T6). It stays, for want of any other way PCS takes:
- what it does: set each task's environment (the fabric's NCCL defaults, GPUINFRA_RUN and the per-run
  GPUINFRA_CHECKPOINT_DIR from the job's name), yielding to what the job set itself. Of slurm.conf's settings only
  TaskProlog's output reaches a task's environment (SchedMD/slurm src/slurmd/slurmstepd/task.c, _proc_stdout: its
  "export NAME=value" lines are set in the task); Prolog and Epilog, the schema-documented ones, run as SlurmdUser
  outside the task and their output is not read (slurm.conf(5), Prolog);
- the PCS API's other job hook, ClusterSlurmConfigurationRequest.jobSubmitPlugins (botocore PCS 2023-02-10: STARLARK
  scripts from S3 that may "modify the job's configuration"), documents no Starlark interface (which job fields a
  script may set), and the resource the stacks create the cluster with (AWS::PCS::Cluster through pulumi-aws-native
  1.84) has no such property: tests/components/test_pcs_settings.py fails once it has, to move the defaults there;
- a profile.d file on the login node reaches only jobs submitted from its login shells with the default --export,
  and cannot name the run's directory, which exists only once the job has a name.
If PCS refused it, CreateCluster fails before any node group exists: nothing is created half-way. The health check
is not a Slurm setting: a systemd timer runs it on every compute node (bootstrap.py, HEALTH_CHECK_INTERVAL_SECONDS),
with the same effect (drain on failure) and no dependence on the allow-list."""
SCHEMA_CLUSTER_SETTINGS = frozenset({"Prolog", "Epilog", "SelectTypeParameters"})
"""AWS::PCS::Cluster SlurmCustomSetting.ParameterName in the CloudFormation schema (cfn-lint's bundled copy): "AWS
PCS supports configuration of the following Slurm parameters for clusters: Prolog, Epilog, and
SelectTypeParameters"."""
PCS_CLUSTER_SETTINGS = frozenset(
    {
        "AccountingStorageEnforce",
        "AccountingStorageTRES",
        "AccountingStoreFlags",
        "AuthAltParameters",
        "CliFilterParameters",
        "CliFilterPlugins",
        "CommunicationParameters",
        "DefMemPerCPU",
        "Epilog",
        "EnforcePartLimits",
        "FairShareDampeningFactor",
        "FirstJobId",
        "HealthCheckInterval",
        "HealthCheckNodeState",
        "HealthCheckProgram",
        "JobRequeue",
        "LaunchParameters",
        "Licenses",
        "MetricsType",
        "MinJobAge",
        "OverTimeLimit",
        "PreemptExemptTime",
        "PreemptMode",
        "PreemptParameters",
        "PreemptType",
        "PriorityCalcPeriod",
        "PriorityDecayHalfLife",
        "PriorityFavorSmall",
        "PriorityFlags",
        "PriorityMaxAge",
        "PriorityUsageResetPeriod",
        "PriorityWeightAge",
        "PriorityWeightAssoc",
        "PriorityWeightFairshare",
        "PriorityWeightJobSize",
        "PriorityWeightPartition",
        "PriorityWeightQOS",
        "PriorityWeightTRES",
        "Prolog",
        "PrologFlags",
        "RequeueExit",
        "RequeueExitHold",
        "SchedulerParameters",
        "SelectTypeParameters",
        "SrunPortRange",
        "TaskEpilog",
        "TaskPluginParam",
        "TaskProlog",
        "TrackWCKey",
        "UnkillableStepProgram",
        "UnkillableStepTimeout",
    }
)
"""The slurm.conf names PCS accepts on a cluster: AWS PCS User Guide, "Custom Slurm settings for AWS PCS clusters"
(https://docs.aws.amazon.com/pcs/latest/userguide/slurm-custom-settings-cluster.html, the list as of 2026-12). It
settles the review's finding 9: TaskProlog and HealthCheckProgram/Interval/NodeState are allowed. The older texts
(CloudFormation AWS::PCS::Cluster SlurmCustomSetting in cfn-lint 1.58, AWS SDK for Kotlin) list only Prolog,
Epilog, SelectTypeParameters and AccountingStorageEnforce: they predate the allow-list's expansion, and the
botocore 1.44.8 model defers to the User Guide page. No topology setting (TopologyPlugin, TopologyParam) is on it:
PCS owns slurm.conf's topology, so the stacks generate no topology.conf."""
PCS_NODE_GROUP_SETTINGS = frozenset(
    {"CpuSpecList", "Features", "Gres", "MemSpecLimit", "Parameters", "RealMemory", "Sockets", "Weight"}
)
"""The names PCS accepts on a compute node group: AWS PCS User Guide, "Custom Slurm settings for AWS PCS compute
node groups" (https://docs.aws.amazon.com/pcs/latest/userguide/slurm-custom-settings-cng.html)."""
INSTANCE_HEALTH_CHECKS_SLURM = "26.05"
"""PCS's own node health and repair (ComputeNodeGroup instanceHealthChecks: health monitoring with a repair action,
DCGM deep health checks on start) needs this Slurm version (botocore 1.44.8 PCS model,
CreateComputeNodeGroupRequest.instanceHealthChecks: "Instance health checks require Slurm version 26.05 or later";
SchedulerRequest.version lists 24.11 | 25.05 | 25.11 | 26.05). The stacks do not set it, and stay on 25.05, for two
reasons: the resource they create the node groups with, AWS::PCS::ComputeNodeGroup through Cloud Control
(pulumi-aws-native 1.84, and the CloudFormation schema cfn-lint 1.58 validates against), has no InstanceHealthChecks
property, so no version would let the stack set it; and the AMI's Slurm must match the cluster's (the PCS Slurm
installer keeps one version per AMI). Until the resource type carries it, the HealthCheckProgram (health-check.sh.j2)
drains a node that lost a GPU, an EFA device, its driver or Lustre; tests/components/test_pcs_settings.py fails as
soon as the pinned schema gains the property, so it gets wired in then."""
PURCHASE_OPTIONS = {
    "on_demand": "ONDEMAND",
    "spot": "SPOT",
    "capacity_reservation": "ONDEMAND",
    "capacity_block": "CAPACITY_BLOCK",
}
"""PCS purchase option per capacity type. An On-Demand Capacity Reservation is an ONDEMAND group whose launch
template targets the reservation (AWS PCS User Guide, "Using ODCRs with AWS PCS": direct ODCR association, no
backfill beyond the reservation); a Capacity Block is a CAPACITY_BLOCK group whose launch template has market type
capacity-block and the block's reservation ("Configure an AWS PCS compute node group to use a Capacity Block")."""
WEIGHTS = {"ONDEMAND": 1, "CAPACITY_BLOCK": 1, "SPOT": 10}
"""Slurm fills lower weights first: on-demand (and the block) before spot."""


@dataclass(frozen=True)
class GroupArgs:
    """One PCS compute node group and its launch template."""

    suffix: str
    purchase_option: str
    instance_type: str
    count: int
    memory_gib: int
    user_data: pulumi.Input[str]
    efa_cards: tuple[int, ...] = ()
    placement: bool = True
    capacity_reservation_id: str | None = None
    """The ODCR or Capacity Block the group's launch template targets."""
    min_count: int | None = None
    """Fewest instances (PCS scales between it and `count` as jobs queue); None: static, `count` always."""
    partition: str | None = None
    """The Slurm partition (PCS queue) of its own the group serves; None: the cluster's (PcsArgs.partition)."""
    role: str = "compute"
    """Tagged on the instances (node_repair.ROLE_TAG): the repair loop terminates compute instances only."""
    instance_profile_arn: pulumi.Input[str] | None = None
    """The group's own instance profile (the login node's, with the repair loop's grants); None: PcsArgs'."""


@dataclass(frozen=True)
class PcsArgs:
    cluster: str
    slurm_version: str
    size: str
    partition: str
    subnet_id: pulumi.Input[str]
    vpc_id: pulumi.Input[str]
    security_group_id: pulumi.Input[str]
    """The EFA group (self only), on every node interface."""
    ami_id: pulumi.Input[str]
    root_device_name: pulumi.Input[str]
    """The AMI's own root device (slurm_pcs.root_device_name)."""
    instance_profile_arn: pulumi.Input[str]
    placement_group: pulumi.Input[str]
    root_volume_gib: int
    compute: list[GroupArgs]
    login: GroupArgs
    tags: dict[str, str] = field(default_factory=dict)
    zone: str = ""
    """The subnet's availability zone: with the size, what the cluster's create-only inputs derive from."""


def suffixed(name: str, *create_only: str) -> str:
    """`name` with a short digest of the values of its create-only inputs: a change to one of them gives the new
    resource a new name, so a replacement never collides with the old one's (PCS names are unique: the
    ConflictException of the review's finding T4)."""
    return f"{name}-{hashlib.sha256('|'.join(create_only).encode()).hexdigest()[:6]}"


DAY2_NAMES = pulumi.ResourceOptions(ignore_changes=["name"])
"""The name is derived, never changed in place: `ignore_changes` keeps a deployed cluster or node group under the name
it was created with (its stable name of earlier versions too), while a replacement, which creates, takes the new one."""


def interface_layout(efa_cards: tuple[int, ...]) -> list[dict[str, Any]]:
    """Interfaces per the EC2 User Guide's current layout for EFA types ("Maximize network bandwidth on
    instances with multiple network cards"): an ENA primary at card 0, device 0; an efa-only interface on every
    card that carries an EFA (device 1 on card 0, device 0 on the others). Which cards carry one is the
    catalog's per-card data: p6-b300, for one, has none on card 0."""
    out: list[dict[str, Any]] = [{"network_card_index": 0, "device_index": 0}]
    for card in efa_cards:
        out.append({"network_card_index": card, "device_index": 1 if card == 0 else 0, "interface_type": "efa-only"})
    return out


def real_memory_mb(memory_gib: int) -> int:
    """RealMemory Slurm schedules: 95% of the instance's memory (ParallelCluster's rule), left for the OS."""
    return int(memory_gib * 1024 * 0.95)


def controller_group(name: str, vpc_id: pulumi.Input[str], o: pulumi.ResourceOptions) -> aws.ec2.SecurityGroup:
    """The PCS cluster's security group: the three rules the PCS API Reference lists as required for the
    controller's ENI (Networking.securityGroupIds), nothing more."""
    return aws.ec2.SecurityGroup(
        name,
        vpc_id=vpc_id,
        description="AWS PCS controller and node primary interfaces: Slurm between them; outbound as PCS requires",
        ingress=[
            aws.ec2.SecurityGroupIngressArgs(
                protocol="-1", from_port=0, to_port=0, self=True, description="Slurm: controller and nodes"
            )
        ],
        egress=[
            aws.ec2.SecurityGroupEgressArgs(
                protocol="-1", from_port=0, to_port=0, self=True, description="Slurm: controller and nodes"
            ),
            aws.ec2.SecurityGroupEgressArgs(
                protocol="-1",
                from_port=0,
                to_port=0,
                cidr_blocks=["0.0.0.0/0"],
                description="PCS requires all outbound (API Reference, Networking.securityGroupIds)",
            ),
        ],
        opts=o,
    )


class PcsCluster(pulumi.ComponentResource):
    cluster: aws_native.pcs.Cluster
    controller_group: aws.ec2.SecurityGroup
    node_groups: list[aws_native.pcs.ComputeNodeGroup]
    login: aws_native.pcs.ComputeNodeGroup
    queue: aws_native.pcs.Queue
    side_queues: list[aws_native.pcs.Queue]
    """The queues of groups with a partition of their own (the elastic spot nodes)."""

    def __init__(
        self,
        name: str,
        args: PcsArgs,
        provider: pulumi.ProviderResource,
        native: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        o, n = child(self, provider), child(self, native)
        self.controller_group = controller_group(f"{name}-sg", args.vpc_id, o)
        # No delete_before_replace: replacing the cluster (a new size class, another subnet) loses slurmctld's state
        # and the accounting database, which nothing carries over; create-first keeps the old one running until
        # the new one exists, and the preview names the replacement (clouds/aws/review/replacements.py).
        self.cluster = aws_native.pcs.Cluster(
            f"{name}-cluster",
            name=suffixed(args.cluster, args.size, args.zone),
            size=args.size,
            scheduler={"type": "SLURM", "version": args.slurm_version},
            networking={"subnet_ids": [args.subnet_id], "security_group_ids": [self.controller_group.id]},
            # camelCase on purpose: pulumi-aws-native 1.84's Python SDK types this input with the queue's
            # SlurmConfigurationPropertiesArgs (a name collision) and would not translate the cluster's own
            # properties; keys it does not know reach the provider, which takes the CloudFormation schema's.
            slurm_configuration={
                "scaleDownIdleTimeInSeconds": SCALE_DOWN_IDLE_SECONDS,
                "accounting": {"mode": "STANDARD", "defaultPurgeTimeInDays": -1},
                "slurmCustomSettings": [
                    {"parameterName": k, "parameterValue": v} for k, v in CLUSTER_SLURM_SETTINGS.items()
                ],
            },
            tags=args.tags,
            opts=pulumi.ResourceOptions.merge(n, DAY2_NAMES),
        )
        self.node_groups = [self._group(name, args, g, o, n) for g in args.compute]
        self.login = self._group(name, args, args.login, o, n)
        groups = list(zip(args.compute, self.node_groups, strict=True))
        self.queue = self._queue(
            f"{name}-queue", args.partition, [ng for g, ng in groups if g.partition is None], args, n
        )
        self.side_queues = [
            self._queue(f"{name}-{g.suffix}-queue", g.partition, [ng], args, n) for g, ng in groups if g.partition
        ]
        self.register_outputs({"cluster_id": self.cluster.aws_id, "queue": args.partition})

    def _queue(
        self,
        name: str,
        partition: str,
        groups: list[aws_native.pcs.ComputeNodeGroup],
        args: PcsArgs,
        n: pulumi.ResourceOptions,
    ) -> aws_native.pcs.Queue:
        """A PCS queue: the Slurm partition `partition` over `groups`."""
        return aws_native.pcs.Queue(
            name,
            name=partition,
            cluster_id=self.cluster.aws_id,
            compute_node_group_configurations=[{"compute_node_group_id": g.aws_id} for g in groups],
            tags=args.tags,
            opts=n,
        )

    def _group(
        self, name: str, args: PcsArgs, group: GroupArgs, o: pulumi.ResourceOptions, n: pulumi.ResourceOptions
    ) -> aws_native.pcs.ComputeNodeGroup:
        template = launch_template(f"{name}-{group.suffix}-lt", args, group, self.controller_group.id, o)
        settings = [
            {"parameter_name": "RealMemory", "parameter_value": str(real_memory_mb(group.memory_gib))},
            {"parameter_name": "Weight", "parameter_value": str(WEIGHTS[group.purchase_option])},
        ]
        # delete_before_replace: a node group holds no data (checkpoints are on Lustre and S3, homes on EFS), and
        # deleting first frees its instances' capacity and GPU quota for the new group's (a p5 group of 12 created
        # beside the old one would need 24 nodes' quota for the overlap).
        return aws_native.pcs.ComputeNodeGroup(
            f"{name}-{group.suffix}",
            name=suffixed(f"{args.cluster}-{group.suffix}", group.instance_type),
            cluster_id=self.cluster.aws_id,
            ami_id=args.ami_id,
            custom_launch_template={"template_id": template.id, "version": template.latest_version.apply(str)},
            iam_instance_profile_arn=group.instance_profile_arn or args.instance_profile_arn,
            instance_configs=[{"instance_type": group.instance_type}],
            purchase_option=group.purchase_option,
            scaling_configuration={
                "min_instance_count": group.count if group.min_count is None else group.min_count,
                "max_instance_count": group.count,
            },
            slurm_configuration={"slurm_custom_settings": settings},
            spot_options={"allocation_strategy": "capacity-optimized"} if group.purchase_option == "SPOT" else None,
            subnet_ids=[args.subnet_id],
            tags={**args.tags, tokens.ELASTIC_PARTITION_TAG: group.partition} if group.partition else args.tags,
            opts=pulumi.ResourceOptions.merge(
                n, pulumi.ResourceOptions(delete_before_replace=True, ignore_changes=["name"])
            ),
        )


def network_interfaces(
    args: PcsArgs, group: GroupArgs, cluster_group: pulumi.Input[str]
) -> list[aws.ec2.LaunchTemplateNetworkInterfaceArgs]:
    """The interface layout: the primary carries the EFA group and the cluster's group (Slurm's traffic); the
    efa-only interfaces, which have no IP address, the EFA group alone."""
    return [
        aws.ec2.LaunchTemplateNetworkInterfaceArgs(
            **spec,
            security_groups=[args.security_group_id, cluster_group]
            if spec.get("interface_type") != "efa-only"
            else [args.security_group_id],
            delete_on_termination="true",
            associate_public_ip_address="false",
        )
        for spec in interface_layout(group.efa_cards)
    ]


def root_volume(args: PcsArgs) -> aws.ec2.LaunchTemplateBlockDeviceMappingArgs:
    """The root volume at the image's own device: gp3, encrypted with the account's AWS-managed EBS key."""
    return aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
        device_name=args.root_device_name,
        ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
            volume_size=args.root_volume_gib,
            volume_type="gp3",
            encrypted="true",
            delete_on_termination="true",
        ),
    )


def capacity_block(group: GroupArgs) -> dict[str, Any]:
    """A reserved group's market type and reservation target (compute.reservation_options); none for others."""
    return reservation_options(group.capacity_reservation_id, group.purchase_option == "CAPACITY_BLOCK")


def launch_template(
    name: str, args: PcsArgs, group: GroupArgs, cluster_group: pulumi.Input[str], o: pulumi.ResourceOptions
) -> aws.ec2.LaunchTemplate:
    """A node group's launch template: interfaces, placement, IMDSv2, encrypted EBS, user data. The root
    volume uses the account's AWS-managed EBS key: a customer key buys nothing for an OS disk and would have to
    name whichever service role PCS launches with."""
    return aws.ec2.LaunchTemplate(
        name,
        update_default_version=True,
        network_interfaces=network_interfaces(args, group, cluster_group),
        placement=aws.ec2.LaunchTemplatePlacementArgs(group_name=args.placement_group) if group.placement else None,
        metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
            # Hop limit 1: a container behind a bridge (one more hop) gets no IMDS answer (EC2 User Guide,
            # "Instance metadata options": the PUT response hop limit); jobs on the host itself are closed out by
            # the imds-guard unit's iptables rule (bootstrap.py).
            http_endpoint="enabled",
            http_tokens="required",
            http_put_response_hop_limit=1,
        ),
        block_device_mappings=[root_volume(args)],
        **capacity_block(group),
        user_data=pulumi.Output.from_input(group.user_data).apply(lambda t: base64.b64encode(t.encode()).decode()),
        tag_specifications=[
            aws.ec2.LaunchTemplateTagSpecificationArgs(
                resource_type=kind, tags={**args.tags, ROLE_TAG: group.role} if kind == "instance" else args.tags
            )
            for kind in ("instance", "volume", "network-interface")
        ],
        opts=o,
    )


__all__ = [
    "CLUSTER_SLURM_SETTINGS",
    "DAY2_NAMES",
    "INSTANCE_HEALTH_CHECKS_SLURM",
    "PCS_CLUSTER_SETTINGS",
    "PCS_NODE_GROUP_SETTINGS",
    "PROFILE_PATH",
    "PURCHASE_OPTIONS",
    "SCHEMA_CLUSTER_SETTINGS",
    "TYPE",
    "GroupArgs",
    "PcsArgs",
    "PcsCluster",
    "capacity_block",
    "controller_group",
    "interface_layout",
    "launch_template",
    "network_interfaces",
    "real_memory_mb",
    "root_volume",
    "suffixed",
]
