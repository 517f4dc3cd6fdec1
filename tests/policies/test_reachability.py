"""Network reachability over every route target, security-group peer and path type the providers define, not a list
of the common ones.

The lists the pack judges by are held against the installed provider packages (pulumi-aws 7.x: the arguments of
`aws.ec2.Route`, `aws.ec2.RouteTable`'s routes, the security-group rule types), so an argument a new provider
version adds fails here before it can pass the pack unread; every type of the providers' network-path families
(routes, gateways, peerings, VPNs, attachments, endpoints, prefix lists, shares, Cloud WAN, Direct Connect, VPC
Lattice, ...: read from the packages' own type tokens) is either refused by `unrecognised-resource` or allow-listed
with a policy that judges it. Each foreign path is planted into a real example graph and refused (mandatory); the
unchanged examples pass (test_paths.py, test_separation.py).

Upstream: Amazon VPC User Guide, "Route tables" (route targets, the local route, edge associations) and "VPC CIDR
blocks" (100.64.0.0/10 and 198.19.0.0/16 as VPC ranges); "Prefix lists"; Global Accelerator API,
EndpointConfiguration (EndpointId, AttachmentArn: cross-account attachments).
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import pulumi_aws.ec2 as ec2
import pulumi_aws.globalaccelerator as globalaccelerator
import pulumi_aws.vpc as vpc
import pytest
from gpuinfra.graph import Graph, tokens
from gpuinfra.policy.allowlist import allow_list
from gpuinfra.policy.pack import pack_config, police
from gpuinfra.policy.rules.paths import ROUTE_FIELDS, ROUTE_OUTPUTS, ROUTE_TARGETS
from gpuinfra.policy.rules.separation import CIDR_PEERS, GROUP_PEERS, PREFIX_LIST_PEERS, SELF_PEER
from helpers import example_graph
from policy_helpers import facts_for, one_of_each, planted
from provider_tokens import provider_types

COVERS = ["separation-network"]
"""Failing and passing cases below (test_registration reads this)."""

INFERENCE = "222222222222"
"""stacks/org.yaml: ml-inference's id; llm-train is in ml-training (111111111111)."""


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def arguments(function: Any) -> set[str]:
    """A provider class's arguments as the engine names them (camelCase), from its signature."""
    skip = {"__self__", "self_", "resource_name", "id", "opts"}
    return {camel(p) for p in inspect.signature(function).parameters if p not in skip} | (
        {"self"} if "self" in inspect.signature(function).parameters else set()
    )


def violations(stack: str, graph: Graph, policy: str, config: dict[str, Any] | None = None) -> list[str]:
    run = police(graph, facts_for(stack), pack_config(given=config or {}))
    return [v.message for v in run.violations if v.rule == policy and v.level.enforcement == "mandatory"]


# ---- the lists are the provider's ----------------------------------------------------------------
def test_every_route_target_the_provider_defines_is_judged() -> None:
    """aws.ec2.Route and RouteTable routes: every argument that is neither the table nor the destination is a target
    in ROUTE_TARGETS (odbNetworkArn, Oracle Database@AWS, came with pulumi-aws 7; the old list knew four)."""
    route = arguments(ec2.RouteArgs.__init__)
    inline = arguments(ec2.RouteTableRouteArgs.__init__)
    assert {"gatewayId", "coreNetworkArn", "odbNetworkArn", "localGatewayId"} <= route & inline
    assert (route | inline) - ROUTE_FIELDS == set(ROUTE_TARGETS)
    outputs = arguments(ec2.Route.get) - route
    assert outputs <= ROUTE_OUTPUTS, outputs - ROUTE_OUTPUTS


SG_RULE_ARGS = (
    ec2.SecurityGroupIngressArgs,
    ec2.SecurityGroupEgressArgs,
    ec2.SecurityGroupRuleArgs,
    vpc.SecurityGroupIngressRuleArgs,
    vpc.SecurityGroupEgressRuleArgs,
)
NOT_PEERS = {
    "fromPort", "toPort", "protocol", "ipProtocol", "type", "description", "securityGroupId", "region", "tags",
}  # fmt: skip
"""What a rule says besides whom it admits: its ports, protocol, direction, the group it belongs to, labels."""


