"""The training network: one VPC, private subnets in the one zone, NAT egress, an S3 gateway endpoint,
and a security group open only to itself (the EFA requirement) and to nothing on the internet."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpuinfra.pulumi.components.base import child
from gpuinfra.pulumi.components.network import nat_egress, subnet, vpc
from gpuinfra.pulumi.components.vpc_logs import DEFAULT_SETTINGS, FlowLogSettings

TYPE = "gpuinfra:training:Network"


@dataclass(frozen=True)
class NetworkArgs:
    region: str
    zone: str
    cidr: str = "10.0.0.0/16"
    private_cidr: str = "10.0.0.0/17"
    """Nodes and the file system; EFA-only interfaces take no address, so a /17 holds any cluster."""
    public_cidr: str = "10.0.128.0/24"
    """Only the NAT gateway lives here."""
    control_plane_zone: str | None = None
    """EKS wants subnets in two zones for its control plane; the nodes stay in `zone`."""
    control_plane_cidr: str = "10.0.129.0/24"
    account_id: str | None = None
    """The account the VPC lives in: the flow log role trusts the service for it only."""
    flow_logs: FlowLogSettings = DEFAULT_SETTINGS


class TrainingNetwork(pulumi.ComponentResource):
    vpc: aws.ec2.Vpc
    private_subnet: aws.ec2.Subnet
    control_plane_subnet: aws.ec2.Subnet | None
    security_group: aws.ec2.SecurityGroup

    def __init__(
        self,
        name: str,
        args: NetworkArgs,
        provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        o = child(self, provider)
        self.vpc = vpc(name, args.cidr, args.account_id, o, args.flow_logs)
        self.private_subnet = subnet(f"{name}-private", self.vpc, args.private_cidr, args.zone, o)
        self.control_plane_subnet = None
        if args.control_plane_zone:
            self.control_plane_subnet = subnet(
                f"{name}-control-plane", self.vpc, args.control_plane_cidr, args.control_plane_zone, o
            )
        public = subnet(f"{name}-public", self.vpc, args.public_cidr, args.zone, o)
        nat_egress(name, self.vpc, args.region, [("public", public)], [("private", self.private_subnet)], o)
        self.security_group = aws.ec2.SecurityGroup(
            f"{name}-efa",
            vpc_id=self.vpc.id,
            description="EFA: all traffic to and from itself; egress through NAT; no ingress from outside",
            ingress=[
                aws.ec2.SecurityGroupIngressArgs(
                    protocol="-1",
                    from_port=0,
                    to_port=0,
                    self=True,
                    description="cluster-internal (EFA, NCCL, Slurm, Lustre)",
                )
            ],
            egress=[
                aws.ec2.SecurityGroupEgressArgs(
                    protocol="-1",
                    from_port=0,
                    to_port=0,
                    self=True,
                    description="cluster-internal (EFA requires outbound to itself)",
                ),
                aws.ec2.SecurityGroupEgressArgs(
                    protocol="tcp",
                    from_port=443,
                    to_port=443,
                    cidr_blocks=["0.0.0.0/0"],
                    description="HTTPS: AWS APIs, packages",
                ),
            ],
            opts=o,
        )
        self.register_outputs(
            {
                "vpc_id": self.vpc.id,
                "private_subnet_id": self.private_subnet.id,
                "security_group_id": self.security_group.id,
            }
        )


__all__ = ["TYPE", "NetworkArgs", "TrainingNetwork"]
