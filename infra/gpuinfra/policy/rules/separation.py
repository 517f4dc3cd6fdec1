"""Separation: training and inference never share an account, a network path or a grant.

Every resource carries its stack's workload tag and a stack holds one workload; every AWS provider
assumes a role in an account of the stack's purpose; no VPC peering, transit gateway attachment or
security-group rule reaches another network; the only cross-account grants are the model registry's
(training accounts write its upload prefix, inference accounts read its model prefix). And the pack fails
closed: a gpuinfra stack whose facts cannot be read is one mandatory violation, never silent passes.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from pulumi_policy import PolicyResource, ResourceValidationArgs, StackValidationArgs

from gpuinfra.graph import SECRET, tokens
from gpuinfra.graph.log_delivery import log_delivery
from gpuinfra.graph.values import plain
from gpuinfra.graph.views import decoded
from gpuinfra.plan.registry import PROMOTE_ROLE_SUFFIX
from gpuinfra.policy.facts import FactsError, StackFacts, current, require
from gpuinfra.policy.rules.dataprep import dataprep_grant_allowed
from gpuinfra.policy.rules.declare import MANDATORY, ReportViolation, resource_policy, stack_policy
from gpuinfra.policy.rules.paths import route_problems
from gpuinfra.policy.rules.values import (
    StackView,
    account_of_arn,
    assumed_roles,
    carries_labels,
    default_tags,
    effective_tags,
    get,
    listed,
    own_tags,
    provider_account_ids,
    view,
    workload_label,
)
from gpuinfra.preflight.access.reach import Grantee, Reach, reach
from gpuinfra.preflight.access.statements import Statement, UnreadablePolicy, parse
from gpuinfra.spec import with_article

PEERINGS = (
    tokens.VPC_PEERING,
    tokens.VPC_PEERING_ACCEPTER,
)
TGW_ATTACHMENTS = (
    tokens.TGW_VPC_ATTACHMENT,
    tokens.TGW_VPC_ATTACHMENT_ACCEPTER,
    tokens.TGW_PEERING_ATTACHMENT,
)
SG_RULES = (
    tokens.SG_RULE,
    tokens.SG_INGRESS_RULE,
    tokens.SG_EGRESS_RULE,
)
RESOURCE_POLICIES = (
    tokens.BUCKET_POLICY,
    tokens.BUCKET,
    tokens.BUCKET_V2,
    tokens.KMS_KEY,
    "aws:kms/keyPolicy:KeyPolicy",
    tokens.SECRETS_MANAGER_SECRET,
    "aws:secretsmanager/secretPolicy:SecretPolicy",
    "aws:sqs/queue:Queue",
    "aws:sqs/queuePolicy:QueuePolicy",
    "aws:sns/topicPolicy:TopicPolicy",
    "aws:ecr/repositoryPolicy:RepositoryPolicy",
    "aws:ecr/registryPolicy:RegistryPolicy",
    "aws:sns/topic:Topic",
    "aws:s3/accessPoint:AccessPoint",
    "aws:s3control/accessPointPolicy:AccessPointPolicy",
    "aws:glacier/vault:Vault",
)
"""Resources whose `policy` is a resource-based policy: who, in which account, may use them."""
SERVICE_OF = {
    **dict.fromkeys((tokens.BUCKET_POLICY, tokens.BUCKET, tokens.BUCKET_V2, "aws:s3/accessPoint:AccessPoint"), "s3"),
    "aws:s3control/accessPointPolicy:AccessPointPolicy": "s3",
    **dict.fromkeys((tokens.KMS_KEY, "aws:kms/keyPolicy:KeyPolicy"), "kms"),
    **dict.fromkeys((tokens.SECRETS_MANAGER_SECRET, "aws:secretsmanager/secretPolicy:SecretPolicy"), "secretsmanager"),
    **dict.fromkeys(("aws:sqs/queue:Queue", "aws:sqs/queuePolicy:QueuePolicy"), "sqs"),
    **dict.fromkeys(("aws:sns/topic:Topic", "aws:sns/topicPolicy:TopicPolicy"), "sns"),
    **dict.fromkeys(("aws:ecr/repositoryPolicy:RepositoryPolicy", "aws:ecr/registryPolicy:RegistryPolicy"), "ecr"),
    "aws:glacier/vault:Vault": "glacier",
    tokens.IAM_ROLE: "sts",
    tokens.LOG_RESOURCE_POLICY: "logs",
    "aws:cloudwatch/logDestinationPolicy:LogDestinationPolicy": "logs",
}
"""The service whose actions a resource policy can grant: AWS asks it only of requests on its own resource."""
KEY_POLICIES = (tokens.KMS_KEY, "aws:kms/keyPolicy:KeyPolicy")
LAMBDA_PERMISSION = "aws:lambda/permission:Permission"
SNAPSHOT_PERMISSION = "aws:ec2/snapshotCreateVolumePermission:SnapshotCreateVolumePermission"
REGISTRY_WRITE = frozenset({"s3:PutObject", "s3:AbortMultipartUpload"})
REGISTRY_READ = frozenset({"s3:GetObject"})
REGISTRY_LIST = frozenset({"s3:ListBucket"})
KMS_WRITE = frozenset({"kms:Encrypt", "kms:GenerateDataKey", "kms:GenerateDataKey*", "kms:Decrypt", "kms:DescribeKey"})
KMS_READ = frozenset({"kms:Decrypt", "kms:DescribeKey"})


# ---- tags and workloads -------------------------------------------------------------------------
@resource_policy(
    "separation-workload-tag",
    "Every AWS resource carries its stack's workload tag (provider default tags, or its own; Auto Scaling "
    "groups carry it themselves, propagated at launch); every Kubernetes object the "
    "gpuinfra.io/workload label.",
    MANDATORY,
    type_prefix=("aws:", "aws-native:", "kubernetes:"),
)
def workload_tag(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args)
    if args.resource_type.startswith("kubernetes:"):
        found = workload_label(args.props) if carries_labels(args.resource_type) else facts.workload
        if found != facts.workload:
            have = f"has {tokens.WORKLOAD_LABEL}={found}" if found else f"has no {tokens.WORKLOAD_LABEL} label"
            report_violation(
                f"{args.name} {have} in {facts.workload} stack {facts.stack}; label it "
                f"{tokens.WORKLOAD_LABEL}: {facts.workload}"
            )
        return
    provider_props = args.provider.props if args.provider is not None else None
    found = effective_tags(args.resource_type, args.props, provider_props).get(tokens.WORKLOAD_TAG)
    if found == facts.workload:
        return
    where = (
        (
            "Auto Scaling groups take no provider default tags: add {key: workload, value: "
            f"{facts.workload}, propagateAtLaunch: true}}"
        )
        if args.resource_type == tokens.ASG
        else "set it in the provider's default tags"
    )
    have = f"has workload={found}" if found else "has no workload tag"
    report_violation(f"{args.name} {have} in {facts.workload} stack {facts.stack}; {where}")


@stack_policy(
    "separation-facts-readable",
    "A gpuinfra stack's facts (its spec and organization file) can be read: without them no separation, quota or "
    "budget policy can judge it, so the pack fails closed.",
    MANDATORY,
)
def facts_readable(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    try:
        facts = current()
    except FactsError as exc:
        report_violation(
            f"{exc}. Separation, quotas and budget cannot be checked without these facts, so the stack is "
            "refused: fix the stack's gpuinfra config or its gpuinfra:org path"
        )
        return
    if facts is None:
        args.not_applicable(
            "not a gpuinfra stack: its config holds no gpuinfra:training, :inference, :registry or :finetune"
        )


REUSED_COMPONENTS = {("dataprep", "training")}
"""(workload, component module): a dataprep stack builds its PCS cluster with training's PcsCluster constructor;
the component creates nothing itself, and its children carry the dataprep stack's workload tag."""


