"""Separation, every other path: the ways AWS offers to reach another account's network or data besides
peering, attachments and security-group rules (separation.py judges those).

- Routes (judged by separation-network, with its `allowed_transit_gateways`; `route_problems` here): a route
  (aws.ec2.Route, a RouteTable's inline routes, a transit gateway route) to a VPC peering connection this stack
  does not create, or to a transit gateway not listed as this workload's.
- RAM: a resource share associated with a principal that is not an account of the stack's purpose (an
  organization or OU ARN includes the other purpose's accounts); `allowExternalPrincipals`.
- PrivateLink: an interface endpoint to an endpoint service that is not an AWS service
  (`com.amazonaws.vpce.<region>.vpce-svc-...`, another account's), and an endpoint service that allows
  principals outside the stack's purpose.
- KMS grants: a grant whose grantee or retiring principal is in an account outside the stack's purpose.
- S3 replication: a destination bucket this stack does not create (cross-account replication names the
  destination bucket by ARN, which carries no account: AWS S3 User Guide, "Configuring replication for
  buckets in different accounts").

Resource policies (keys, key policies, secrets, queues, topics, buckets) are judged statement by statement by
separation-cross-account-grants.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import PolicyResource, StackValidationArgs

from gpuinfra.graph import tokens
from gpuinfra.policy.facts import StackFacts, require
from gpuinfra.policy.rules.declare import MANDATORY, ReportViolation, stack_policy
from gpuinfra.policy.rules.values import StackView, account_of_arn, get, listed, view
from gpuinfra.spec import with_article

TGW_ROUTE = "aws:ec2transitgateway/route:Route"
RAM_SHARE = "aws:ram/resourceShare:ResourceShare"
RAM_PRINCIPAL = "aws:ram/principalAssociation:PrincipalAssociation"
ENDPOINT_SERVICE = "aws:ec2/vpcEndpointService:VpcEndpointService"
ENDPOINT_PRINCIPAL = "aws:ec2/vpcEndpointServiceAllowedPrinciple:VpcEndpointServiceAllowedPrinciple"
KMS_GRANT = "aws:kms/grant:Grant"
BUCKETS = (tokens.BUCKET, tokens.BUCKET_V2)
AWS_SERVICE_ENDPOINT = "com.amazonaws."
"""AWS services' endpoint names: com.amazonaws.<region>.<service>; another account's endpoint service is named
com.amazonaws.vpce.<region>.vpce-svc-<id> (Amazon VPC User Guide, "Access a service through an interface
VPC endpoint" / "Endpoint services")."""
PARTNER_ENDPOINT = "com.amazonaws.vpce."


@stack_policy(
    "separation-paths",
    "No RAM share, PrivateLink endpoint or endpoint service, KMS grant, S3 replication or Global Accelerator "
    "endpoint reaches an account or network outside the stack's purpose.",
    MANDATORY,
    config={
        "allowed_endpoint_services": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "Endpoint service names (com.amazonaws.vpce.<region>.vpce-svc-...) of this workload "
            "that interface endpoints may use.",
        }
    },
)
def paths(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args)
    stack = view(args)
    checks = (
        _ram(stack, facts),
        _endpoints(stack, facts, set(args.get_config().get("allowed_endpoint_services", []))),
        _kms_grants(stack, facts),
        _replication(stack),
        _accelerator_endpoints(stack),
    )
    for found in checks:
        for resource, problem in found:
            report_violation(f"{resource.name}: {problem}", resource.urn)


Found = list[tuple[PolicyResource, str]]


ROUTE_TARGETS: dict[str, tuple[str, ...]] = {
    "gatewayId": (tokens.INTERNET_GATEWAY,),
    "natGatewayId": (tokens.NAT_GATEWAY,),
    "egressOnlyGatewayId": ("aws:ec2/egressOnlyInternetGateway:EgressOnlyInternetGateway",),
    "carrierGatewayId": ("aws:ec2/carrierGateway:CarrierGateway",),
    "vpcEndpointId": (tokens.VPC_ENDPOINT,),
    "networkInterfaceId": ("aws:ec2/networkInterface:NetworkInterface",),
    "vpcPeeringConnectionId": (tokens.VPC_PEERING,),
    "transitGatewayId": (),
    "localGatewayId": (),
    "coreNetworkArn": (),
    "odbNetworkArn": (),
}
"""Every target a route can send traffic to (pulumi-aws `aws.ec2.Route` and `aws.ec2.RouteTable` routes: the
arguments that are neither the table nor the destination; tests/policies/test_reachability.py holds this against
the provider's own arguments, so a target a new provider version adds fails the test, and a route naming one this
table lacks fails closed at run time). A target stays inside the stack's network only when the stack creates it
(the route depends on a resource of these types, itself judged): an internet, NAT, egress-only or carrier gateway,
a Gateway Load Balancer endpoint or network interface of its own VPC, a peering it creates (separation-network
judges the peer). A transit gateway passes only when `allowed_transit_gateways` lists it; an Outposts local gateway
(the site's network), a Cloud WAN core network and an Oracle Database@AWS network join networks beyond the stack."""
ROUTE_FIELDS = frozenset(
    {
        "routeTableId",
        "destinationCidrBlock",
        "destinationIpv6CidrBlock",
        "destinationPrefixListId",
        "cidrBlock",
        "ipv6CidrBlock",
        "region",
    }
)
"""A route's arguments that are not its target: the table it is in, its destination, the provider's region."""
ROUTE_OUTPUTS = frozenset({"id", "urn", "instanceId", "instanceOwnerId", "origin", "state"})
"""What AWS reports back about a route (the provider's output-only properties), not chosen by the program."""
LOCAL_TARGET = "local"
"""`gatewayId: local`: the VPC's own local route (Amazon VPC User Guide, "Route tables": the local route)."""


