"""A serving region's network: private subnets for replicas and public ones for the load balancer
only, over two or more zones; a NAT gateway per zone (or one, by choice), an S3 gateway endpoint for
weights and image layers, and interface endpoints for every AWS API a replica calls, so losing a zone
stops neither image pulls, key reads, hook completions nor the scaling metric in the others.

"If you have resources in multiple Availability Zones and they share one NAT gateway, and if the NAT
gateway's Availability Zone is down, resources in the other Availability Zones lose internet access. To
improve resiliency, create a NAT gateway in each Availability Zone" (Amazon VPC user guide, NAT gateway
basics)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpuinfra.pulumi.components.base import child
from gpuinfra.pulumi.components.network import default_route_table, s3_gateway, subnet, vpc
from gpuinfra.pulumi.components.vpc_logs import DEFAULT_SETTINGS, FlowLogSettings

TYPE = "gpuinfra:inference:Network"


@dataclass(frozen=True)
class NetworkArgs:
    region: str
    zones: list[str]
    cidr: str
    server_port: int
    internal: bool = False
    """Private-only fleet: the load balancer accepts HTTPS from the VPC and the client networks only."""
    nat_per_zone: bool = True
    client_cidrs: tuple[str, ...] = ()
    """Networks (peered, Transit Gateway, VPN) a private fleet's load balancer admits besides its VPC."""
    account_id: str | None = None
    """The account the VPC lives in: the flow log role trusts the service for it only."""
    flow_logs: FlowLogSettings = DEFAULT_SETTINGS


INTERFACE_ENDPOINTS = ("ecr.api", "ecr.dkr", "secretsmanager", "monitoring", "autoscaling", "sts", "logs")
"""AWS APIs replicas call (image auth and manifests, the API key, PutMetricData, lifecycle actions, STS,
logs), reached over PrivateLink in their own zone: com.amazonaws.<region>.<service> (AWS PrivateLink guide,
"AWS services that integrate with AWS PrivateLink"). ECR image layers come from S3 (gateway endpoint)."""


def subnet_cidrs(vpc_cidr: str, zones: int) -> tuple[list[str], list[str]]:
    """Private /20s from the bottom of the VPC, public /24s from the top: room for both, never overlapping.
    (Address arithmetic, not `subnets()`, which would build all 256 /24s of a /16 to take the last few.)"""
    vpc = ipaddress.ip_network(vpc_cidr)
    base, top = int(vpc.network_address), int(vpc.broadcast_address) + 1
    private = [ipaddress.ip_network((base + i * 2**12, 20)) for i in range(zones)]
    public = [ipaddress.ip_network((top - (zones - i) * 2**8, 24)) for i in range(zones)]
    return [str(n) for n in private], [str(n) for n in public]


def egress(
    name: str,
    network: aws.ec2.Vpc,
    args: NetworkArgs,
    public: list[aws.ec2.Subnet],
    private: list[aws.ec2.Subnet],
    o: pulumi.ResourceOptions,
) -> list[aws.ec2.NatGateway]:
    """An internet gateway; a NAT gateway in each zone's public subnet (or the first zone's only) and a
    private route table per zone to its own zone's NAT; the S3 gateway endpoint on every private table."""
    igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=network.id, opts=o)
    public_rt = default_route_table(f"{name}-public-rt", network, o, gateway_id=igw.id)
    nats: list[aws.ec2.NatGateway] = []
    tables = []
    for zone, pub, priv in zip(args.zones, public, private, strict=True):
        z = zone[-1]
        aws.ec2.RouteTableAssociation(f"{name}-public-{z}-rta", subnet_id=pub.id, route_table_id=public_rt.id, opts=o)
        if args.nat_per_zone or not nats:
            eip = aws.ec2.Eip(f"{name}-nat-ip-{z}", domain="vpc", opts=o)
            nats.append(aws.ec2.NatGateway(f"{name}-nat-{z}", subnet_id=pub.id, allocation_id=eip.id, opts=o))
        table = default_route_table(f"{name}-private-{z}-rt", network, o, nat_gateway_id=nats[-1].id)
        aws.ec2.RouteTableAssociation(f"{name}-private-{z}-rta", subnet_id=priv.id, route_table_id=table.id, opts=o)
        tables.append(table)
    s3_gateway(name, network, args.region, tables, o)
    return nats