@pytest.mark.parametrize("kind", SG_RULE_ARGS, ids=lambda k: k.__name__)
def test_every_security_group_peer_the_provider_defines_is_judged(kind: type) -> None:
    peers = arguments(kind.__init__) - NOT_PEERS
    assert peers <= {*CIDR_PEERS, *PREFIX_LIST_PEERS, *GROUP_PEERS, SELF_PEER}, peers
    assert peers & {*CIDR_PEERS} and peers & {*PREFIX_LIST_PEERS}


def test_every_accelerator_endpoint_argument_is_judged() -> None:
    assert arguments(globalaccelerator.EndpointGroupEndpointConfigurationArgs.__init__) == {
        "attachmentArn", "clientIpPreservationEnabled", "endpointId", "weight",
    }  # fmt: skip


# ---- every type of the path families -------------------------------------------------------------
PATH_MODULES = frozenset(
    {
        "ec2transitgateway", "networkmanager", "directconnect", "ram", "vpclattice", "ec2clientvpn", "verifiedaccess",
        "networkfirewall", "vpc", "globalaccelerator", "route53resolver", "networkconnectivity", "servicenetworking",
        "vpcaccess",
    }
)  # fmt: skip
"""Provider modules whose every type is a network path or part of one (pulumi-aws, pulumi-aws-native, pulumi-gcp)."""
PATH_NAMES = re.compile(
    r"route|gateway|peering|vpn|endpoint|prefixlist|attachment|connect|share|principal|securitygroup|interconnect|"
    r"firewall|network|tunnel|link|cidr|ipam|subnet|vpc|router|address",
    re.IGNORECASE,
)
"""In the catch-all compute modules (aws `ec2`, gcp `compute`), the types named for a path."""
NETWORK_JUDGES = {"separation-network", "separation-paths", "security-default-sg-closed"}
PATHLESS = {
    tokens.SUBNET: "an address range of the stack's own VPC: traffic leaves it only by a route, which is judged",
    tokens.GA_ACCELERATOR: "the internet's entry to the stack's own endpoint groups, which are judged",
    tokens.GA_LISTENER: "a port range of the accelerator, to its endpoint groups, which are judged",
}
"""Allow-listed AWS family types that open no path of their own, and why."""


def path_family() -> list[str]:
    out = []
    for token in provider_types():
        package, module, name = token.split(":")
        module = module.split("/")[0].lower()
        if package not in ("aws", "aws-native", "gcp"):
            continue
        if module in PATH_MODULES or (module in ("ec2", "compute") and PATH_NAMES.search(name)):
            out.append(token)
    return sorted(out)


def test_the_family_is_read_from_the_providers() -> None:
    family = path_family()
    assert len(family) > 300
    for token in (
        "aws:ec2/vpnConnection:VpnConnection",
        "aws:ec2/defaultRouteTable:DefaultRouteTable",
        "aws:ec2/managedPrefixList:ManagedPrefixList",
        "aws:ram/resourceShareAccepter:ResourceShareAccepter",
        "aws:networkmanager/vpcAttachment:VpcAttachment",
        "aws:directconnect/gatewayAssociation:GatewayAssociation",
        "aws-native:ec2:TransitGatewayAttachment",
        "aws:vpclattice/serviceNetworkVpcAssociation:ServiceNetworkVpcAssociation",
    ):
        assert token in family, token


def test_every_unlisted_path_type_is_refused() -> None:
    """One real graph (llm-train) with one resource of each unlisted type of the family: each is refused."""
    rows = allow_list()
    unlisted = [t for t in path_family() if t not in rows]
    graph, extra = one_of_each(example_graph("llm-train"), unlisted, "p")
    run = police(graph, facts_for("llm-train"), pack_config())
    refused = {
        v.urn for v in run.violations if v.rule == "unrecognised-resource" and v.level.enforcement == "mandatory"
    }
    assert [r.type for r in extra if r.urn not in refused] == []


