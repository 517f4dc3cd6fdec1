"""Training compute: a cluster placement group, a least-privilege instance profile, a launch template
with every EFA interface the instance type has, and an Auto Scaling group honouring the capacity spec."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from infra.pulumi.components import iam
from infra.pulumi.components.base import child, group_tags
from infra.pulumi.components.profiles import instance_identity

TYPE = "gpuinfra:training:Compute"
ROOT_DEVICE = "/dev/sda1"


@dataclass(frozen=True)
class CapacityArgs:
    type: str
    """on_demand, spot or capacity_block."""
    on_demand_base: int = 0
    capacity_reservation_id: str | None = None


@dataclass(frozen=True)
class ComputeArgs:
    cluster: str
    region: str
    account_id: str
    instance_type: str
    image_id: str
    node_count: int
    efa_interfaces: int
    """0 when the cluster runs without EFA."""
    capacity: CapacityArgs
    root_volume_gib: int
    subnet_id: pulumi.Input[str]
    security_group_id: pulumi.Input[str]
    kms_key_arn: pulumi.Input[str]
    user_data: pulumi.Input[str]
    dataset_uri: str | None
    checkpoint_uri: str
    registry_upload: tuple[str, str, str, str] | None
    """(bucket, prefix, account id, region) of the model registry's upload prefix."""
    munge_parameter: str | None
    tags: dict[str, str]


def efa_interface_specs(count: int) -> list[dict[str, Any]]:
    """One EFA per network card: card 0 carries the primary (EFA with ENA, device 0); the others are
    EFA-only interfaces at device index 1, which take no IP address."""
    return [
        {
            "network_card_index": card,
            "device_index": 0 if card == 0 else 1,
            "interface_type": "efa" if card == 0 else "efa-only",
        }
        for card in range(count)
    ]


def asg_name(cluster: str) -> str:
    return f"{cluster}-nodes"


def munge_parameter_arn(region: str, account_id: str, name: str) -> str:
    return f"arn:aws:ssm:{region}:{account_id}:parameter{name}"


def node_policy(args: ComputeArgs, kms_key_arn: str) -> str:
    """Read the dataset prefix, write the checkpoint prefix (and the registry's upload prefix), use the
    cluster key; for Slurm, read the munge key and name itself among the group's instances."""
    ckpt_bucket, ckpt_prefix = _split(args.checkpoint_uri)
    statements: list[iam.Statement] = [
        *iam.s3_write("Checkpoints", ckpt_bucket, ckpt_prefix),
        iam.kms_use("ClusterKey", kms_key_arn),
    ]
    if args.dataset_uri:
        statements[:0] = iam.s3_read("Dataset", *_split(args.dataset_uri))
    if args.registry_upload:
        bucket, prefix, account, region = args.registry_upload
        statements += [
            *iam.s3_write("RegistryUpload", bucket, prefix, read_back=False),
            iam.kms_via_s3("RegistryKey", account, region),
        ]
    if args.munge_parameter:
        statements += [
            {
                "Sid": "MungeKey",
                "Effect": "Allow",
                "Action": ["ssm:GetParameter"],
                "Resource": [munge_parameter_arn(args.region, args.account_id, args.munge_parameter)],
            },
            {"Sid": "FindPeers", "Effect": "Allow", "Action": ["ec2:DescribeInstances"], "Resource": ["*"]},
            {
                "Sid": "NameSelf",
                "Effect": "Allow",
                "Action": ["ec2:CreateTags"],
                "Resource": [f"arn:aws:ec2:{args.region}:{args.account_id}:instance/*"],
                "Condition": {
                    "StringEquals": {"aws:ResourceTag/aws:autoscaling:groupName": asg_name(args.cluster)},
                    "ForAllValues:StringEquals": {"aws:TagKeys": ["slurm:node-name"]},
                },
            },
        ]
    return iam.document(*statements)


def _split(uri: str) -> tuple[str, str]:
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    return bucket, prefix