def route_problems(stack: StackView, allowed_tgws: set[str]) -> Found:
    """Routes out of the stack's networks (separation-network judges them, with its transit gateway list): every
    target a route names is judged, and one the pack does not know fails closed."""
    out: Found = []
    candidates: list[tuple[PolicyResource, Mapping[str, Any]]] = [(r, r.props) for r in stack.of_type(tokens.ROUTE)]
    candidates += [
        (t, route) for t in stack.of_type(tokens.ROUTE_TABLE) for route in get(t.props, "routes", default=[])
    ]
    for resource, route in candidates:
        out += [(resource, p) for p in _target_problems(resource, route, allowed_tgws)]
    for tgw_route in stack.of_type(TGW_ROUTE):
        target = get(tgw_route.props, "transitGatewayAttachmentId") or "a blackhole"
        out.append(
            (
                tgw_route,
                f"adds a transit gateway route (to {target}) "
                "in a transit gateway route table, which joins networks beyond this stack",
            )
        )
    for association in stack.of_type(tokens.ROUTE_TABLE_ASSOCIATION):
        problem = _association_problem(association)
        if problem:
            out.append((association, problem))
    return out


def _target_problems(resource: PolicyResource, route: Mapping[str, Any], allowed_tgws: set[str]) -> list[str]:
    """Why one route's targets may leave the stack's network ([] when each is the stack's own)."""
    problems = []
    for field, value in route.items():
        if value in (None, "", [], {}) or field in ROUTE_FIELDS or field in ROUTE_OUTPUTS:
            continue
        if field not in ROUTE_TARGETS:
            problems.append(
                f"routes through {field} {value}, a route target the pack does not know: it fails closed; judge the "
                "target in infra/gpuinfra/policy/rules/paths.py (ROUTE_TARGETS) before using it"
            )
        elif field == "transitGatewayId":
            if value not in allowed_tgws:
                problems.append(_tgw_problem(str(value)))
        elif field == "gatewayId" and value == LOCAL_TARGET:
            continue
        elif not any(d.resource_type in ROUTE_TARGETS[field] for d in resource.dependencies):
            problems.append(_foreign_target(field, str(value)))
    return problems


def _foreign_target(field: str, value: str) -> str:
    if field == "vpcPeeringConnectionId":
        return (
            f"routes to VPC peering connection {value}, which this stack does not create; a peering made elsewhere "
            "may reach another workload's network"
        )
    if not ROUTE_TARGETS[field]:
        return f"routes to {value} ({field}), which joins networks beyond this stack"
    return (
        f"routes to {value} ({field}), which this stack does not create: a target made elsewhere (a virtual private "
        "gateway's VPN, another VPC's appliance) may reach another workload's network; route to the stack's own"
    )


def _association_problem(association: PolicyResource) -> str | None:
    """A route table association ties the stack's own table to its own subnet or internet gateway (an edge
    association with a virtual private gateway would route a VPN's traffic through it)."""
    owned = {d.resource_type for d in association.dependencies}
    if get(association.props, "routeTableId") and tokens.ROUTE_TABLE not in owned:
        return "associates a route table this stack does not create: its routes are not judged"
    gateway = get(association.props, "gatewayId")
    if gateway and tokens.INTERNET_GATEWAY not in owned:
        return f"associates gateway {gateway}, which this stack does not create (a VPN's virtual private gateway?)"
    return None


def _tgw_problem(tgw: str) -> str:
    return (
        f"routes to transit gateway {tgw}, which may route to another workload's networks; list it in "
        "separation-network's allowed_transit_gateways if it only carries this workload's traffic"
    )


