"""Each declared data flow judged by every policy of the graphs that bears on it: a denied flow is an error
naming the policy that lacks a statement; a flow whose policies are not all in sight is said to be unknown."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpuinfra.findings import Finding, Level
from gpuinfra.graph import Graph, Resource
from gpuinfra.graph.flows import Flow
from gpuinfra.graph.views import account_of_arn
from gpuinfra.preflight.access.decide import Decision, Policies, Principal, Request, evaluate
from gpuinfra.preflight.access.statements import parse
from gpuinfra.preflight.access.world import Role, World, read_world
from gpuinfra.preflight.findings import finding_at

RULE = "PF-ACCESS-FLOW"
SOURCES = (
    "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html; "
    "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic-cross-account.html; "
    "https://docs.aws.amazon.com/kms/latest/developerguide/key-policies.html"
)
BUCKET_KEYS = "https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucket-key.html"
""""S3 Bucket Keys use the bucket ARN as encryption context" (instead of the object ARN)."""
SERVICE_LINKED = "/aws-service-role/"
LOG_GROUP = ":log-group:"
LOG_STREAM = ":log-stream:"
"""A CloudWatch Logs ARN: arn:aws:logs:<region>:<account>:log-group:<name>[:log-stream:<stream>]."""


@dataclass(frozen=True)
class Judged:
    flow: Flow
    decision: Decision


def _bucket_of(arn: str) -> str:
    return arn.removeprefix("arn:aws:s3:::").split("/", 1)[0]


def _principal(flow: Flow, world: World) -> tuple[Principal, Role | None] | str:
    if flow.principal.endswith(".amazonaws.com"):
        return Principal(flow.principal), None
    if flow.principal.startswith("arn:aws:iam::"):
        return Principal(flow.principal, account_of_arn(flow.principal)), None
    role = world.roles.get(flow.principal)
    if role is None:
        return f"its principal, the role {flow.principal!r}, is in none of the graphs judged"
    return role.principal, role


def _identity(flow: Flow, principal: Principal, role: Role | None) -> Policies:
    if role is not None:
        return Policies(
            tuple(role.identity),
            tuple(role.boundary) if role.boundary is not None else None,
            identity_unknown=tuple(role.unknown),
        )
    if SERVICE_LINKED in principal.arn and not flow.action.lower().startswith("kms:"):
        # A service-linked role's permissions are the service's own managed policy: granted by AWS for the
        # service's documented purpose (flow.source); the resource policy is still judged. Not for KMS: a
        # service-linked role gets a customer key only from the key policy (FSx for Lustre UG, "Working with
        # server-side encrypted Amazon S3 buckets": add the role to the key policy).
        doc = {"Statement": [{"Effect": "Allow", "Action": flow.action, "Resource": "*"}]}
        return Policies(parse(doc, f"the service-linked role's AWS-managed policy ({flow.source})"))
    return Policies()


def _request(flow: Flow, world: World, principal: Principal, base: Policies) -> tuple[Request, Policies] | str:
    context = {"aws:SecureTransport": "true", **flow.context}
    if flow.key_of:
        bucket = world.buckets.get(_bucket_of(flow.resource))
        if bucket is None:
            return f"the bucket {_bucket_of(flow.resource)} is in none of the graphs judged"
        if bucket.key_arn is None:
            return ""  # not KMS-encrypted: no key to ask
        key = world.keys.get(bucket.key_arn)
        if key is None or key.statements is None:
            return f"the key policy of {bucket.key_arn} is not readable in the graphs judged"
        context["kms:ViaService"] = f"s3.{flow.via or bucket.region}.amazonaws.com"
        context["kms:EncryptionContext:aws:s3:arn"] = (
            f"arn:aws:s3:::{bucket.name}" if bucket.bucket_key else flow.resource
        )
        policies = Policies(
            base.identity,
            base.boundary,
            key.statements,
            key_origin(key.name),
            True,
            tuple(world.grants),
            base.identity_unknown,
        )
        return Request(principal, flow.action, key.arn, key.account or "", context), policies
    if flow.resource.startswith("arn:aws:s3:::"):
        bucket = world.buckets.get(_bucket_of(flow.resource))
        if bucket is None:
            return f"the bucket {_bucket_of(flow.resource)} is in none of the graphs judged"
        if bucket.policy is None and bucket.policy_name:
            return f"the bucket policy {bucket.policy_name} is not readable"
        origin = f"bucket policy {bucket.policy_name}" if bucket.policy_name else f"bucket {bucket.name} (no policy)"
        policies = Policies(base.identity, base.boundary, bucket.policy, origin, identity_unknown=base.identity_unknown)
        return Request(principal, flow.action, flow.resource, bucket.account or "", context), policies
    account = account_of_arn(flow.resource) or principal.account or ""
    group = world.log_groups.get(flow.resource.split(LOG_STREAM, 1)[0]) if LOG_GROUP in flow.resource else None
    if LOG_GROUP in flow.resource and group is None and principal.is_service:
        # A service is allowed by a resource policy only; an account-wide one (policyName) is not read here.
        return f"no resource policy of the log group of {flow.resource} is in the graphs judged"
    if group is not None:
        if group.statements is None:
            return f"the log group policy {group.name} is not readable"
        origin = f"log group policy {group.name}"
        policies = Policies(
            base.identity, base.boundary, group.statements, origin, identity_unknown=base.identity_unknown
        )
        return Request(principal, flow.action, flow.resource, account, context), policies
    return Request(principal, flow.action, flow.resource, account, context), base


def key_origin(name: str) -> str:
    return f"key policy of {name}"


def judge(flow: Flow, world: World) -> Decision | None:
    """The decision on one flow; None when there is nothing to ask (an S3 bucket without a KMS key)."""
    found = _principal(flow, world)
    if isinstance(found, str):
        return Decision("unknown", found)
    principal, role = found
    request = _request(flow, world, principal, _identity(flow, principal, role))
    if request == "":
        return None
    if isinstance(request, str):
        return Decision("unknown", request)
    return evaluate(*request)


def judge_flows(flows: Iterable[Flow], graphs: Iterable[Graph]) -> list[Judged]:
    world = read_world(graphs)
    out = []
    for flow in flows:
        decision = judge(flow, world)
        if decision is not None:
            out.append(Judged(flow, decision))
    return out


def _anchor(flow: Flow, world: World, graph: Graph) -> Resource:
    role = world.roles.get(flow.principal)
    return role.resource if role is not None else graph.resources[0]


def flow_findings(flows: Iterable[Flow], graph: Graph, peers: Iterable[Graph] = ()) -> list[Finding]:
    """Findings for the flows of `graph`'s stack: an error per denied flow, an info per flow that cannot be
    judged (its policies are not all in sight), nothing for an allowed one."""
    world = read_world([graph, *peers])
    findings = []
    for flow in flows:
        d = judge(flow, world)
        if d is None or d.outcome == "allow":
            continue
        what = f"flow {flow.name!r} ({flow.principal} {flow.action} {flow.resource})"
        if d.outcome == "deny":
            fix = f"; add a statement to {d.missing}" if d.missing else ""
            message = f"AWS would deny {what}: {d.reason}{fix}"
        else:
            message = f"cannot judge {what}: {d.reason}"
        source = f"{SOURCES}; {BUCKET_KEYS}" + (f"; {flow.source}" if flow.source else "")
        level = Level.ERROR if d.outcome == "deny" else Level.INFO
        findings.append(finding_at(_anchor(flow, world, graph), RULE, "", flow.name, message, source, level))
    return findings


__all__ = ["RULE", "Judged", "flow_findings", "judge", "judge_flows"]