def test_every_listed_aws_path_type_is_judged() -> None:
    rows = allow_list()
    listed = [t for t in path_family() if t in rows and not t.startswith("gcp:")]
    assert tokens.ROUTE in listed and tokens.VPC_PEERING in listed
    unjudged = [t for t in listed if t not in PATHLESS and not set(rows[t].judged_by) & NETWORK_JUDGES]
    assert unjudged == []


# ---- each path planted into a real graph ---------------------------------------------------------
FOREIGN_TARGET = {
    "gatewayId": "vgw-0123456789abcdef0",
    "natGatewayId": "nat-0123456789abcdef0",
    "egressOnlyGatewayId": "eigw-0123456789abcdef0",
    "carrierGatewayId": "cagw-0123456789abcdef0",
    "vpcEndpointId": "vpce-0123456789abcdef0",
    "networkInterfaceId": "eni-0123456789abcdef0",
    "vpcPeeringConnectionId": "pcx-0123456789abcdef0",
    "transitGatewayId": "tgw-0123456789abcdef0",
    "localGatewayId": "lgw-0123456789abcdef0",
    "coreNetworkArn": "arn:aws:networkmanager::111111111111:core-network/core-network-0123456789abcdef0",
    "odbNetworkArn": "arn:aws:odb:us-east-1:111111111111:cloud-vm-cluster/odbnet-0123456789",
}
"""A target made elsewhere for each field (AWS's id prefixes), none of them created by the stack."""


@pytest.mark.parametrize("field", sorted(arguments(ec2.RouteArgs.__init__) - ROUTE_FIELDS))
def test_a_route_to_a_target_the_stack_does_not_create_is_refused(field: str) -> None:
    value = FOREIGN_TARGET[field]
    route = {"routeTableId": "rtb-0abc", "destinationCidrBlock": "10.64.0.0/16", field: value}
    graph = planted(example_graph("llm-train"), tokens.ROUTE, "planted", route)
    found = violations("llm-train", graph, "separation-network")
    assert any(m.startswith("planted: routes to") and value in m for m in found), found
    inline = planted(
        example_graph("llm-train"),
        tokens.ROUTE_TABLE,
        "planted",
        {"vpcId": "vpc-1", "routes": [{"cidrBlock": "10.64.0.0/16", field: value}]},
    )
    assert any(value in m for m in violations("llm-train", inline, "separation-network"))


def test_a_route_to_the_stacks_own_gateway_passes_and_an_unknown_target_fails_closed() -> None:
    own = {"routeTableId": "rtb-0abc", "destinationCidrBlock": "0.0.0.0/0", "natGatewayId": "nat-0abc"}
    graph = planted(example_graph("llm-train"), tokens.ROUTE, "planted", own, depends_on=(tokens.NAT_GATEWAY,))
    assert violations("llm-train", graph, "separation-network") == []
    local = {"routeTableId": "rtb-0abc", "destinationCidrBlock": "10.0.0.0/16", "gatewayId": "local"}
    assert (
        violations("llm-train", planted(example_graph("llm-train"), tokens.ROUTE, "local", local), "separation-network")
        == []
    )
    future = {"routeTableId": "rtb-0abc", "destinationCidrBlock": "10.64.0.0/16", "futureGatewayId": "fgw-1"}
    found = violations(
        "llm-train", planted(example_graph("llm-train"), tokens.ROUTE, "planted", future), "separation-network"
    )
    assert found == [
        "planted: routes through futureGatewayId fgw-1, a route target the pack does not know: it fails closed; "
        "judge the target in infra/gpuinfra/policy/rules/paths.py (ROUTE_TARGETS) before using it"
    ]


