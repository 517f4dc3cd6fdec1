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
    "No RAM share, PrivateLink endpoint or endpoint service, KMS grant or S3 replication reaches an "
    "account or network outside the stack's purpose.",
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
    )
    for found in checks:
        for resource, problem in found:
            report_violation(f"{resource.name}: {problem}", resource.urn)


Found = list[tuple[PolicyResource, str]]


def route_problems(stack: StackView, allowed_tgws: set[str]) -> Found:
    """Routes out of the stack's networks (separation-network judges them, with its transit gateway list)."""
    out: Found = []
    own_peerings = {r.urn for r in stack.of_type(tokens.VPC_PEERING)}
    candidates: list[tuple[PolicyResource, Mapping[str, Any]]] = [(r, r.props) for r in stack.of_type(tokens.ROUTE)]
    candidates += [
        (t, route) for t in stack.of_type(tokens.ROUTE_TABLE) for route in get(t.props, "routes", default=[])
    ]
    for resource, route in candidates:
        peering = get(route, "vpcPeeringConnectionId")
        if peering and not any(d.urn in own_peerings for d in resource.dependencies):
            out.append(
                (
                    resource,
                    f"routes to VPC peering connection {peering}, which this stack does not create; a peering made "
                    "elsewhere may reach another workload's network",
                )
            )
        tgw = get(route, "transitGatewayId")
        if tgw and tgw not in allowed_tgws:
            out.append((resource, _tgw_problem(str(tgw))))
    for tgw_route in stack.of_type(TGW_ROUTE):
        target = get(tgw_route.props, "transitGatewayAttachmentId") or "a blackhole"
        out.append(
            (
                tgw_route,
                f"adds a transit gateway route (to {target}) "
                "in a transit gateway route table, which joins networks beyond this stack",
            )
        )
    return out


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


__all__ = ["account_problem", "paths", "route_problems"]