@stack_policy(
    "separation-one-workload",
    "A stack holds one workload: every workload tag and every gpuinfra component in it is the stack's.",
    MANDATORY,
)
def one_workload(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args)
    stack = view(args)
    seen: dict[str, list[str]] = {}
    for resource in stack.resources:
        values: list[str] = []
        if resource.resource_type in (tokens.AWS_PROVIDER, tokens.AWS_NATIVE_PROVIDER):
            values.append(default_tags(resource.props).get(tokens.WORKLOAD_TAG, ""))
        elif resource.resource_type.startswith(("aws:", "aws-native:")):
            values.append(own_tags(resource.resource_type, resource.props).get(tokens.WORKLOAD_TAG, ""))
        elif carries_labels(resource.resource_type):
            values.append(workload_label(resource.props) or "")
        elif resource.resource_type.startswith("gpuinfra:"):
            module = resource.resource_type.split(":")[1]
            if (facts.workload, module) not in REUSED_COMPONENTS:
                values.append(module)
        for value in values:
            if value and value != facts.workload:
                seen.setdefault(value, []).append(resource.name)
    for workload, where in sorted(seen.items()):
        report_violation(
            f"{facts.workload} stack {facts.stack} also holds {workload}: {', '.join(sorted(where)[:5])}"
            + (f" and {len(where) - 5} more" if len(where) > 5 else "")
            + f"; move them to {with_article(workload)} stack in {with_article(workload)} account"
        )