class TrainingCompute(pulumi.ComponentResource):
    placement_group: aws.ec2.PlacementGroup
    launch_template: aws.ec2.LaunchTemplate
    group: aws.autoscaling.Group

    def __init__(
        self,
        name: str,
        args: ComputeArgs,
        provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        o = child(self, provider)
        self.placement_group = aws.ec2.PlacementGroup(f"{name}-pg", strategy="cluster", opts=o)
        profile = instance_identity(
            name,
            f"{args.cluster} training nodes",
            pulumi.Output.from_input(args.kms_key_arn).apply(lambda k: node_policy(args, k)),
            o,
        ).profile
        self.launch_template = aws.ec2.LaunchTemplate(
            f"{name}-lt",
            image_id=args.image_id,
            instance_type=args.instance_type,
            update_default_version=True,
            network_interfaces=self._interfaces(args),
            metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
                http_endpoint="enabled", http_tokens="required", http_put_response_hop_limit=2
            ),
            block_device_mappings=[
                aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                    device_name=ROOT_DEVICE,
                    ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                        volume_size=args.root_volume_gib,
                        volume_type="gp3",
                        encrypted="true",
                        kms_key_id=args.kms_key_arn,
                        delete_on_termination="true",
                    ),
                )
            ],
            iam_instance_profile=aws.ec2.LaunchTemplateIamInstanceProfileArgs(arn=profile.arn),
            user_data=pulumi.Output.from_input(args.user_data).apply(
                lambda text: base64.b64encode(text.encode()).decode()
            ),
            tag_specifications=[
                aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=args.tags)
                for kind in ("instance", "volume", "network-interface")
            ],
            **self.market_options(args),
            opts=o,
        )
        self.group = aws.autoscaling.Group(
            f"{name}-asg",
            name=asg_name(args.cluster),
            min_size=args.node_count,
            max_size=args.node_count,
            desired_capacity=args.node_count,
            vpc_zone_identifiers=[args.subnet_id],
            placement_group=self.placement_group.name,
            health_check_type="EC2",
            wait_for_capacity_timeout="0",
            capacity_rebalance=args.capacity.type == "spot",
            tags=group_tags(args.tags, args.node_count),
            **self._capacity(args),
            opts=o,
        )
        self.register_outputs(
            {
                "asg_name": self.group.name,
                "launch_template_id": self.launch_template.id,
                "placement_group": self.placement_group.name,
            }
        )

    @staticmethod
    def interface_specs(efa_interfaces: int) -> list[dict[str, Any]]:
        """EFA on every card, or one plain interface when the cluster runs without EFA."""
        return efa_interface_specs(efa_interfaces) or [
            {"network_card_index": 0, "device_index": 0, "interface_type": "interface"}
        ]

    @staticmethod
    def _interfaces(args: ComputeArgs) -> list[aws.ec2.LaunchTemplateNetworkInterfaceArgs]:
        return [
            aws.ec2.LaunchTemplateNetworkInterfaceArgs(
                **spec,
                security_groups=[args.security_group_id],
                delete_on_termination="true",
                associate_public_ip_address="false",
            )
            for spec in TrainingCompute.interface_specs(args.efa_interfaces)
        ]

    @staticmethod
    def market_options(args: ComputeArgs) -> dict[str, Any]:
        if args.capacity.type != "capacity_block":
            return {}
        return {
            "instance_market_options": aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type="capacity-block"),
            "capacity_reservation_specification": aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
                capacity_reservation_target=aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                    capacity_reservation_id=args.capacity.capacity_reservation_id
                )
            ),
        }

    def _capacity(self, args: ComputeArgs) -> dict[str, Any]:
        lt_id = self.launch_template.id
        if args.capacity.type != "spot":
            return {"launch_template": aws.autoscaling.GroupLaunchTemplateArgs(id=lt_id, version="$Latest")}
        return {
            "mixed_instances_policy": aws.autoscaling.GroupMixedInstancesPolicyArgs(
                instances_distribution=aws.autoscaling.GroupMixedInstancesPolicyInstancesDistributionArgs(
                    on_demand_base_capacity=args.capacity.on_demand_base,
                    on_demand_percentage_above_base_capacity=0,
                    spot_allocation_strategy="capacity-optimized",
                ),
                launch_template=aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateArgs(
                    launch_template_specification=aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateLaunchTemplateSpecificationArgs(
                        launch_template_id=lt_id, version="$Latest"
                    ),
                    overrides=[
                        aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateOverrideArgs(
                            instance_type=args.instance_type
                        )
                    ],
                ),
            )
        }


__all__ = ["TYPE", "CapacityArgs", "ComputeArgs", "TrainingCompute", "asg_name", "efa_interface_specs", "node_policy"]
