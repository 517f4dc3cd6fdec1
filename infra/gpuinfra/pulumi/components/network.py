"""Network pieces both workloads use: the VPC (with flow logs and its default security group closed),
subnets, NAT egress for private subnets and the S3 gateway endpoint."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from gpuinfra.pulumi.components.vpc_logs import DEFAULT_SETTINGS, FlowLogSettings, flow_logs


def vpc(
    name: str,
    cidr: str,
    account_id: str | None,
    opts: pulumi.ResourceOptions,
    logs: FlowLogSettings = DEFAULT_SETTINGS,
) -> aws.ec2.Vpc:
    """A VPC with DNS on (EFA, FSx and the registry's S3 endpoint all resolve by name), its flow logs on and
    its default security group closed."""
    network = aws.ec2.Vpc(f"{name}-vpc", cidr_block=cidr, enable_dns_hostnames=True, enable_dns_support=True, opts=opts)
    flow_logs(name, network, account_id, opts, logs)
    close_default_group(name, network, opts)
    return network


def close_default_group(name: str, network: aws.ec2.Vpc, opts: pulumi.ResourceOptions) -> aws.ec2.DefaultSecurityGroup:
    """Adopt the VPC's default security group and strip its rules: EC2 gives it all traffic from itself and
    all egress, and anything launched without a group lands in it. CIS AWS Foundations 5.4 and Security Hub
    EC2.2 ("VPC default security groups should not allow inbound or outbound traffic"); the provider's
    aws_default_security_group "removes all ingress and egress rules" when none are given (pulumi-aws docs,
    ec2.DefaultSecurityGroup)."""
    return aws.ec2.DefaultSecurityGroup(f"{name}-default-sg", vpc_id=network.id, ingress=[], egress=[], opts=opts)


def subnet(name: str, network: aws.ec2.Vpc, cidr: str, zone: str, opts: pulumi.ResourceOptions) -> aws.ec2.Subnet:
    """A subnet that never hands out public addresses: even the public ones hold only NAT and load
    balancers, which get theirs explicitly."""
    return aws.ec2.Subnet(
        name, vpc_id=network.id, cidr_block=cidr, availability_zone=zone, map_public_ip_on_launch=False, opts=opts
    )


def default_route_table(
    name: str,
    network: aws.ec2.Vpc,
    opts: pulumi.ResourceOptions,
    gateway_id: pulumi.Input[str] | None = None,
    nat_gateway_id: pulumi.Input[str] | None = None,
) -> aws.ec2.RouteTable:
    """A route table whose default route (0.0.0.0/0) leaves through the internet gateway (public subnets) or a
    NAT gateway (private ones)."""
    return aws.ec2.RouteTable(
        name,
        vpc_id=network.id,
        routes=[
            aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=gateway_id, nat_gateway_id=nat_gateway_id)
        ],
        opts=opts,
    )


def s3_gateway(
    name: str, network: aws.ec2.Vpc, region: str, tables: Sequence[aws.ec2.RouteTable], opts: pulumi.ResourceOptions
) -> aws.ec2.VpcEndpoint:
    """The S3 gateway endpoint on the private route tables: dataset, checkpoint, weight and image-layer traffic
    never crosses a NAT gateway (and costs no NAT processing)."""
    return aws.ec2.VpcEndpoint(
        f"{name}-s3",
        vpc_id=network.id,
        service_name=f"com.amazonaws.{region}.s3",
        vpc_endpoint_type="Gateway",
        route_table_ids=[t.id for t in tables],
        opts=opts,
    )


def nat_egress(
    name: str,
    network: aws.ec2.Vpc,
    region: str,
    public_subnets: Sequence[tuple[str, aws.ec2.Subnet]],
    private_subnets: Sequence[tuple[str, aws.ec2.Subnet]],
    opts: pulumi.ResourceOptions,
) -> aws.ec2.RouteTable:
    """An internet gateway for the public subnets, one NAT gateway (in the first) for the private ones,
    and an S3 gateway endpoint so dataset, checkpoint and weight traffic never crosses the NAT.
    Subnets come as (suffix, subnet); returns the private route table."""
    igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=network.id, opts=opts)
    eip = aws.ec2.Eip(f"{name}-nat-ip", domain="vpc", opts=opts)
    nat = aws.ec2.NatGateway(f"{name}-nat", subnet_id=public_subnets[0][1].id, allocation_id=eip.id, opts=opts)
    public_rt = default_route_table(f"{name}-public-rt", network, opts, gateway_id=igw.id)
    private_rt = default_route_table(f"{name}-private-rt", network, opts, nat_gateway_id=nat.id)
    for table, subnets in ((public_rt, public_subnets), (private_rt, private_subnets)):
        for suffix, subnet in subnets:
            aws.ec2.RouteTableAssociation(
                f"{name}-{suffix}-rta", subnet_id=subnet.id, route_table_id=table.id, opts=opts
            )
    s3_gateway(name, network, region, [private_rt], opts)
    return private_rt


__all__ = ["close_default_group", "default_route_table", "nat_egress", "s3_gateway", "subnet", "vpc"]