# ---- accounts -----------------------------------------------------------------------------------
@stack_policy(
    "separation-accounts",
    "Every AWS provider assumes a role in, and is pinned to, an account of the stack's purpose; no account "
    "serves both training and inference.",
    MANDATORY,
)
def accounts(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args)
    for provider in view(args).of_type(tokens.AWS_PROVIDER, tokens.AWS_NATIVE_PROVIDER):
        for problem in provider_problems(facts, provider.name, provider.props):
            report_violation(problem, provider.urn)


def provider_problems(facts: StackFacts, name: str, props: Mapping[str, Any]) -> list[str]:
    roles = assumed_roles(props)
    pinned = provider_account_ids(props) if get(props, "allowedAccountIds") else []
    if not roles:
        return [
            f"provider {name} assumes no role: it deploys with whatever credentials run `pulumi up`; assume the "
            f"{facts.workload} account's role"
        ]
    problems = []
    if not pinned:
        problems.append(f"provider {name} is not pinned with allowedAccountIds; pin it to the account it assumes into")
    for account_id in sorted({account_of_arn(r) for r in roles} | set(pinned)):
        known = facts.account_with_id(account_id)
        if known is None:
            problems.append(
                f"provider {name} deploys into account {account_id}, which the organization file does not "
                "list; only accounts with a purpose may be used"
            )
        elif not known[1].serves(facts.workload):
            problems.append(
                f"provider {name} deploys into {known[0]} ({account_id}), {with_article(known[1].purpose)} account, "
                f"but {facts.stack} is {with_article(facts.workload)} stack: training and inference never share an "
                f"account; use {with_article(facts.workload)} account"
            )
    if pinned and roles and {account_of_arn(r) for r in roles} != set(pinned):
        problems.append(
            f"provider {name} assumes a role in {sorted({account_of_arn(r) for r in roles})} but is pinned "
            f"to {sorted(pinned)}"
        )
    return problems


