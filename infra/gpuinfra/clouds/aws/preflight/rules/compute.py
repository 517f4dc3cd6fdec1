"""EC2 rules the service model cannot express: network cards and EFA per instance type, metadata options,
the Terraform provider's `resolve:ssm:` limitation, security group text, routes, endpoints, placement."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from typing import Any

from gpuinfra.catalog import Catalog
from gpuinfra.clouds.aws.preflight.rules.base import Violation, judgeable_number, rule
from gpuinfra.graph import Graph, Resource, tokens

LT = tokens.LAUNCH_TEMPLATE
ASG = tokens.ASG
INSTANCE = tokens.INSTANCE
EFA_TYPES = {"efa", "efa-only"}
INTERFACE_TYPES = {"interface", "efa", "efa-only", "trunk"}
NETWORK_CARDS = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/using-eni.html#network-cards"
EFA_DOC = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.html"


def instance_types(graph: Graph, template: Resource) -> list[str]:
    """The types a launch template (or instance) launches: its own, the overrides of Auto Scaling groups that use it,
    and the instanceConfigs of AWS PCS compute node groups that use it."""
    types = {template.inputs["instanceType"]} if isinstance(template.inputs.get("instanceType"), str) else set()
    for group in graph.of_type(ASG, tokens.PCS_NODE_GROUP) if template.type == LT else []:
        if template.urn not in group.dependencies:
            continue
        lt = ((group.inputs.get("mixedInstancesPolicy") or {}).get("launchTemplate")) or {}
        types |= {o["instanceType"] for o in lt.get("overrides") or [] if isinstance(o.get("instanceType"), str)}
        configs = group.inputs.get("instanceConfigs") or []
        types |= {c["instanceType"] for c in configs if isinstance(c, dict) and isinstance(c.get("instanceType"), str)}
    return sorted(types)


def _interfaces(resource: Resource) -> list[dict[str, Any]]:
    return [ni for ni in resource.inputs.get("networkInterfaces") or [] if isinstance(ni, dict)]


@rule(
    "PF-EC2-NETCARD",
    "network card indices run from 0 to the type's network cards minus one; each card carries at most one "
    "EFA; card 0 device 0 is the primary interface and cannot be efa-only",
    f"Amazon EC2 User Guide, network cards ({NETWORK_CARDS}) and EFA for accelerated instances ({EFA_DOC}); "
    "per-type counts from the catalog (instances.yaml, karpenter's generated VPC limits)",
)
def network_cards(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for lt in graph.of_type(LT, INSTANCE):
        interfaces = _interfaces(lt)
        for name in instance_types(graph, lt):
            spec = catalog.instance(name)
            if spec is None:
                continue
            efa_per_card: dict[int, int] = {}
            for n, ni in enumerate(interfaces):
                card = ni.get("networkCardIndex", 0)
                if judgeable_number(card) and not 0 <= card < spec.network_cards:
                    msg = f"{name} has {spec.network_cards} network card(s), index {card} does not exist"
                    yield Violation(lt, f"networkInterfaces[{n}].networkCardIndex", card, msg)
                if ni.get("interfaceType") in EFA_TYPES and isinstance(card, int):
                    efa_per_card[card] = efa_per_card.get(card, 0) + 1
                if ni.get("interfaceType") == "efa-only" and card == 0 and ni.get("deviceIndex", 0) == 0:
                    yield Violation(
                        lt,
                        f"networkInterfaces[{n}].interfaceType",
                        "efa-only",
                        "the primary interface cannot be efa-only",
                    )
            for card, count in sorted(efa_per_card.items()):
                if count > 1:
                    yield Violation(lt, "networkInterfaces", count, f"{count} EFAs on network card {card} of {name}")
            total = sum(efa_per_card.values())
            if total > spec.efa_interfaces:
                yield Violation(
                    lt, "networkInterfaces", total, f"{total} EFA interfaces; {name} supports {spec.efa_interfaces}"
                )


@rule(
    "PF-EC2-EFA",
    "interface type is interface, efa, efa-only or trunk; efa and efa-only only on EFA-capable instance types",
    f"Amazon EC2 API Reference, LaunchTemplateInstanceNetworkInterfaceSpecificationRequest.InterfaceType; {EFA_DOC}",
)
def efa_types(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for lt in graph.of_type(LT, INSTANCE):
        types = instance_types(graph, lt)
        for n, ni in enumerate(_interfaces(lt)):
            kind = ni.get("interfaceType")
            if kind is None:
                continue
            if kind not in INTERFACE_TYPES:
                yield Violation(lt, f"networkInterfaces[{n}].interfaceType", kind, f"{kind!r} is not an interface type")
                continue
            if kind in EFA_TYPES:
                for name in types:
                    spec = catalog.instance(name)
                    if spec is not None and spec.efa_interfaces == 0:
                        yield Violation(
                            lt, f"networkInterfaces[{n}].interfaceType", kind, f"{name} does not support EFA"
                        )


@rule(
    "PF-EC2-IMDS",
    "the metadata response hop limit is an integer from 1 to 64",
    "Amazon EC2 API Reference, LaunchTemplateInstanceMetadataOptionsRequest.HttpPutResponseHopLimit",
)
def metadata_options(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for r in graph.of_type(LT, INSTANCE):
        hops = (r.inputs.get("metadataOptions") or {}).get("httpPutResponseHopLimit")
        if judgeable_number(hops) and not 1 <= hops <= 64:
            yield Violation(r, "metadataOptions.httpPutResponseHopLimit", hops, f"hop limit {hops}")


@rule(
    "PF-EC2-SSM-ROOT",
    "aws.ec2.Instance cannot take an `ami` of the form resolve:ssm: together with a root block device: the "
    "provider looks the AMI up by that string to find its root device and fails",
    "hashicorp/terraform-provider-aws issue #43488",
)
def ssm_ami_with_root_device(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for r in graph.of_type(INSTANCE):
        ami = r.inputs.get("ami")
        if isinstance(ami, str) and ami.startswith("resolve:ssm:") and r.inputs.get("rootBlockDevice"):
            yield Violation(r, "ami", ami, "resolve:ssm: AMI with rootBlockDevice")


SG_TEXT = re.compile(r"^[a-zA-Z0-9 ._\-:/()#,@\[\]+=&;{}!$*]*\Z")


@rule(
    "PF-EC2-SG-TEXT",
    "security group and rule descriptions: up to 255 characters of a-z, A-Z, 0-9, spaces and ._-:/()#,@[]+=&;{}!$*",
    "Amazon EC2 API Reference, CreateSecurityGroup.GroupDescription and IpRange.Description",
)
def security_group_text(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for r in graph.of_type(tokens.SECURITY_GROUP):
        texts = [("description", r.inputs.get("description"))]
        for key in ("ingress", "egress"):
            texts += [
                (f"{key}[{n}].description", rl.get("description")) for n, rl in enumerate(r.inputs.get(key) or [])
            ]
        for path, text in texts:
            if isinstance(text, str) and (len(text) > 255 or not SG_TEXT.match(text)):
                yield Violation(r, path, text, "description outside the allowed characters or length")


ROUTE_TARGETS = (
    "gatewayId",
    "natGatewayId",
    "networkInterfaceId",
    "transitGatewayId",
    "vpcEndpointId",
    "vpcPeeringConnectionId",
    "egressOnlyGatewayId",
    "carrierGatewayId",
    "localGatewayId",
    "coreNetworkArn",
)


@rule(
    "PF-EC2-ROUTE",
    "a route has exactly one destination and exactly one target",
    "Amazon EC2 API Reference, CreateRoute",
)
def routes(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for r in graph.of_type(tokens.ROUTE_TABLE, tokens.ROUTE):
        table = r.type.endswith("RouteTable")
        for n, route in enumerate(r.inputs.get("routes") or [] if table else [r.inputs]):
            where = f"routes[{n}]" if table else ""
            targets = [k for k in ROUTE_TARGETS if route.get(k)]
            if len(targets) != 1:
                yield Violation(r, where, targets, f"{len(targets)} targets")
            keys = (
                "cidrBlock",
                "ipv6CidrBlock",
                "destinationPrefixListId",
                "destinationCidrBlock",
                "destinationIpv6CidrBlock",
            )
            destinations = [k for k in keys if route.get(k)]
            if len(destinations) != 1:
                yield Violation(r, where, destinations, f"{len(destinations)} destinations")


@rule(
    "PF-EC2-ENDPOINT",
    "a Gateway endpoint takes route tables and no subnets or security groups; an Interface endpoint takes "
    "subnets and no route tables",
    "Amazon EC2 API Reference, CreateVpcEndpoint (RouteTableIds: gateway endpoints only; SubnetIds, "
    "SecurityGroupIds: interface endpoints)",
)
def endpoints(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for r in graph.of_type(tokens.VPC_ENDPOINT):
        kind = r.inputs.get("vpcEndpointType", "Gateway")
        wrong = (
            ("subnetIds", "securityGroupIds")
            if kind == "Gateway"
            else ("routeTableIds",)
            if kind == "Interface"
            else ()
        )
        for key in wrong:
            if r.inputs.get(key):
                yield Violation(r, key, r.inputs[key], f"{key} on a {kind} endpoint")


@rule(
    "PF-EC2-PLACEMENT",
    "partitionCount only with the partition strategy; spreadLevel only with spread",
    "Amazon EC2 API Reference, CreatePlacementGroup",
)
def placement_groups(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for r in graph.of_type(tokens.PLACEMENT_GROUP):
        strategy = r.inputs.get("strategy")
        if r.inputs.get("partitionCount") and strategy != "partition":
            yield Violation(r, "partitionCount", r.inputs["partitionCount"], f"partitionCount with strategy {strategy}")
        if r.inputs.get("spreadLevel") and strategy != "spread":
            yield Violation(r, "spreadLevel", r.inputs["spreadLevel"], f"spreadLevel with strategy {strategy}")


USER_DATA_LIMIT = 16 * 1024
"""Bytes of user data before base64 (Amazon EC2 User Guide, "Run commands when you launch an EC2 instance with
user data input": "User data is limited to 16 KB, in raw form, before it is base64-encoded")."""


@rule(
    "PF-EC2-USERDATA",
    "user data is at most 16 KB (16,384 bytes) in raw form, before base64 encoding",
    "Amazon EC2 User Guide, user data (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/user-data.html); "
    "Amazon EC2 API Reference, RequestLaunchTemplateData.UserData",
)
def user_data_size(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for r in graph.of_type(LT):
        encoded = r.inputs.get("userData")
        if not isinstance(encoded, str):
            continue
        try:
            size = len(base64.b64decode(encoded, validate=True))
        except (binascii.Error, ValueError):
            yield Violation(r, "userData", f"{len(encoded)} characters", "userData is not base64")
            continue
        if size > USER_DATA_LIMIT:
            yield Violation(r, "userData", f"{size:,} bytes", f"{size:,} bytes of user data, over {USER_DATA_LIMIT:,}")


__all__ = ["USER_DATA_LIMIT", "instance_types"]
