"""Global routing: Route 53 latency records with a health check per region, or one Global
Accelerator with an endpoint group per region.

An internal fleet's records go to a private hosted zone made here for its domain, associated with the VPCs its
load balancers are in (the fleet's, or each Kubernetes cluster's): the name then resolves only inside those VPCs,
and no public zone lists private addresses (Route 53 DG, "Working with private hosted zones"; latency records and
CLOUDWATCH_METRIC health checks both work in a private zone: "Choosing a routing policy", CreateHealthCheck
"Private Hosted Zones"). A client VPC elsewhere resolves it once associated with the zone, and reaches the other
region's load balancer only over a network path between them (peering or Transit Gateway), which the fleet
neither makes nor checks (docs/inference-operations.md, "Private endpoints")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from gpuinfra.pulumi.components.base import child
from gpuinfra.spec import InferenceSpec

TYPE = "gpuinfra:inference:GlobalRouting"
GLOBAL_ACCELERATOR_REGION = "us-west-2"
"""Global Accelerator's API lives in us-west-2 only, whatever regions the endpoints are in."""
GLOBAL_ACCELERATOR_ZONE = "Z2BJ6XQ5FK7U4H"
"""The hosted zone of every accelerator's DNS name (alias records)."""


@dataclass(frozen=True)
class RegionalTarget:
    """One region's entry point behind the global name: its load balancer, and how its health is known."""

    region: str
    dns_name: pulumi.Input[str]
    zone_id: pulumi.Input[str] | None
    """The load balancer's hosted zone (alias records); None for a plain CNAME target."""
    load_balancer_arn: pulumi.Input[str] | None
    health_alarm: pulumi.Input[str] | None = None
    """A CloudWatch alarm (in the target's region) that says the region is unhealthy: for private load
    balancers, which Route 53's checkers cannot reach."""


@dataclass(frozen=True)
class ZoneVpc:
    """A VPC the private zone is associated with: its id and region (Route 53 CreateHostedZone VPC)."""

    vpc_id: pulumi.Input[str]
    region: str


@dataclass(frozen=True)
class RoutingArgs:
    kind: str
    """route53_latency or global_accelerator."""
    domain_name: str
    hosted_zone_id: str | None
    health_check_path: str
    targets: Sequence[RegionalTarget]
    private_vpcs: Sequence[ZoneVpc] = ()
    """route53_latency for an internal fleet: the records go to a private zone associated with these VPCs
    (hosted_zone_id is then unset: the validator internal-records-in-public-zone)."""


def zone_vpcs(spec: InferenceSpec, fleet_vpcs: Mapping[str, pulumi.Input[str]]) -> list[ZoneVpc]:
    """An internal fleet's private zone VPCs: those its load balancers are in (per region), then the spec's client
    VPCs; none for an internet-facing fleet (its records go to its public zone)."""
    if spec.access.scheme != "internal" or spec.global_routing.type != "route53_latency":
        return []
    own = [ZoneVpc(vpc_id, region) for region, vpc_id in fleet_vpcs.items()]
    return own + [ZoneVpc(v.vpc_id, v.region) for v in spec.access.client_vpcs]


def private_zone(name: str, args: RoutingArgs, o: pulumi.ResourceOptions) -> aws.route53.Zone:
    """The private hosted zone of the fleet's domain, associated with `args.private_vpcs` (the provider creates it
    with the first and associates the others: terraform-provider-aws route53/zone.go). Each VPC needs
    enableDnsHostnames and enableDnsSupport (Route 53 DG, "Considerations when working with a private hosted
    zone"): the fleet's own VPCs set both (components/network.py); an EKS cluster's VPC needs both for EKS too."""
    return aws.route53.Zone(
        f"{name}-private-zone",
        name=args.domain_name,
        comment=f"private: {args.domain_name} for the fleet's VPCs (internal load balancers)",
        vpcs=[aws.route53.ZoneVpcArgs(vpc_id=v.vpc_id, vpc_region=v.region) for v in args.private_vpcs],
        opts=o,
    )