# ---- networks -----------------------------------------------------------------------------------
@stack_policy(
    "separation-network",
    "No VPC peering, transit gateway attachment, route to a target the stack does not create, or security-group "
    "rule (a range, prefix list or group) connects this stack's networks to another workload's.",
    MANDATORY,
    config={
        "allowed_transit_gateways": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "Transit gateways attachments may use (same workload).",
        },
        "allowed_cidrs": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "Private ranges outside the stack's VPCs that rules may reach "
            "(e.g. an on-premises VPN of the same workload).",
        },
        "allowed_prefix_lists": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "Prefix lists (pl-...) security-group rules may name: an AWS service's, or this "
            "workload's own ranges.",
        },
    },
)
def network(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args)
    if facts.workload == "registry":
        args.not_applicable("the registry stack has no network")
    stack = view(args)
    config = args.get_config()
    own_account = facts.account.id
    for peering in stack.of_type(*PEERINGS):
        peer = str(get(peering.props, "peerOwnerId", default=own_account))
        known = facts.account_with_id(peer)
        if peering.resource_type.endswith("Accepter"):
            report_violation(
                f"{peering.name} accepts a peering requested from outside this stack; {with_article(facts.workload)} "
                "network takes no peering it cannot see the other side of",
                peering.urn,
            )
        elif known is None or not known[1].serves(facts.workload):
            purpose = (
                f"{with_article(known[1].purpose)} account"
                if known
                else "an account the organization file does not list"
            )
            report_violation(
                f"{peering.name} peers with a VPC in {peer} ({purpose}); {facts.workload} networks "
                f"connect to nothing but {facts.workload} networks",
                peering.urn,
            )
    allowed_tgws = set(config.get("allowed_transit_gateways", []))
    for resource, problem in route_problems(stack, allowed_tgws):
        report_violation(f"{resource.name}: {problem}", resource.urn)
    for attachment in stack.of_type(*TGW_ATTACHMENTS):
        tgw = get(attachment.props, "transitGatewayId", default=get(attachment.props, "peerTransitGatewayId"))
        if tgw not in allowed_tgws:
            report_violation(
                f"{attachment.name} attaches to transit gateway {tgw}, which may route to another "
                "workload's networks; list it in allowed_transit_gateways if it only carries "
                f"{facts.workload} traffic",
                attachment.urn,
            )
    own = _own_networks(stack.of_type(tokens.VPC), stack.of_type(tokens.VPC_CIDR_ASSOCIATION)) + _networks(
        config.get("allowed_cidrs", [])
    )
    prefix_lists = set(config.get("allowed_prefix_lists", []))
    for group in stack.of_type(tokens.SECURITY_GROUP):
        for direction in ("ingress", "egress"):
            for rule in get(group.props, direction, default=[]):
                for problem in _rule_problems(rule, own, facts, prefix_lists):
                    report_violation(f"{group.name} {direction}: {problem}", group.urn)
    for rule in stack.of_type(*SG_RULES):
        for problem in _rule_problems(rule.props, own, facts, prefix_lists):
            report_violation(f"{rule.name}: {problem}", rule.urn)


def _networks(cidrs: Any) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    out = []
    for cidr in listed(cidrs):
        try:
            out.append(ipaddress.ip_network(str(cidr), strict=False))
        except ValueError:
            continue
    return out


def _own_networks(vpcs: list[PolicyResource], extra: list[PolicyResource]) -> list[Any]:
    return _networks(
        [get(v.props, "cidrBlock") for v in vpcs if get(v.props, "cidrBlock")]
        + [get(a.props, "cidrBlock") for a in extra if get(a.props, "cidrBlock")]
    )


CIDR_PEERS = ("cidrBlocks", "cidrIpv4", "ipv6CidrBlocks", "cidrIpv6")
PREFIX_LIST_PEERS = ("prefixListIds", "prefixListId")
GROUP_PEERS = ("securityGroups", "sourceSecurityGroupId", "referencedSecurityGroupId")
SELF_PEER = "self"
"""Every peer a security-group rule can name (pulumi-aws `aws.ec2.SecurityGroup` ingress/egress,
`aws.ec2.SecurityGroupRule`, `aws.vpc.SecurityGroupIngressRule`/`EgressRule`; tests/policies/test_reachability.py
holds these against the provider's arguments): ranges, prefix lists, other groups, the group itself."""
VPC_RANGES = tuple(
    ipaddress.ip_network(c) for c in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "198.19.0.0/16")
)
"""The ranges a VPC's IPv4 CIDR blocks may come from besides public ones (Amazon VPC User Guide, "VPC CIDR
blocks": RFC 1918, the shared address space 100.64.0.0/10, 198.19.0.0/16), which Python's is_private does not all
count: any of them may be another workload's VPC."""