def endpoints(
    name: str, network: aws.ec2.Vpc, args: NetworkArgs, private: list[aws.ec2.Subnet], o: pulumi.ResourceOptions
) -> None:
    """Interface endpoints with private DNS in every replica subnet (the CLI's and Docker's usual hostnames
    resolve to them), HTTPS from the VPC only."""
    group = aws.ec2.SecurityGroup(
        f"{name}-endpoints",
        vpc_id=network.id,
        description="Interface endpoints: HTTPS from the VPC",
        ingress=[
            aws.ec2.SecurityGroupIngressArgs(
                protocol="tcp", from_port=443, to_port=443, cidr_blocks=[args.cidr], description="HTTPS from the VPC"
            )
        ],
        opts=o,
    )
    for service in INTERFACE_ENDPOINTS:
        aws.ec2.VpcEndpoint(
            f"{name}-{service.replace('.', '-')}",
            vpc_id=network.id,
            service_name=f"com.amazonaws.{args.region}.{service}",
            vpc_endpoint_type="Interface",
            private_dns_enabled=True,
            subnet_ids=[s.id for s in private],
            security_group_ids=[group.id],
            opts=o,
        )


def load_balancer_group(
    name: str, network: aws.ec2.Vpc, args: NetworkArgs, o: pulumi.ResourceOptions
) -> aws.ec2.SecurityGroup:
    """The load balancer's group: HTTPS (and HTTP for the redirect) from users (the VPC and the client networks only
    for a private fleet), out to the replicas' server port only."""
    return aws.ec2.SecurityGroup(
        f"{name}-lb",
        vpc_id=network.id,
        description="Load balancer: HTTPS (and HTTP for the redirect) from users",
        ingress=[
            aws.ec2.SecurityGroupIngressArgs(
                protocol="tcp",
                from_port=port,
                to_port=port,
                cidr_blocks=[args.cidr, *args.client_cidrs] if args.internal else ["0.0.0.0/0"],
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


def replica_group(
    name: str,
    network: aws.ec2.Vpc,
    load_balancer: aws.ec2.SecurityGroup,
    args: NetworkArgs,
    o: pulumi.ResourceOptions,
) -> aws.ec2.SecurityGroup:
    """The replicas' group: the server port from the load balancer's group only, HTTPS out."""
    return aws.ec2.SecurityGroup(
        f"{name}-replicas",
        vpc_id=network.id,
        description="Replicas: the server port from the load balancer only",
        ingress=[
            aws.ec2.SecurityGroupIngressArgs(
                protocol="tcp",
                from_port=args.server_port,
                to_port=args.server_port,
                security_groups=[load_balancer.id],
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


class InferenceNetwork(pulumi.ComponentResource):
    vpc: aws.ec2.Vpc
    private_subnets: list[aws.ec2.Subnet]
    public_subnets: list[aws.ec2.Subnet]
    lb_security_group: aws.ec2.SecurityGroup
    replica_security_group: aws.ec2.SecurityGroup
    nat_gateways: list[aws.ec2.NatGateway]

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
        private_cidrs, public_cidrs = subnet_cidrs(args.cidr, len(args.zones))
        self.private_subnets = [
            subnet(f"{name}-private-{zone[-1]}", self.vpc, cidr, zone, o)
            for zone, cidr in zip(args.zones, private_cidrs, strict=True)
        ]
        self.public_subnets = [
            subnet(f"{name}-public-{zone[-1]}", self.vpc, cidr, zone, o)
            for zone, cidr in zip(args.zones, public_cidrs, strict=True)
        ]
        self.nat_gateways = egress(name, self.vpc, args, self.public_subnets, self.private_subnets, o)
        endpoints(name, self.vpc, args, self.private_subnets, o)
        self.lb_security_group = load_balancer_group(name, self.vpc, args, o)
        self.replica_security_group = replica_group(name, self.vpc, self.lb_security_group, args, o)
        self.register_outputs({"vpc_id": self.vpc.id})


__all__ = [
    "INTERFACE_ENDPOINTS",
    "TYPE",
    "InferenceNetwork",
    "NetworkArgs",
    "egress",
    "endpoints",
    "load_balancer_group",
    "replica_group",
    "subnet_cidrs",
]