def account_problem(facts: StackFacts, principal: str, what: str) -> str | None:
    """Why `principal` (an account id or an ARN) is outside the stack's purpose; None when it is within."""
    text = str(principal)
    if text == "*":
        return f"{what} anyone (*)"
    if text.startswith("arn:") and (
        ":organization/" in text or ":ou/" in text or text.split(":")[2] == "organizations"
    ):
        return f"{what} an organization or OU ({text}), which holds the other purpose's accounts too"
    account = text if text.isdigit() else account_of_arn(text)
    if not account:
        return f"{what} {text}, whose account cannot be told"
    if account == facts.account.id:
        return None
    known = facts.account_with_id(account)
    if known is not None and known[1].serves(facts.workload):
        return None
    who = (
        f"{known[0]} ({account}), {with_article(known[1].purpose)} account"
        if known
        else (f"account {account}, which the organization file does not list")
    )
    return f"{what} {who}; {facts.workload} shares nothing outside {with_article(facts.workload)} account"


def _ram(stack: StackView, facts: StackFacts) -> Found:
    out: Found = []
    for share in stack.of_type(RAM_SHARE):
        if get(share.props, "allowExternalPrincipals") is True:
            out.append((share, "allows external principals: the share can reach accounts outside the organization"))
    for association in stack.of_type(RAM_PRINCIPAL):
        problem = account_problem(facts, str(get(association.props, "principal", default="")), "shares with")
        if problem:
            out.append((association, f"RAM {problem}"))
    return out


def _endpoints(stack: StackView, facts: StackFacts, allowed: set[str]) -> Found:
    out: Found = []
    for endpoint in stack.of_type(tokens.VPC_ENDPOINT):
        service = str(get(endpoint.props, "serviceName", default=""))
        if service in allowed:
            continue
        if service.startswith(PARTNER_ENDPOINT) or not service.startswith(AWS_SERVICE_ENDPOINT):
            out.append(
                (
                    endpoint,
                    f"connects to endpoint service {service}, not an AWS service: another account's PrivateLink "
                    "service; list it in allowed_endpoint_services if it is this workload's",
                )
            )
    for endpoint_service in stack.of_type(ENDPOINT_SERVICE):
        for principal in listed(get(endpoint_service.props, "allowedPrincipals")):
            problem = account_problem(facts, str(principal), "allows")
            if problem:
                out.append((endpoint_service, f"the endpoint service {problem}"))
    for allowed_principal in stack.of_type(ENDPOINT_PRINCIPAL):
        problem = account_problem(facts, str(get(allowed_principal.props, "principalArn", default="")), "allows")
        if problem:
            out.append((allowed_principal, f"the endpoint service {problem}"))
    return out


def _kms_grants(stack: StackView, facts: StackFacts) -> Found:
    out: Found = []
    for grant in stack.of_type(KMS_GRANT):
        for field in ("granteePrincipal", "retiringPrincipal"):
            value = get(grant.props, field)
            problem = account_problem(facts, str(value), f"grants ({field}) the key to") if value else None
            if problem:
                out.append((grant, f"KMS {problem}"))
    return out


def _replication(stack: StackView) -> Found:
    own = {f"arn:aws:s3:::{get(b.props, 'bucket')}" for b in stack.of_type(*BUCKETS) if get(b.props, "bucket")}
    out: Found = []
    for replication in stack.of_type(tokens.BUCKET_REPLICATION):
        for rule in get(replication.props, "rules", default=[]):
            destination = str(get(rule, "destination", "bucket", default=""))
            if destination and destination not in own:
                out.append(
                    (
                        replication,
                        f"replicates to {destination}, a bucket this stack does not create: it may be another "
                        "account's (a bucket ARN carries no account)",
                    )
                )
    return out


ACCELERATOR_ENDPOINTS = (
    tokens.LOAD_BALANCER,
    tokens.ALB_LOAD_BALANCER,
    tokens.EIP,
    tokens.INSTANCE,
)
"""What a Global Accelerator endpoint group may send traffic to: a load balancer, Elastic IP or instance
(Global Accelerator API, EndpointConfiguration.EndpointId); another account's only through a cross-account
attachment (`attachmentArn`)."""


def _accelerator_endpoints(stack: StackView) -> Found:
    out: Found = []
    for group in stack.of_type(tokens.GA_ENDPOINT_GROUP):
        owned = any(d.resource_type in ACCELERATOR_ENDPOINTS for d in group.dependencies)
        for endpoint in get(group.props, "endpointConfigurations", default=[]):
            attachment = get(endpoint, "attachmentArn")
            if attachment:
                out.append((group, f"sends traffic through cross-account attachment {attachment} to another account"))
            elif get(endpoint, "endpointId") and not owned:
                out.append(
                    (
                        group,
                        f"sends traffic to endpoint {get(endpoint, 'endpointId')}, which this stack does not create: "
                        "it may be another workload's",
                    )
                )
    return out


__all__ = ["ROUTE_FIELDS", "ROUTE_OUTPUTS", "ROUTE_TARGETS", "account_problem", "paths", "route_problems"]