def _private(cidr: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    """A range another network may hold privately: a VPC's (VPC_RANGES) or any other non-public range."""
    return cidr.is_private or any(cidr.version == r.version and cidr.overlaps(r) for r in VPC_RANGES)  # type: ignore[arg-type]


def _rule_problems(rule: Mapping[str, Any], own: list[Any], facts: StackFacts, prefix_lists: set[str]) -> list[str]:
    problems = []
    for cidr in _networks([c for field in CIDR_PEERS for c in listed(get(rule, field))]):
        if (
            _private(cidr)
            and cidr.prefixlen > 0
            and not any(cidr.version == n.version and cidr.subnet_of(n) for n in own)
        ):  # type: ignore[arg-type]
            problems.append(
                f"{cidr} is a private range outside this stack's VPCs; it may be another workload's "
                "network (list it in allowed_cidrs if it is this workload's)"
            )
    for prefix_list in (p for field in PREFIX_LIST_PEERS for p in listed(get(rule, field))):
        if str(prefix_list) not in prefix_lists:
            problems.append(
                f"names prefix list {prefix_list}, whose ranges the pack cannot see: it may hold another workload's "
                "networks (list it in separation-network's allowed_prefix_lists if it is an AWS service's or this "
                "workload's)"
            )
    for ref in (g for field in GROUP_PEERS for g in listed(get(rule, field))):
        account = str(ref).split("/")[0] if "/" in str(ref) else ""
        known = facts.account_with_id(account) if account else None
        if account and account != facts.account.id and (known is None or not known[1].serves(facts.workload)):
            problems.append(
                f"refers to security group {ref} in account {account}, not {with_article(facts.workload)} account"
            )
    return problems


# ---- grants -------------------------------------------------------------------------------------
@stack_policy(
    "separation-cross-account-grants",
    "The only cross-account grants (bucket, key, secret, queue, topic and repository policies, trust policies) "
    "are the model registry's: training accounts write its upload prefix and may assume its promote role, "
    "inference accounts read its model prefix.",
    MANDATORY,
)
def cross_account_grants(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args)
    stack = view(args)
    for resource in stack.of_type(*RESOURCE_POLICIES, *POLICY_FIELDS):
        field = POLICY_FIELDS.get(resource.resource_type, "policy")
        for problem in grant_problems(facts, resource, get(resource.props, field)):
            report_violation(f"{resource.name}: {problem}", resource.urn)
    for problem, resource in _shares(facts, stack):
        report_violation(f"{resource.name}: {problem}", resource.urn)
    for replication in stack.of_type(tokens.BUCKET_REPLICATION):
        for rule in get(replication.props, "rules", default=[]):
            account = get(rule, "destination", "account")
            if account and str(account) != facts.account.id:
                report_violation(
                    f"{replication.name}: replicates to account {account}; registry replicas stay in the "
                    "registry account",
                    replication.urn,
                )


POLICY_FIELDS = {
    tokens.IAM_ROLE: "assumeRolePolicy",
    tokens.LOG_RESOURCE_POLICY: "policyDocument",
    "aws:cloudwatch/logDestinationPolicy:LogDestinationPolicy": "accessPolicy",
}
"""Resources whose grant document is not their `policy` field."""


def grant_problems(facts: StackFacts, resource: PolicyResource, document: Any) -> list[str]:
    """Why a resource's policy document lets another account in other than by the registry's grants ([] when it
    does not): each Allow statement's grantees asked of the access evaluator (gpuinfra.preflight.access.reach),
    the way the flows are judged. A document or a grant it cannot judge fails closed."""
    if document is None or document == "":
        return []
    if document == SECRET:
        return ["cannot judge its policy: the document is a secret the pack is not shown; the pack fails closed"]
    try:
        parsed = parse(plain(decoded(document)), resource.name)
    except UnreadablePolicy as exc:
        return [f"cannot judge its policy ({exc}); the pack fails closed: write a document IAM reads"]
    own = facts.account.id
    service = SERVICE_OF.get(resource.resource_type, "")
    problems = []
    found = reach(
        parsed, own, facts.accounts_by_id, (service,) if service else (), resource.resource_type in KEY_POLICIES
    )
    for r in found:
        problem = _reach_problem(facts, resource, r)
        if problem and problem not in problems:
            problems.append(problem)
    return problems


def _reach_problem(facts: StackFacts, resource: PolicyResource, r: Reach) -> str | None:
    statement, grantee, decision = r.statement, r.grantee, r.decision
    sid = f"statement {statement.sid or '(no Sid)'}"
    if decision.outcome == "deny":
        return None
    raw = _raw(statement)
    known = facts.account_with_id(grantee.account) if grantee.account else None
    if not grantee.anyone and _allowed_exception(facts, resource, raw, grantee, known):
        return None
    if grantee.anyone:
        who = f"anyone ({grantee.how})"
    elif known:
        who = f"{known[0]} ({grantee.account}, {known[1].purpose})"
    elif grantee.principal.form == "canonical":
        who = grantee.label
    else:
        who = f"account {grantee.label}"
    if decision.outcome == "unknown":
        return (
            f"{sid}: cannot judge whether it grants {who}: {decision.reason}; the pack fails closed (a condition "
            "it cannot decide, an operator it does not evaluate, or a principal naming no account): name the "
            "accounts in Principal, or pin them with aws:PrincipalAccount"
        )
    if grantee.anyone:
        return f"{sid} grants to {who}"
    return (
        f"{sid} grants {who} {_actions_text(statement)}; only the registry may grant other accounts, and only its "
        "upload (write) and model (read) prefixes"
    )


def _allowed_exception(
    facts: StackFacts, resource: PolicyResource, raw: Mapping[str, Any], grantee: Grantee, known: Any
) -> bool:
    if known is not None and registry_grant_allowed(facts, resource, raw, known[1].purpose):
        return True
    if known is not None and dataprep_grant_allowed(facts, resource, raw, grantee.account, known[1].purpose):
        return True
    return elb_log_delivery(facts.account.id, resource, raw, grantee.account)


def _raw(statement: Statement) -> dict[str, Any]:
    """The statement's elements as the document spells them (what the registry's and ELB's shapes compare)."""
    out: dict[str, Any] = {"Sid": statement.sid, "Effect": statement.effect, "Condition": statement.condition}
    for name, value in (
        ("Action", statement.actions),
        ("NotAction", statement.not_actions),
        ("Resource", statement.resources),
        ("NotResource", statement.not_resources),
    ):
        if value:
            out[name] = list(value)
    if statement.principals is not None and statement.principals.negated:
        out["NotPrincipal"] = True
    return out


def _actions_text(statement: Statement) -> str:
    if statement.not_actions:
        return f"every action but {', '.join(sorted(statement.not_actions))} (NotAction)"
    return ", ".join(sorted(statement.actions))


def _shares(facts: StackFacts, stack: StackView) -> list[tuple[str, PolicyResource]]:
    """Grants that are not policy documents: a Lambda permission's principal (an account id, '*', or a service
    whose calls another account may cause unless sourceAccount pins it: Lambda API, AddPermission), and a snapshot's
    create-volume permission (EC2 API, ModifySnapshotAttribute: the account it shares the snapshot with)."""
    own = facts.account.id
    out = []
    for permission in stack.of_type(LAMBDA_PERMISSION):
        principal = str(get(permission.props, "principal") or "")
        source = str(get(permission.props, "sourceAccount") or "")
        account = (
            principal if principal.isdigit() else account_of_arn(principal) if principal.startswith("arn:") else ""
        )
        if principal == "*":
            out.append(("lets anyone invoke the function (principal *)", permission))
        elif account and account != own:
            out.append(
                (f"lets account {account} invoke the function; only the registry may grant other accounts", permission)
            )
        elif not account and source and source != own:
            out.append((f"lets {principal} invoke the function on behalf of account {source}", permission))
    for share in stack.of_type(SNAPSHOT_PERMISSION):
        account = str(get(share.props, "accountId") or "")
        if account != own:
            out.append(
                (f"shares its snapshot with account {account or '(unknown)'}: its data leaves the account", share)
            )
    return out


def elb_log_delivery(own: str, resource: PolicyResource, statement: Mapping[str, Any], account: str) -> bool:
    """An access-log bucket's grant to the ELB log-delivery account of its region: s3:PutObject only, and only
    under `AWSLogs/<this account>/` (ELB user guide, "Enable access logs", step 2; gpuinfra.graph.log_delivery).
    The account is the bucket's cloud's `log_delivery` part's; a cloud that registers none allows no such grant."""
    region = StackView.region_of(resource)
    facts = log_delivery(resource.resource_type) if resource.resource_type == tokens.BUCKET_POLICY else None
    if facts is None or not region or facts.account(region) != account:
        return False
    resources = [str(r) for r in listed(statement.get("Resource"))]
    return (
        {str(a) for a in listed(statement.get("Action"))} == {"s3:PutObject"}
        and bool(resources)
        and all(
            r.startswith("arn:aws:s3:::") and f"/AWSLogs/{own}/" in r and "*" not in r.split("/AWSLogs/")[0]
            for r in resources
        )
    )


def registry_grant_allowed(
    facts: StackFacts, resource: PolicyResource, statement: Mapping[str, Any], purpose: str
) -> bool:
    """The registry's grants: a training account may put objects under the upload prefix and assume the promote
    role, an inference account may get objects under the model prefix and list it, on the registry bucket or a
    replica; a training account may also read the model prefix of the registry bucket itself (a fine-tuning run's
    released base: reading shares nothing a run writes); each may use the registry key to match."""
    registry = facts.org.registry
    if facts.workload != "registry" or registry is None or purpose not in ("training", "inference"):
        return False
    if any(k in statement for k in ("NotAction", "NotResource", "NotPrincipal")):
        return False  # everything but: never the registry's shape (its grants name what they allow)
    actions = {str(a) for a in listed(statement.get("Action"))}
    if resource.resource_type == tokens.IAM_ROLE:
        # The promote role (templates/registry/promote.sh.j2): a training account may assume it to turn its verified
        # upload into a release; the role itself reads uploads and writes the model prefix in this account only.
        return purpose == "training" and actions == {"sts:AssumeRole"} and resource.name.endswith(PROMOTE_ROLE_SUFFIX)
    if resource.resource_type == tokens.KMS_KEY:
        return actions <= (KMS_WRITE if purpose == "training" else KMS_READ)
    if resource.resource_type != tokens.BUCKET_POLICY:
        return False
    buckets = {registry.bucket, *(registry.replica_bucket(r) for r in registry.replica_regions)}
    resources = [str(r) for r in listed(statement.get("Resource"))]
    if purpose == "training" and actions <= REGISTRY_WRITE:
        prefix = registry.upload_prefix
        return bool(resources) and all(any(r == f"arn:aws:s3:::{b}/{prefix}*" for b in buckets) for r in resources)
    if purpose == "training":
        buckets = {registry.bucket}  # replicas serve inference regions only
    prefix = registry.model_prefix
    if actions <= REGISTRY_READ:
        return bool(resources) and all(any(r == f"arn:aws:s3:::{b}/{prefix}*" for b in buckets) for r in resources)
    if actions <= REGISTRY_LIST:
        condition = statement.get("Condition") or {}
        prefixes = [str(p) for op in condition.values() if isinstance(op, Mapping) for p in listed(op.get("s3:prefix"))]
        return (
            bool(resources)
            and all(any(r == f"arn:aws:s3:::{b}" for b in buckets) for r in resources)
            and bool(prefixes)
            and all(p.startswith(prefix) for p in prefixes)
        )
    return False


__all__ = [
    "accounts",
    "cross_account_grants",
    "grant_problems",
    "network",
    "one_workload",
    "provider_problems",
    "registry_grant_allowed",
    "workload_tag",
]
