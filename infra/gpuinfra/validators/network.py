"""Network placement: inference spans two or more zones, regions appear once, region VPCs and client networks
are distinct (a zone outside its region is a spec error: spec.base.zone_problem)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from gpuinfra.spec import InferenceSpec
from gpuinfra.validators.base import Failure, Level, rule


@rule(Level.ERROR)
def duplicate_region(spec: InferenceSpec) -> Iterator[Failure]:
    """A region listed twice would build two fleets fighting over one name and quota."""
    seen: dict[str, int] = {}
    for i, region in enumerate(spec.regions):
        if region.region in seen:
            first = seen[region.region]
            yield Failure(
                f"region {region.region} is listed twice (also at regions[{seen[region.region]}])",
                ("regions", i, "region"),
                f"delete regions[{i}] and write `peak_rps: {spec.regions[first].peak_rps + region.peak_rps:g}` in "
                f"regions[{first}] (their demand summed), with its max_replicas raised to carry it",
            )
        else:
            seen[region.region] = i


@rule(Level.ERROR)
def single_zone_region(spec: InferenceSpec) -> Iterator[Failure]:
    """A region on one zone loses every replica with that zone; replicas need two or more."""
    for i, region in enumerate(spec.regions):
        zones = region.availability_zones
        if zones and len(set(zones)) < 2:
            yield Failure(
                f"region {region.region} uses {len(set(zones))} zone",
                ("regions", i, "availability_zones"),
                f"write `availability_zones: [{region.region}a, {region.region}b]` (two or more zones)",
            )


__all__ = ["duplicate_region", "single_zone_region"]


PEERING_LIMITS = "https://docs.aws.amazon.com/vpc/latest/peering/vpc-peering-basics.html#vpc-peering-limitations"
"""VPC peering limitations: a peering connection between VPCs with matching or overlapping IPv4 CIDR blocks
cannot be created (a Transit Gateway cannot route between them either)."""


def _region_networks(spec: InferenceSpec) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(spec.vpc_cidr_of(i)) for i in range(len(spec.regions))]


def _free_network(taken: list[ipaddress.IPv4Network | ipaddress.IPv6Network], spec: InferenceSpec) -> str:
    """The first 10.x.0.0/16 from 10.64.0.0 (where the default region networks start) that overlaps no region's
    VPC and no client network: a value to write."""
    used = [*taken, *(ipaddress.ip_network(c) for c in spec.access.client_cidrs)]
    for x in [*range(64, 256), *range(64)]:
        candidate = ipaddress.ip_network(f"10.{x}.0.0/16")
        if not any(candidate.overlaps(n) for n in used):
            return str(candidate)
    return "10.<x>.0.0/16"


@rule(Level.WARNING)
def overlapping_region_vpcs(spec: InferenceSpec) -> Iterator[Failure]:
    """Two regions on overlapping VPC networks can never be peered or joined by a Transit Gateway. A warning,
    not an error: a fleet deployed on one shared network keeps serving, and moving a VPC replaces it (suppress
    it there until the move is planned)."""
    if spec.platform != "ec2":
        return  # the clusters' VPCs are not the spec's
    nets = _region_networks(spec)
    for i, net in enumerate(nets):
        clash = next((j for j in range(i) if net.overlaps(nets[j])), None)
        if clash is not None:
            yield Failure(
                f"{spec.regions[i].region}'s VPC {net} overlaps {spec.regions[clash].region}'s ({nets[clash]}): "
                f"overlapping VPCs cannot be peered ({PEERING_LIMITS})",
                ("regions", i, "vpc_cidr"),
                f"write `vpc_cidr: {_free_network(nets, spec)}` in regions[{i}] (a /16 no region or client uses)",
            )


@rule(Level.ERROR)
def vpc_overlaps_client_network(spec: InferenceSpec) -> Iterator[Failure]:
    """An internal fleet cannot answer a client network that overlaps its own VPC: the VPC's local route keeps
    traffic to those addresses inside it."""
    if spec.platform != "ec2":
        return
    for i, net in enumerate(_region_networks(spec)):
        for client in spec.access.client_cidrs:
            if net.overlaps(ipaddress.ip_network(client)):
                yield Failure(
                    f"{spec.regions[i].region}'s VPC {net} overlaps the client network {client}: the VPC's local "
                    "route keeps traffic to those addresses inside the VPC, so the clients get no replies",
                    ("regions", i, "vpc_cidr"),
                    f"write `vpc_cidr: {_free_network(_region_networks(spec), spec)}` in regions[{i}] (a /16 no "
                    "region or client uses)",
                )


@rule(Level.WARNING)
def internal_records_in_public_zone(spec: InferenceSpec) -> Iterator[Failure]:
    """An internal fleet's latency records go to the private hosted zone the stack makes (associated with the
    fleet's VPCs), never to hosted_zone_id: in a public zone they would publish its load balancers' private
    addresses to anyone, for clients that could not reach them (Route 53 DG, "Working with private hosted zones";
    review expert-inference-2 S5). A hosted_zone_id given anyway is unused, and said so."""
    routing = spec.global_routing
    if spec.access.scheme == "internal" and routing.type == "route53_latency" and routing.hosted_zone_id:
        yield Failure(
            f"hosted_zone_id {routing.hosted_zone_id} is not used: an internal fleet's records go to a private zone "
            f"for {routing.domain_name} the stack makes, so no public zone lists private addresses",
            ("global_routing", "hosted_zone_id"),
            "remove `global_routing.hosted_zone_id` (the private zone resolves only inside the fleet's VPCs)",
        )
