"""Hardened defaults a security review asks of every stack (issue #32): VPC flow logs with a retention, the
VPC's default security group closed, load balancer and WAF logs, and TLS-only bucket policies. Each names the
control it follows: Security Hub EC2.6 / CIS AWS Foundations 3.7 (flow logs), EC2.2 / CIS 5.4 (default
security group), ELB.5 and WAF.11 (logging), S3.5 (SSL-only requests)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml
from pulumi_policy import PolicyResource, StackValidationArgs

from gpuinfra.graph import pod_security, tokens, views
from gpuinfra.policy.rules.declare import MANDATORY, ReportViolation, stack_policy
from gpuinfra.policy.rules.values import StackView, as_int, get, listed, statements, truthy, view

BUCKETS = (tokens.BUCKET, tokens.BUCKET_V2)
LOAD_BALANCERS = (tokens.LOAD_BALANCER, tokens.ALB_LOAD_BALANCER)
TRAFFIC_ALL = "ALL"


# ---- VPC flow logs -----------------------------------------------------------------------------
@stack_policy(
    "security-vpc-flow-logs",
    "Every VPC has a flow log of ALL traffic, delivered to S3 or to a CloudWatch Logs group with a retention "
    "(through a delivery role) (Security Hub EC2.6, CIS AWS Foundations 3.7).",
    MANDATORY,
)
def vpc_flow_logs(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    stack = view(args)
    for vpc in stack.of_type(tokens.VPC):
        logs = stack.dependents_of(vpc, tokens.FLOW_LOG)
        if not logs:
            report_violation(
                f"VPC {vpc.name} has no flow log; add an aws.ec2.FlowLog (traffic_type ALL) to a log group with a "
                "retention or to a bucket",
                vpc.urn,
            )
            continue
        problems = [_flow_log_problems(stack, log) for log in logs]
        if all(problems):
            for problem in (p for found in problems for p in found):
                report_violation(f"VPC {vpc.name}: {problem}", vpc.urn)


def _flow_log_problems(stack: StackView, log: PolicyResource) -> list[str]:
    """What keeps one flow log from recording every flow somewhere that keeps it."""
    problems = []
    traffic = get(log.props, "trafficType", default="(not set)")
    if traffic != TRAFFIC_ALL:
        problems.append(f"flow log {log.name} records {traffic} traffic only; set traffic_type ALL")
    kind = get(log.props, "logDestinationType", default="cloud-watch-logs")
    if kind == "cloud-watch-logs":
        if not get(log.props, "iamRoleArn"):
            problems.append(f"flow log {log.name} delivers to CloudWatch Logs without iam_role_arn; nothing is written")
        groups = stack.dependencies_of(log, tokens.LOG_GROUP)
        if not groups:
            problems.append(f"flow log {log.name} names no log group of this stack; deliver to one with a retention")
        for group in groups:
            if as_int(get(group.props, "retentionInDays"), 0) <= 0:
                problems.append(
                    f"log group {group.name} keeps flow logs forever (no retention_in_days): set a retention"
                )
    elif kind == "s3":
        buckets = stack.dependencies_of(log, *BUCKETS)
        if not buckets:
            problems.append(f"flow log {log.name} names no bucket of this stack; deliver to one with a retention")
        for bucket in buckets:
            if not _expires_objects(stack, bucket):
                problems.append(f"bucket {bucket.name} keeps flow logs forever: add a lifecycle rule that expires them")
    return problems


def _expires_objects(stack: StackView, bucket: PolicyResource) -> bool:
    """An enabled lifecycle rule with an expiration in days (S3 PutBucketLifecycleConfiguration Expiration.Days)."""
    configs = stack.dependents_of(bucket, tokens.BUCKET_LIFECYCLE, tokens.BUCKET_LIFECYCLE_V2)
    rules = [rule for config in configs for rule in listed(get(config.props, "rules"))]
    return any(get(rule, "status") == "Enabled" and as_int(get(rule, "expiration", "days"), 0) > 0 for rule in rules)


# ---- default security group --------------------------------------------------------------------
@stack_policy(
    "security-default-sg-closed",
    "Every VPC's default security group is adopted (aws.ec2.DefaultSecurityGroup) with no ingress and no egress "
    "rules (Security Hub EC2.2, CIS AWS Foundations 5.4).",
    MANDATORY,
)
def default_sg_closed(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    stack = view(args)
    for vpc in stack.of_type(tokens.VPC):
        groups = stack.dependents_of(vpc, tokens.DEFAULT_SECURITY_GROUP)
        if not groups:
            report_violation(
                f"VPC {vpc.name}: its default security group keeps EC2's rules (all traffic from itself, all "
                "egress); adopt it with aws.ec2.DefaultSecurityGroup and no rules",
                vpc.urn,
            )
        for group in groups:
            open_ = [d for d in ("ingress", "egress") if listed(get(group.props, d))]
            if open_:
                report_violation(
                    f"{group.name}: the default security group of VPC {vpc.name} keeps {' and '.join(open_)} rules; "
                    "remove them (resources must name their own groups)",
                    group.urn,
                )


# ---- load balancer and WAF logs ---------------------------------------------------------------
@stack_policy(
    "security-lb-waf-logging",
    "Every load balancer writes access logs to a bucket (Security Hub ELB.5), a Kubernetes LoadBalancer Service "
    "with a TLS listener through the AWS Load Balancer Controller's attributes, and every WAF web ACL has a logging "
    "configuration (Security Hub WAF.11).",
    MANDATORY,
)
def lb_waf_logging(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    stack = view(args)
    for balancer in stack.of_type(*LOAD_BALANCERS):
        logs = get(balancer.props, "accessLogs", default={}) or {}
        if not (truthy(get(logs, "enabled")) and get(logs, "bucket")):
            report_violation(
                f"load balancer {balancer.name} keeps no access logs; set access_logs (enabled, bucket, prefix) to a "
                "bucket whose policy lets ELB write under AWSLogs/<account>/",
                balancer.urn,
            )
    for service in stack.of_type(tokens.K8S_SERVICE):
        if _tls_nlb_without_logs(service.props):
            report_violation(
                f"Service {service.name} gets an NLB with a TLS listener that keeps no access logs; annotate "
                f"{ATTRIBUTES}: access_logs.s3.enabled=true,access_logs.s3.bucket=<bucket>,access_logs.s3.prefix=<p>",
                service.urn,
            )
    for acl in stack.of_type(tokens.WAF_WEB_ACL):
        if not stack.dependents_of(acl, tokens.WAF_LOGGING):
            report_violation(
                f"web ACL {acl.name} logs nothing; add an aws.wafv2.WebAclLoggingConfiguration to a log group named "
                "aws-waf-logs-*",
                acl.urn,
            )


ATTRIBUTES = views.LB_ANNOTATION + "attributes"
SSL_CERT = views.LB_ANNOTATION + "ssl-cert"


def _tls_nlb_without_logs(props: Mapping[str, Any]) -> bool:
    """A LoadBalancer Service the AWS Load Balancer Controller fronts with a TLS listener (an ssl-cert annotation)
    and no access_logs.s3.enabled=true with a bucket among its attributes (controller annotations.md; NLBs log only
    TLS listeners, so a plain TCP Service is not asked)."""
    if get(props, "spec", "type") != "LoadBalancer":
        return False
    annotations = get(props, "metadata", "annotations", default={}) or {}
    if not annotations.get(SSL_CERT):
        return False
    pairs = dict(p.split("=", 1) for p in str(annotations.get(ATTRIBUTES, "")).split(",") if "=" in p)
    return not (pairs.get("access_logs.s3.enabled", "").strip() == "true" and pairs.get("access_logs.s3.bucket"))


# ---- Kubernetes namespaces ---------------------------------------------------------------------
@stack_policy(
    "security-namespace-isolation",
    "Every namespace a stack creates has a default-deny NetworkPolicy (all pods, Ingress and Egress, no rules) and "
    "a Pod Security Admission enforce label, and every pod the stack runs in it meets that level.",
    MANDATORY,
)
def namespace_isolation(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    stack = view(args)
    policies = stack.of_type(tokens.K8S_NETWORK_POLICY)
    for namespace in stack.of_type(tokens.K8S_NAMESPACE):
        name = get(namespace.props, "metadata", "name")
        if not any(_in(p, namespace) and _denies_all(p.props) for p in policies):
            report_violation(
                f"namespace {name} has no default-deny NetworkPolicy (podSelector {{}}, policyTypes Ingress and "
                "Egress, no rules); add one, then allow what the workload needs",
                namespace.urn,
            )
        enforce = get(namespace.props, "metadata", "labels", f"{pod_security.LABEL}enforce")
        if enforce not in pod_security.LEVELS:
            report_violation(
                f"namespace {name} has no {pod_security.LABEL}enforce label (or {enforce!r} is no level); label it "
                "with the strictest level its pods meet",
                namespace.urn,
            )
            continue
        for owner, pod in _pods_in(stack, namespace):
            problems = pod_security.meets(pod, enforce)
            if problems:
                report_violation(
                    f"{owner.name}: its pods fail the {enforce} level namespace {name} enforces: {'; '.join(problems)}",
                    owner.urn,
                )


def _in(resource: PolicyResource, namespace: PolicyResource) -> bool:
    """`resource` lives in `namespace` of the same cluster (one stack may create a namespace of one name in
    several clusters, one Kubernetes provider each)."""
    same_cluster = (resource.provider.urn if resource.provider else None) == (
        namespace.provider.urn if namespace.provider else None
    )
    return same_cluster and get(resource.props, "metadata", "namespace") == get(namespace.props, "metadata", "name")


def _denies_all(props: Mapping[str, Any]) -> bool:
    spec = get(props, "spec", default={}) or {}
    return (
        not get(spec, "podSelector")
        and {"Ingress", "Egress"} <= set(listed(get(spec, "policyTypes")))
        and not get(spec, "ingress")
        and not get(spec, "egress")
    )


def _pods_in(stack: StackView, namespace: PolicyResource) -> list[tuple[PolicyResource, Mapping[str, Any]]]:
    """Pod specs the stack runs in `namespace`: Deployments, CronJobs and the JobSets ConfigMaps carry."""
    out: list[tuple[PolicyResource, Mapping[str, Any]]] = []
    for resource in stack.of_type(tokens.K8S_DEPLOYMENT, tokens.K8S_CRONJOB, tokens.K8S_CONFIG_MAP):
        if not _in(resource, namespace):
            continue
        if resource.resource_type == tokens.K8S_DEPLOYMENT:
            out.append((resource, get(resource.props, "spec", "template", "spec", default={})))
        elif resource.resource_type == tokens.K8S_CRONJOB:
            out.append((resource, get(resource.props, "spec", "jobTemplate", "spec", "template", "spec", default={})))
        else:
            out += [(resource, pod) for pod in _jobset_pods(get(resource.props, "data", default={}) or {})]
    return out


def _jobset_pods(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    pods = []
    for text in data.values():
        try:
            document = yaml.safe_load(str(text))
        except yaml.YAMLError:
            continue
        if isinstance(document, dict) and document.get("kind") == "JobSet":
            for job in get(document, "spec", "replicatedJobs", default=[]) or []:
                pods.append(get(job, "template", "spec", "template", "spec", default={}) or {})
    return pods


# ---- TLS-only buckets --------------------------------------------------------------------------
@stack_policy(
    "security-s3-tls-only",
    "Every S3 bucket's policy denies requests not made over TLS (Deny s3:* on the bucket and its objects when "
    "aws:SecureTransport is false; Security Hub S3.5).",
    MANDATORY,
)
def s3_tls_only(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    stack = view(args)
    for bucket in stack.of_type(*BUCKETS):
        name = str(get(bucket.props, "bucket", default=bucket.name))
        policies = stack.dependents_of(bucket, tokens.BUCKET_POLICY)
        documents = [get(p.props, "policy") for p in policies] + [get(bucket.props, "policy")]
        if not any(_denies_clear_text(s, name) for d in documents for s in statements(d)):
            report_violation(
                f"bucket {bucket.name} accepts requests without TLS: no bucket policy statement denies s3:* on "
                f"arn:aws:s3:::{name} and arn:aws:s3:::{name}/* when aws:SecureTransport is false",
                bucket.urn,
            )


def _denies_clear_text(statement: Mapping[str, Any], bucket: str) -> bool:
    """A Deny of every S3 action, to everyone, on the bucket and its objects, when the request is not TLS."""
    if statement.get("Effect") != "Deny" or statement.get("Principal") not in ("*", {"AWS": "*"}):
        return False
    if not {"s3:*", "*"} & set(listed(statement.get("Action"))):
        return False
    resources = set(listed(statement.get("Resource")))
    if not {f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"} <= resources:
        return False
    condition = get(statement, "Condition", "Bool", "aws:SecureTransport")
    return str(condition).lower() == "false"


__all__ = ["default_sg_closed", "lb_waf_logging", "namespace_isolation", "s3_tls_only", "vpc_flow_logs"]