def test_an_association_with_a_table_or_gateway_the_stack_does_not_create_is_refused() -> None:
    table = {"subnetId": "subnet-0abc", "routeTableId": "rtb-0123456789abcdef0"}
    found = violations(
        "llm-train",
        planted(example_graph("llm-train"), tokens.ROUTE_TABLE_ASSOCIATION, "planted", table),
        "separation-network",
    )
    assert found == ["planted: associates a route table this stack does not create: its routes are not judged"]
    edge = {"gatewayId": "vgw-0123456789abcdef0", "routeTableId": "rtb-0abc"}
    graph = planted(
        example_graph("llm-train"), tokens.ROUTE_TABLE_ASSOCIATION, "edge", edge, depends_on=(tokens.ROUTE_TABLE,)
    )
    assert any(
        "associates gateway vgw-0123456789abcdef0" in m for m in violations("llm-train", graph, "separation-network")
    )


RULE = {"securityGroupId": "sg-0abc", "ipProtocol": "tcp", "fromPort": 443, "toPort": 443}
PEERS = [
    ({**RULE, "cidrIpv4": "100.64.0.0/16"}, "100.64.0.0/16 is a private range outside this stack's VPCs"),
    ({**RULE, "cidrIpv4": "198.19.4.0/24"}, "198.19.4.0/24 is a private range outside this stack's VPCs"),
    ({**RULE, "cidrIpv4": "0.0.0.0/1"}, "0.0.0.0/1 is a private range outside this stack's VPCs"),
    ({**RULE, "prefixListId": "pl-0123456789abcdef0"}, "names prefix list pl-0123456789abcdef0"),
]


@pytest.mark.parametrize(("rule", "message"), PEERS, ids=[m[:30] for _, m in PEERS])
def test_a_rule_admitting_another_network_is_refused(rule: dict[str, Any], message: str) -> None:
    graph = planted(example_graph("llm-train"), tokens.SG_INGRESS_RULE, "planted", rule)
    found = violations("llm-train", graph, "separation-network")
    assert any(m.startswith(f"planted: {message}") for m in found), found
    inline = {
        "vpcId": "vpc-1",
        "ingress": [{"protocol": "tcp", "fromPort": 443, "toPort": 443, "prefixListIds": ["pl-0abc"]}],
    }
    graph = planted(example_graph("llm-train"), tokens.SECURITY_GROUP, "inline", inline)
    assert any("names prefix list pl-0abc" in m for m in violations("llm-train", graph, "separation-network"))


def test_a_listed_prefix_list_passes() -> None:
    graph = planted(
        example_graph("llm-train"), tokens.SG_INGRESS_RULE, "planted", {**RULE, "prefixListId": "pl-63a5400a"}
    )
    config = {"separation-network": {"allowed_prefix_lists": ["pl-63a5400a"]}}
    assert violations("llm-train", graph, "separation-network", config) == []


ENDPOINTS = [
    (
        {"endpointId": f"arn:aws:elasticloadbalancing:us-east-1:{INFERENCE}:loadbalancer/app/x/1"},
        "sends traffic to endpoint",
    ),
    (
        {"endpointId": "arn:aws:elasticloadbalancing:us-east-1:111111111111:loadbalancer/app/x/1",
         "attachmentArn": f"arn:aws:globalaccelerator::{INFERENCE}:attachment/1"},
        "sends traffic through cross-account attachment",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("endpoint", "message"), ENDPOINTS, ids=["foreign-endpoint", "attachment"])
def test_an_accelerator_endpoint_the_stack_does_not_create_is_refused(endpoint: dict[str, str], message: str) -> None:
    inputs = {"listenerArn": "arn:listener", "endpointGroupRegion": "us-east-1", "endpointConfigurations": [endpoint]}
    graph = planted(example_graph("chat-serve"), tokens.GA_ENDPOINT_GROUP, "planted", inputs)
    found = [m for m in violations("chat-serve", graph, "separation-paths") if m.startswith("planted:")]
    assert len(found) == 1 and message in found[0], found
