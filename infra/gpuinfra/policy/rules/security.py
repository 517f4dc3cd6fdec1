"""Security guardrails every stack keeps, whatever its workload: IMDSv2, encryption at rest (EBS, S3,
FSx), private buckets, no internet ingress except to a load balancer on 80/443, no EKS API open to the
internet, HTTPS listeners, and no IAM statement allowing every action on every resource."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from pulumi_policy import PolicyResource, ResourceValidationArgs, StackValidationArgs

from gpuinfra.graph import tokens, views
from gpuinfra.graph.views import allows_everything
from gpuinfra.policy.rules.declare import MANDATORY, ReportViolation, resource_policy, stack_policy
from gpuinfra.policy.rules.values import StackView, as_int, get, listed, num, statements, truthy, view

BUCKETS = (tokens.BUCKET, tokens.BUCKET_V2)
SSE_CONFIGS = (
    tokens.BUCKET_SSE,
    tokens.BUCKET_SSE_V2,
)
PAB_FLAGS = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
LOAD_BALANCERS = (tokens.LOAD_BALANCER, tokens.ALB_LOAD_BALANCER)
LISTENERS = (tokens.LISTENER, tokens.ALB_LISTENER)
IAM_POLICY_DOCS = (
    tokens.IAM_ROLE_POLICY,
    tokens.IAM_POLICY,
    tokens.IAM_USER_POLICY,
    tokens.IAM_GROUP_POLICY,
)
IAM_ATTACHMENTS = (
    tokens.IAM_ROLE_POLICY_ATTACHMENT,
    tokens.IAM_POLICY_ATTACHMENT,
    tokens.IAM_USER_POLICY_ATTACHMENT,
    tokens.IAM_GROUP_POLICY_ATTACHMENT,
)
ADMIN_POLICY = "arn:aws:iam::aws:policy/AdministratorAccess"
OPEN_PORTS = frozenset({80, 443})
K8S_SERVICE = tokens.K8S_SERVICE
LB_ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-"


# ---- instance metadata -------------------------------------------------------------------------
@resource_policy(
    "security-imdsv2",
    "Instances require IMDSv2 session tokens (metadataOptions.httpTokens = required).",
    MANDATORY,
    types=(tokens.LAUNCH_TEMPLATE, tokens.INSTANCE),
)
def imdsv2(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    options = get(args.props, "metadataOptions", default={})
    if get(options, "httpEndpoint") == "disabled":
        return
    http_tokens = get(options, "httpTokens", default="optional (not set)")
    if http_tokens != "required":
        report_violation(
            f"{args.name}: metadataOptions.httpTokens is {http_tokens!r}; IMDSv1 lets any SSRF read the "
            "instance role's credentials. Set httpTokens: required."
        )


# ---- encryption at rest ------------------------------------------------------------------------
@resource_policy(
    "security-ebs-encrypted",
    "Every EBS volume is encrypted at rest.",
    MANDATORY,
    types=(tokens.LAUNCH_TEMPLATE, tokens.INSTANCE, tokens.EBS_VOLUME),
)
def ebs_encrypted(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    props = args.props
    if args.resource_type == tokens.EBS_VOLUME:
        if not truthy(get(props, "encrypted")):
            report_violation(f"{args.name}: the volume is not encrypted; set encrypted: true")
        return
    if args.resource_type == tokens.INSTANCE:
        devices = [("rootBlockDevice", get(props, "rootBlockDevice"))]
        devices += [(f"ebsBlockDevices[{i}]", d) for i, d in enumerate(get(props, "ebsBlockDevices", default=[]))]
        if devices[0][1] is None:
            report_violation(
                f"{args.name}: no rootBlockDevice, so the root volume's encryption is left to the AMI; "
                "set rootBlockDevice.encrypted: true"
            )
        for where, device in devices:
            if device is not None and not truthy(get(device, "encrypted")):
                report_violation(f"{args.name}: {where} is not encrypted; set encrypted: true")
        return
    mappings = [m for m in get(props, "blockDeviceMappings", default=[]) if get(m, "ebs") is not None]
    if not mappings:
        report_violation(
            f"{args.name}: no EBS block device mapping, so the root volume's encryption is left to the "
            "AMI; map the root device with ebs.encrypted: true"
        )
    for mapping in mappings:
        if not truthy(get(mapping, "ebs", "encrypted")):
            report_violation(
                f"{args.name}: block device {get(mapping, 'deviceName', default='?')} is not encrypted; "
                "set ebs.encrypted: true"
            )


@stack_policy("security-s3-encrypted", "Every S3 bucket has default server-side encryption configured.", MANDATORY)
def s3_encrypted(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    stack = view(args)
    for bucket in stack.of_type(*BUCKETS):
        configs = stack.dependents_of(bucket, *SSE_CONFIGS)
        algorithms = [
            get(rule, "applyServerSideEncryptionByDefault", "sseAlgorithm")
            for config in configs
            for rule in get(config.props, "rules", default=[])
        ]
        inline = get(
            bucket.props,
            "serverSideEncryptionConfiguration",
            "rule",
            "applyServerSideEncryptionByDefault",
            "sseAlgorithm",
        )
        if not any(algorithms) and not inline:
            report_violation(
                f"bucket {bucket.name} has no server-side encryption configuration; add a "
                "BucketServerSideEncryptionConfiguration with sseAlgorithm aws:kms",
                bucket.urn,
            )


@resource_policy(
    "security-fsx-encrypted",
    "FSx for Lustre file systems that keep data (PERSISTENT) are encrypted with a customer-managed KMS key.",
    MANDATORY,
    types=(tokens.LUSTRE,),
)
def fsx_encrypted(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    deployment = str(get(args.props, "deploymentType", default="SCRATCH_1"))
    if deployment.startswith("PERSISTENT") and not get(args.props, "kmsKeyId"):
        report_violation(
            f"{args.name}: {deployment} without kmsKeyId is encrypted only with the AWS-managed key, "
            "which no key policy of ours governs; set kmsKeyId to the stack's key"
        )


# ---- public access -----------------------------------------------------------------------------
@stack_policy(
    "security-s3-public-access-blocked",
    "Every S3 bucket blocks public access (all four BucketPublicAccessBlock settings).",
    MANDATORY,
)
def s3_public_access_blocked(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    stack = view(args)
    # An account-level block covers the buckets of the account it is set in (its accountId, else its
    # provider's), no other (S3 UG, "Blocking public access to your Amazon S3 storage").
    blocked_accounts = {
        str(get(r.props, "accountId") or stack.account_of(r))
        for r in stack.of_type(tokens.ACCOUNT_PUBLIC_ACCESS_BLOCK)
        if all(truthy(get(r.props, f)) for f in PAB_FLAGS)
    }
    for bucket in stack.of_type(*BUCKETS):
        if str(stack.account_of(bucket)) in blocked_accounts:
            continue
        blocks = stack.dependents_of(bucket, tokens.BUCKET_PUBLIC_ACCESS_BLOCK)
        if not blocks:
            report_violation(
                f"bucket {bucket.name} has no BucketPublicAccessBlock; add one with all of {', '.join(PAB_FLAGS)} true",
                bucket.urn,
            )
            continue
        off = sorted({f for b in blocks for f in PAB_FLAGS if not truthy(get(b.props, f))})
        if off:
            report_violation(
                f"bucket {bucket.name}: public access block leaves {', '.join(off)} off; set them true", bucket.urn
            )


def _open_to_world(rule: Mapping[str, Any]) -> bool:
    cidrs = listed(get(rule, "cidrBlocks")) + listed(get(rule, "cidrIpv4"))
    cidrs6 = listed(get(rule, "ipv6CidrBlocks")) + listed(get(rule, "cidrIpv6"))
    return any(_is_world(c) for c in cidrs + cidrs6)


def _is_world(cidr: str) -> bool:
    try:
        return ipaddress.ip_network(str(cidr), strict=False).prefixlen == 0
    except ValueError:
        return False


def _ports(rule: Mapping[str, Any]) -> tuple[str, int, int]:
    protocol = str(get(rule, "protocol", default=get(rule, "ipProtocol", default="-1"))).lower()
    return protocol, as_int(get(rule, "fromPort"), -1), as_int(get(rule, "toPort"), -1)


def _web_only(rule: Mapping[str, Any]) -> bool:
    protocol, low, high = _ports(rule)
    return protocol in ("tcp", "6") and low == high and low in OPEN_PORTS


def _describe(rule: Mapping[str, Any]) -> str:
    protocol, low, high = _ports(rule)
    if protocol in ("-1", "all"):
        return "all traffic"
    return f"{protocol} {low}" if low == high else f"{protocol} {low}-{high}"


@stack_policy(
    "security-open-ingress",
    "No ingress from the whole internet (0.0.0.0/0, ::/0) except to a load balancer on 80 or 443.",
    MANDATORY,
)
def open_ingress(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    stack = view(args)
    for group in stack.of_type(tokens.SECURITY_GROUP):
        for rule in get(group.props, "ingress", default=[]):
            _judge_ingress(stack, group, rule, group.name, report_violation)
    for rule_resource in stack.of_type(tokens.SG_RULE, tokens.SG_INGRESS_RULE):
        if rule_resource.resource_type == tokens.SG_RULE and get(rule_resource.props, "type") != "ingress":
            continue
        targets: list[PolicyResource | None] = [*stack.dependencies_of(rule_resource, tokens.SECURITY_GROUP)] or [None]
        for target in targets:
            _judge_ingress(stack, target, rule_resource.props, rule_resource.name, report_violation, rule_resource.urn)
    for service in stack.of_type(K8S_SERVICE):
        if not _internet_facing(service.props):
            continue
        ports = sorted({as_int(get(p, "port")) for p in get(service.props, "spec", "ports", default=[])} - OPEN_PORTS)
        if ports:
            report_violation(
                f"{service.name}: internet-facing load balancer on port(s) {', '.join(map(str, ports))}; "
                "only 80 and 443 may face the internet",
                service.urn,
            )


@resource_policy(
    "security-eks-endpoint",
    "An EKS API endpoint is private, or public only to listed CIDR blocks whose union is not the whole internet "
    "(EKS API: endpointPublicAccess defaults to true and publicAccessCidrs to 0.0.0.0/0).",
    MANDATORY,
    types=(tokens.EKS_CLUSTER,),
)
def eks_endpoint(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    vpc = get(args.props, "vpcConfig", default={}) or {}
    if get(vpc, "endpointPublicAccess") is False:
        return
    cidrs = [str(c) for c in listed(get(vpc, "publicAccessCidrs"))]
    world = [c for c in cidrs if _is_world(c)] or (["0.0.0.0/0 (the default)"] if not cidrs else [])
    if not world and covers_everything(cidrs):
        world = [f"{' + '.join(cidrs)} (together every IPv4 address)"]
    if world:
        report_violation(
            f"{args.name}: the Kubernetes API endpoint is public to {', '.join(world)}; set "
            "endpointPublicAccess false (deploy from the VPC) or publicAccessCidrs to the deploy runners' "
            "addresses (spec scheduler.api_access.public_cidrs)"
        )


def covers_everything(cidrs: list[str]) -> bool:
    """The blocks together cover the whole IPv4 address space (0.0.0.0/1 + 128.0.0.0/1 is as open as
    0.0.0.0/0): judged by their union, collapsed with `ipaddress.collapse_addresses`."""
    networks = []
    for cidr in cidrs:
        try:
            network = ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            continue
        if isinstance(network, ipaddress.IPv4Network):
            networks.append(network)
    return list(ipaddress.collapse_addresses(networks)) == [ipaddress.IPv4Network("0.0.0.0/0")]


def _annotation(props: Mapping[str, Any], name: str) -> Any:
    return get(props, "metadata", "annotations", LB_ANNOTATION + name)


def _internet_facing(props: Mapping[str, Any]) -> bool:
    return views.internet_facing_service(props)


def _judge_ingress(
    stack: StackView,
    group: Any,
    rule: Mapping[str, Any],
    where: str,
    report_violation: ReportViolation,
    urn: str | None = None,
) -> None:
    if not _open_to_world(rule):
        return
    balancers = stack.dependents_of(group, *LOAD_BALANCERS) if group is not None else []
    if balancers and _web_only(rule):
        return
    target = "a load balancer" if balancers else "a group no load balancer uses"
    report_violation(
        f"{where}: {_describe(rule)} open to the internet on {target}; only a load balancer may take "
        "internet traffic, and only on 80 or 443",
        urn or (group.urn if group is not None else None),
    )


# ---- listeners ---------------------------------------------------------------------------------
@resource_policy(
    "security-https-listeners",
    "Load balancer listeners serve HTTPS/TLS with a certificate; plain HTTP only redirects to HTTPS.",
    MANDATORY,
    types=(*LISTENERS, K8S_SERVICE),
)
def https_listeners(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type == K8S_SERVICE:
        _service_tls(args, report_violation)
        return
    protocol = str(get(args.props, "protocol", default="")).upper()
    port = num(get(args.props, "port", default="?"))
    if protocol in ("HTTPS", "TLS"):
        if not get(args.props, "certificateArn"):
            report_violation(f"{args.name}: {protocol} listener on port {port} has no certificateArn")
        return
    if protocol == "HTTP":
        actions = get(args.props, "defaultActions", default=[])
        redirects = [
            a
            for a in actions
            if get(a, "type") == "redirect" and str(get(a, "redirect", "protocol", default="")).upper() == "HTTPS"
        ]
        if not actions or len(redirects) != len(actions):
            report_violation(
                f"{args.name}: HTTP listener on port {port} serves traffic in clear text; redirect it to "
                "HTTPS (defaultActions: redirect, protocol HTTPS, statusCode HTTP_301)"
            )
        return
    report_violation(
        f"{args.name}: {protocol or 'no'} protocol on port {port}; use HTTPS (ALB) or TLS (NLB) with a certificate"
    )


def _service_tls(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    """A Kubernetes Service of type LoadBalancer terminates TLS on every port (ssl-cert and ssl-ports annotations)."""
    if get(args.props, "spec", "type") != "LoadBalancer":
        return
    if not _annotation(args.props, "ssl-cert"):
        report_violation(f"{args.name}: load balancer without {LB_ANNOTATION}ssl-cert; it would serve clear text")
        return
    tls = {p.strip() for p in str(_annotation(args.props, "ssl-ports") or "*").split(",")}
    for port in get(args.props, "spec", "ports", default=[]):
        if "*" not in tls and str(num(get(port, "port"))) not in tls and str(get(port, "name")) not in tls:
            report_violation(
                f"{args.name}: port {num(get(port, 'port'))} is not among {LB_ANNOTATION}ssl-ports; "
                "it would serve clear text"
            )


# ---- IAM ---------------------------------------------------------------------------------------


@resource_policy(
    "security-iam-no-admin",
    'No IAM policy allows every action on every resource ("*" on "*"), nor attaches AdministratorAccess.',
    MANDATORY,
    types=(*IAM_POLICY_DOCS, tokens.IAM_ROLE, *IAM_ATTACHMENTS),
)
def iam_no_admin(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type in IAM_ATTACHMENTS:
        if get(args.props, "policyArn") == ADMIN_POLICY:
            report_violation(f"{args.name} attaches AdministratorAccess; attach a least-privilege policy instead")
        return
    if args.resource_type == tokens.IAM_ROLE:
        documents = [get(p, "policy") for p in get(args.props, "inlinePolicies", default=[])]
        if ADMIN_POLICY in listed(get(args.props, "managedPolicyArns")):
            report_violation(f"{args.name} attaches AdministratorAccess; attach a least-privilege policy instead")
    else:
        documents = [get(args.props, "policy")]
    for document in documents:
        for statement in statements(document):
            if allows_everything(dict(statement)):
                sid = statement.get("Sid")
                report_violation(
                    f"{args.name}: statement {sid or '(no Sid)'} allows every action on every resource; "
                    "name the actions and resources it needs"
                )


__all__ = [
    "ebs_encrypted",
    "fsx_encrypted",
    "https_listeners",
    "iam_no_admin",
    "imdsv2",
    "open_ingress",
    "s3_encrypted",
    "s3_public_access_blocked",
]
