"""The Slurm controller: one small on-demand instance in the cluster's subnet, configured from the
same slurm.conf and topology.conf the nodes get."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from infra.pulumi.components import iam
from infra.pulumi.components.base import child
from infra.pulumi.components.profiles import instance_identity
from infra.pulumi.components.training.compute import munge_parameter_arn

TYPE = "gpuinfra:training:Slurm"
CONTROLLER_AMI = "resolve:ssm:/aws/service/canonical/ubuntu/server/22.04/stable/current/amd64/hvm/ebs-gp2/ami-id"


@dataclass(frozen=True)
class SlurmArgs:
    cluster: str
    region: str
    account_id: str
    instance_type: str
    controller_ip: str
    subnet_id: pulumi.Input[str]
    security_group_id: pulumi.Input[str]
    kms_key_arn: pulumi.Input[str]
    user_data: str
    munge_parameter: str


def controller_policy(args: SlurmArgs) -> str:
    arn = munge_parameter_arn(args.region, args.account_id, args.munge_parameter)
    return iam.document(
        {"Sid": "MungeKey", "Effect": "Allow", "Action": ["ssm:GetParameter", "ssm:PutParameter"], "Resource": [arn]}
    )


class SlurmController(pulumi.ComponentResource):
    instance: aws.ec2.Instance

    def __init__(
        self, name: str, args: SlurmArgs, provider: pulumi.ProviderResource, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        o = child(self, provider)
        profile = instance_identity(name, f"{args.cluster} Slurm controller", controller_policy(args), o).profile
        self.instance = aws.ec2.Instance(
            f"{name}-controller",
            ami=CONTROLLER_AMI,
            instance_type=args.instance_type,
            subnet_id=args.subnet_id,
            private_ip=args.controller_ip,
            vpc_security_group_ids=[args.security_group_id],
            iam_instance_profile=profile.name,
            metadata_options=aws.ec2.InstanceMetadataOptionsArgs(http_endpoint="enabled", http_tokens="required"),
            root_block_device=aws.ec2.InstanceRootBlockDeviceArgs(
                volume_size=100, volume_type="gp3", encrypted=True, kms_key_id=args.kms_key_arn
            ),
            user_data=args.user_data,
            opts=o,
        )
        self.register_outputs({"controller_ip": self.instance.private_ip})


__all__ = ["TYPE", "SlurmArgs", "SlurmController", "controller_policy"]