class GlobalRouting(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        args: RoutingArgs,
        provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`provider` is any provider of the fleet's account for Route 53 (a global API), or one in
        us-west-2 for Global Accelerator."""
        super().__init__(TYPE, name, None, opts)
        o = child(self, provider)
        if args.kind == "route53_latency":
            zone = private_zone(name, args, o).zone_id if args.private_vpcs else args.hosted_zone_id
            self._route53(name, args, zone, o)
        else:
            self._accelerator(name, args, o)
        self.register_outputs({"domain_name": args.domain_name})

    @staticmethod
    def _route53(name: str, args: RoutingArgs, zone: pulumi.Input[str] | None, o: pulumi.ResourceOptions) -> None:
        for target in args.targets:
            check = (
                aws.route53.HealthCheck(
                    f"{name}-{target.region}-health",
                    type="CLOUDWATCH_METRIC",
                    cloudwatch_alarm_name=target.health_alarm,
                    cloudwatch_alarm_region=target.region,
                    insufficient_data_health_status="Unhealthy",
                    opts=o,
                )
                if target.health_alarm is not None
                else aws.route53.HealthCheck(
                    f"{name}-{target.region}-health",
                    type="HTTPS",
                    fqdn=target.dns_name,
                    port=443,
                    resource_path=args.health_check_path,
                    request_interval=30,
                    failure_threshold=3,
                    measure_latency=True,
                    opts=o,
                )
            )
            common: dict[str, Any] = {
                "zone_id": zone,
                "name": args.domain_name,
                "set_identifier": target.region,
                "latency_routing_policies": [aws.route53.RecordLatencyRoutingPolicyArgs(region=target.region)],
                "health_check_id": check.id,
            }
            if target.zone_id is not None:
                aws.route53.Record(
                    f"{name}-{target.region}",
                    type="A",
                    aliases=[
                        aws.route53.RecordAliasArgs(
                            name=target.dns_name, zone_id=target.zone_id, evaluate_target_health=True
                        )
                    ],
                    **common,
                    opts=o,
                )
            else:
                aws.route53.Record(
                    f"{name}-{target.region}", type="CNAME", ttl=60, records=[target.dns_name], **common, opts=o
                )

    @staticmethod
    def _accelerator(name: str, args: RoutingArgs, o: pulumi.ResourceOptions) -> None:
        accelerator = aws.globalaccelerator.Accelerator(f"{name}-ga", ip_address_type="IPV4", enabled=True, opts=o)
        listener = aws.globalaccelerator.Listener(
            f"{name}-ga-443",
            accelerator_arn=accelerator.arn,
            protocol="TCP",
            client_affinity="NONE",
            port_ranges=[aws.globalaccelerator.ListenerPortRangeArgs(from_port=443, to_port=443)],
            opts=o,
        )
        if args.hosted_zone_id:
            # The domain the certificates name, as an alias of the accelerator (Route 53 DG, "Routing traffic
            # to an AWS Global Accelerator": alias target hosted zone Z2BJ6XQ5FK7U4H).
            aws.route53.Record(
                f"{name}-ga-alias",
                zone_id=args.hosted_zone_id,
                name=args.domain_name,
                type="A",
                aliases=[
                    aws.route53.RecordAliasArgs(
                        name=accelerator.dns_name, zone_id=GLOBAL_ACCELERATOR_ZONE, evaluate_target_health=True
                    )
                ],
                opts=o,
            )
        # No health check settings on the groups: for load balancer endpoints Global Accelerator ignores them and
        # follows the load balancer's own target health (GA DG, "Endpoint groups for standard accelerators": "For
        # Network Load Balancer and Application Load Balancer endpoints, configure health check settings on the ELB
        # console"), which is the target group's check of the spec's health path.
        for target in args.targets:
            aws.globalaccelerator.EndpointGroup(
                f"{name}-ga-{target.region}",
                listener_arn=listener.arn,
                endpoint_group_region=target.region,
                traffic_dial_percentage=100,
                endpoint_configurations=[
                    aws.globalaccelerator.EndpointGroupEndpointConfigurationArgs(
                        endpoint_id=target.load_balancer_arn, weight=100, client_ip_preservation_enabled=True
                    )
                ],
                opts=o,
            )


__all__ = [
    "GLOBAL_ACCELERATOR_REGION",
    "GLOBAL_ACCELERATOR_ZONE",
    "TYPE",
    "GlobalRouting",
    "RegionalTarget",
    "RoutingArgs",
    "ZoneVpc",
    "private_zone",
    "zone_vpcs",
]
