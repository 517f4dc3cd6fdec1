"""Network pieces both workloads use: NAT egress for private subnets and the S3 gateway endpoint."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_aws as aws


def nat_egress(
    name: str,
    vpc: aws.ec2.Vpc,
    region: str,
    public_subnets: Sequence[tuple[str, aws.ec2.Subnet]],
    private_subnets: Sequence[tuple[str, aws.ec2.Subnet]],
    opts: pulumi.ResourceOptions,
) -> aws.ec2.RouteTable:
    """An internet gateway for the public subnets, one NAT gateway (in the first) for the private ones,
    and an S3 gateway endpoint so dataset, checkpoint and weight traffic never crosses the NAT.
    Subnets come as (suffix, subnet); returns the private route table."""
    igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc.id, opts=opts)
    eip = aws.ec2.Eip(f"{name}-nat-ip", domain="vpc", opts=opts)
    nat = aws.ec2.NatGateway(f"{name}-nat", subnet_id=public_subnets[0][1].id, allocation_id=eip.id, opts=opts)
    public_rt = aws.ec2.RouteTable(
        f"{name}-public-rt",
        vpc_id=vpc.id,
        routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=igw.id)],
        opts=opts,
    )
    private_rt = aws.ec2.RouteTable(
        f"{name}-private-rt",
        vpc_id=vpc.id,
        routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=nat.id)],
        opts=opts,
    )
    for table, subnets in ((public_rt, public_subnets), (private_rt, private_subnets)):
        for suffix, subnet in subnets:
            aws.ec2.RouteTableAssociation(
                f"{name}-{suffix}-rta", subnet_id=subnet.id, route_table_id=table.id, opts=opts
            )
    aws.ec2.VpcEndpoint(
        f"{name}-s3",
        vpc_id=vpc.id,
        service_name=f"com.amazonaws.{region}.s3",
        vpc_endpoint_type="Gateway",
        route_table_ids=[private_rt.id],
        opts=opts,
    )
    return private_rt


__all__ = ["nat_egress"]
