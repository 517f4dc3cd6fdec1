"""A serving region's network: private subnets for replicas and public ones for the load balancer
only, over two or more zones, one NAT for egress, an S3 gateway endpoint for weights."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpuinfra.pulumi.components.base import child
from gpuinfra.pulumi.components.network import nat_egress, subnet, vpc

TYPE = "gpuinfra:inference:Network"


@dataclass(frozen=True)
class NetworkArgs:
    region: str
    zones: list[str]
    cidr: str
    server_port: int
    internal: bool = False
    """Private-only fleet: the load balancer accepts HTTPS from the VPC (and what is routed to it) only."""


def subnet_cidrs(vpc_cidr: str, zones: int) -> tuple[list[str], list[str]]:
    """Private /20s from the bottom of the VPC, public /24s from the top: room for both, never overlapping.
    (Address arithmetic, not `subnets()`, which would build all 256 /24s of a /16 to take the last few.)"""
    vpc = ipaddress.ip_network(vpc_cidr)
    base, top = int(vpc.network_address), int(vpc.broadcast_address) + 1
    private = [ipaddress.ip_network((base + i * 2**12, 20)) for i in range(zones)]
    public = [ipaddress.ip_network((top - (zones - i) * 2**8, 24)) for i in range(zones)]
    return [str(n) for n in private], [str(n) for n in public]


class InferenceNetwork(pulumi.ComponentResource):
    vpc: aws.ec2.Vpc
    private_subnets: list[aws.ec2.Subnet]
    public_subnets: list[aws.ec2.Subnet]
    lb_security_group: aws.ec2.SecurityGroup
    replica_security_group: aws.ec2.SecurityGroup

    def __init__(
        self,
        name: str,
        args: NetworkArgs,
        provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        o = child(self, provider)
        self.vpc = vpc(name, args.cidr, o)
        private_cidrs, public_cidrs = subnet_cidrs(args.cidr, len(args.zones))
        self.private_subnets = [
            subnet(f"{name}-private-{zone[-1]}", self.vpc, cidr, zone, o)
            for zone, cidr in zip(args.zones, private_cidrs, strict=True)
        ]
        self.public_subnets = [
            subnet(f"{name}-public-{zone[-1]}", self.vpc, cidr, zone, o)
            for zone, cidr in zip(args.zones, public_cidrs, strict=True)
        ]
        nat_egress(
            name,
            self.vpc,
            args.region,
            [(f"public-{zone[-1]}", subnet) for zone, subnet in zip(args.zones, self.public_subnets, strict=True)],
            [(f"private-{zone[-1]}", subnet) for zone, subnet in zip(args.zones, self.private_subnets, strict=True)],
            o,
        )
        self.lb_security_group = aws.ec2.SecurityGroup(
            f"{name}-lb",
            vpc_id=self.vpc.id,
            description="Load balancer: HTTPS (and HTTP for the redirect) from users",
            ingress=[
                aws.ec2.SecurityGroupIngressArgs(
                    protocol="tcp",
                    from_port=port,
                    to_port=port,
                    cidr_blocks=[args.cidr] if args.internal else ["0.0.0.0/0"],
                    description=what,
                )
                for port, what in ((443, "HTTPS from users"), (80, "HTTP, redirected to HTTPS"))
            ],
            egress=[
                aws.ec2.SecurityGroupEgressArgs(
                    protocol="tcp",
                    from_port=args.server_port,
                    to_port=args.server_port,
                    cidr_blocks=[args.cidr],
                    description="to replicas",
                )
            ],
            opts=o,
        )
        self.replica_security_group = aws.ec2.SecurityGroup(
            f"{name}-replicas",
            vpc_id=self.vpc.id,
            description="Replicas: the server port from the load balancer only",
            ingress=[
                aws.ec2.SecurityGroupIngressArgs(
                    protocol="tcp",
                    from_port=args.server_port,
                    to_port=args.server_port,
                    security_groups=[self.lb_security_group.id],
                    description="from the load balancer",
                )
            ],
            egress=[
                aws.ec2.SecurityGroupEgressArgs(
                    protocol="tcp",
                    from_port=443,
                    to_port=443,
                    cidr_blocks=["0.0.0.0/0"],
                    description="HTTPS: registry replica, CloudWatch, images",
                )
            ],
            opts=o,
        )
        self.register_outputs({"vpc_id": self.vpc.id})


__all__ = ["TYPE", "InferenceNetwork", "NetworkArgs", "subnet_cidrs"]
