"""Route 53, load balancer and Global Accelerator rules."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.catalog import Catalog
from gpuinfra.clouds.aws.preflight.rules.base import Violation, rule
from gpuinfra.graph import Graph, tokens

RECORD = tokens.ROUTE53_RECORD
LB = tokens.LOAD_BALANCER
LISTENER = tokens.LISTENER
POLICIES = (
    "latencyRoutingPolicies",
    "weightedRoutingPolicies",
    "failoverRoutingPolicies",
    "geolocationRoutingPolicies",
    "geoproximityRoutingPolicy",
    "cidrRoutingPolicy",
)


@rule(
    "PF-R53-RECORD",
    "a record with a routing policy other than simple carries a set identifier; a latency record names its "
    "region; an alias takes no TTL or values, any other record takes both",
    "Amazon Route 53 API Reference, ResourceRecordSet (SetIdentifier, Region, AliasTarget, TTL, ResourceRecords)",
)
def records(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for r in graph.of_type(RECORD):
        i = r.inputs
        policies = [p for p in POLICIES if i.get(p)] + (
            ["multivalueAnswerRoutingPolicy"] if i.get("multivalueAnswerRoutingPolicy") else []
        )
        if policies and not i.get("setIdentifier"):
            yield Violation(r, "setIdentifier", None, f"{policies[0]} without a set identifier")
        for n, policy in enumerate(i.get("latencyRoutingPolicies") or []):
            if not policy.get("region"):
                yield Violation(r, f"latencyRoutingPolicies[{n}].region", None, "latency record without a region")
        if i.get("aliases"):
            for key in ("ttl", "records"):
                if i.get(key):
                    yield Violation(r, key, i[key], f"alias record with {key}")
        else:
            for key in ("ttl", "records"):
                if not i.get(key):
                    yield Violation(r, key, None, f"non-alias record without {key}")


@rule(
    "PF-ELB-CERT",
    "HTTPS and TLS listeners need a certificate; HTTP, TCP and UDP listeners take none",
    "Elastic Load Balancing API Reference, CreateListener (Certificates: required for HTTPS and TLS)",
)
def listener_certificates(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for r in graph.of_type(LISTENER):
        protocol, cert = r.inputs.get("protocol"), r.inputs.get("certificateArn")
        if protocol in ("HTTPS", "TLS") and not cert:
            yield Violation(r, "certificateArn", None, f"{protocol} listener without a certificate")
        if protocol in ("HTTP", "TCP", "UDP", "TCP_UDP") and cert:
            yield Violation(r, "certificateArn", cert, f"{protocol} listener with a certificate")


@rule(
    "PF-GA-CLIENTIP",
    "client IP address preservation is not supported on Network Load Balancer endpoints without security "
    "groups or with a TLS listener",
    "AWS Global Accelerator Developer Guide, requirements for endpoints with client IP address preservation "
    "(https://docs.aws.amazon.com/global-accelerator/latest/dg/about-endpoints.sipp-caveats.html)",
)
def client_ip_preservation(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for group in graph.of_type(tokens.GA_ENDPOINT_GROUP):
        targets = {lb.urn: lb for lb in graph.dependencies_of(group, LB)}
        for n, endpoint in enumerate(group.inputs.get("endpointConfigurations") or []):
            if not endpoint.get("clientIpPreservationEnabled"):
                continue
            for lb in targets.values():
                if lb.inputs.get("loadBalancerType") != "network":
                    continue
                tls = [
                    li
                    for li in graph.of_type(LISTENER)
                    if lb.urn in li.dependencies and li.inputs.get("protocol") == "TLS"
                ]
                path = f"endpointConfigurations[{n}].clientIpPreservationEnabled"
                if not lb.inputs.get("securityGroups"):
                    yield Violation(group, path, True, f"NLB {lb.name} has no security groups")
                elif tls:
                    yield Violation(group, path, True, f"NLB {lb.name} has a TLS listener")


__all__ = ["POLICIES"]
