"""Google's rules of the pack, loaded with it through the cloud registry (policy/rules/__init__.py imports every
cloud's `policies` part): the edges between Google projects, the groups' bounds, the armored front door.

Google's edges between workloads are not AWS's: a VPC peering (compute.NetworkPeering, to a network named
projects/<project>/global/networks/<name>), a Shared VPC attachment (compute.SharedVPCServiceProject: a
service project uses a host project's networks), a subnetwork or network of another project in an instance
template (Shared VPC use), a Private Service Connect endpoint, and an IAM binding in another project or for
another project's service account (research/multicloud.md §4, "Peering paths a policy must see"). Each edge must
end in a project of the stack's own purpose that the organization file names; one that does not is refused, and
one whose far end cannot be told is refused too (fail closed). Private services access (servicenetworking) is a
peering to Google's producer network: allowed only beside a managed service that needs it."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from pulumi_policy import PolicyResource, StackValidationArgs

from gpuinfra.clouds.gcp.spec import GcpProject
from gpuinfra.clouds.gcp.spec.project import PROJECT_ID
from gpuinfra.policy.facts import StackFacts, require
from gpuinfra.policy.rules.declare import MANDATORY, ReportViolation, stack_policy
from gpuinfra.policy.rules.values import view

PEERING = "gcp:compute/networkPeering:NetworkPeering"
SHARED_VPC_SERVICE = "gcp:compute/sharedVPCServiceProject:SharedVPCServiceProject"
PSA = "gcp:servicenetworking/connection:Connection"
FORWARDING_RULE = "gcp:compute/forwardingRule:ForwardingRule"
TEMPLATE = "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate"
MIG = "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager"
AUTOSCALER = "gcp:compute/regionAutoscaler:RegionAutoscaler"
BACKEND = "gcp:compute/backendService:BackendService"
SECURITY_POLICY = "gcp:compute/securityPolicy:SecurityPolicy"
GLOBAL_RULE = "gcp:compute/globalForwardingRule:GlobalForwardingRule"
TRANSFER = "gcp:storage/transferJob:TransferJob"
BUCKET = "gcp:storage/bucket:Bucket"
TRANSFER_ENDS = (("gcsDataSource", "from"), ("gcsDataSink", "to"))
IAM_BINDINGS = (
    "gcp:projects/iAMMember:IAMMember",
    "gcp:storage/bucketIAMMember:BucketIAMMember",
    "gcp:secretmanager/secretIamMember:SecretIamMember",
)
NEEDS_PSA = ("gcp:lustre/instance:Instance", "gcp:filestore/instance:Instance", "gcp:redis/instance:Instance")
"""Managed services reached through private services access (Managed Lustre requires it: research §1.5)."""
TRAINING_NETWORKS = (
    "gcp:container/cluster:Cluster",
    "gcp:container/nodePool:NodePool",
    "gcp:lustre/instance:Instance",
    "gcp:filestore/instance:Instance",
    "gcp:hypercomputecluster/cluster:Cluster",
)
"""A training cluster's resources that name networks (its own VPCs; another project's is an edge)."""
PROJECT_IN_PATH = re.compile(rf"(?:^|/)projects/({PROJECT_ID})(?:/|$)")
SERVICE_ACCOUNT = re.compile(rf"^serviceAccount:[^@]+@({PROJECT_ID})\.iam\.gserviceaccount\.com\Z")


def google_facts(args: StackValidationArgs) -> StackFacts:
    """The facts of a stack deployed into a Google project; any other stack: the policy is not applicable."""
    facts = require(args)
    if not isinstance(facts.account, GcpProject):
        args.not_applicable(f"applies to Google Cloud stacks; {facts.stack}'s account is not a Google project")
        raise AssertionError("not_applicable returns only by raising")
    return facts


def _project_of(value: Any) -> str | None:
    found = PROJECT_IN_PATH.search(value) if isinstance(value, str) else None
    return found.group(1) if found else None


def _edges(resource: PolicyResource) -> Iterator[tuple[str, Any]]:
    """(what, the far end's project or the raw value) of every cross-project reference the resource makes."""
    p = resource.props
    if resource.resource_type == PEERING:
        yield "a VPC peering to", p.get("peerNetwork")
    elif resource.resource_type == SHARED_VPC_SERVICE:
        yield "a Shared VPC attachment to host", p.get("hostProject")
    elif resource.resource_type == FORWARDING_RULE and p.get("target"):
        yield "a Private Service Connect endpoint to", p.get("target")
    elif resource.resource_type == TEMPLATE:
        for nic in p.get("networkInterfaces") or []:
            for key in ("network", "subnetwork"):
                if isinstance(nic.get(key), str) and "projects/" in nic[key]:
                    yield "a network interface in", nic[key]
            if nic.get("subnetworkProject"):
                yield "a network interface in", nic.get("subnetworkProject")
    elif resource.resource_type == TRANSFER:
        yield "a Storage Transfer job in", p.get("project")
    elif resource.resource_type in TRAINING_NETWORKS:  # a training cluster's GKE, node pool NICs, Managed Lustre
        nics = (p.get("networkConfig") or {}).get("additionalNodeNetworkConfigs") or []
        nics = [*nics, *(p.get("networks") or [])]  # Filestore's `networks`
        for net in p.get("networkResources") or []:  # a Cluster Director cluster's one network
            nics.append(((net.get("config") or {}).get("existingNetwork")) or {})
        for value in [
            p.get("network"),
            p.get("subnetwork"),
            *(n.get(k) for n in nics for k in ("network", "subnetwork")),
        ]:
            if isinstance(value, str) and "projects/" in value:  # a path names its project; a bare name is the stack's
                yield "a network in", value
    elif resource.resource_type in IAM_BINDINGS:
        if resource.resource_type == IAM_BINDINGS[0]:
            yield "an IAM binding in", p.get("project")
        member = SERVICE_ACCOUNT.match(str(p.get("member") or ""))
        if member:
            yield "an IAM binding for a service account of", member.group(1)


def edge_problem(facts: StackFacts, what: str, end: Any) -> str | None:
    """Why an edge to `end` (a project ID, a resource path, or unknown) breaks separation; None if it holds."""
    own = facts.account
    if end is None:
        return None  # the attribute is absent: no edge
    project = end if isinstance(end, str) and "/" not in end else _project_of(end)
    if project is None:
        return f"{what} {end!r}, whose project cannot be told: refused until it names projects/<id>"
    if project == own.id:
        return None
    found = facts.account_with_id(project)
    if found is None:
        return f"{what} project {project}, which the organization file does not name: its purpose is unknown"
    name, other = found
    if not isinstance(other, GcpProject):
        return f"{what} {project}, not a Google project of the organization"
    if other.purpose != own.purpose:
        return (
            f"{what} project {project} ({name}), a {other.purpose} project: {own.purpose} and {other.purpose} never "
            "share a network or an identity"
        )
    return None


def transfer_problems(props: Mapping[str, Any], own_buckets: set[Any]) -> Iterator[str]:
    """A Storage Transfer job copies data between buckets: a bucket the stack does not create is in a project
    that cannot be told from its name, so the copy is refused (fail closed); a value unknown at preview is the
    stack's own bucket's name (a literal is always known)."""
    spec = props.get("replicationSpec") or props.get("transferSpec") or {}
    for end, way in TRANSFER_ENDS:
        bucket = (spec.get(end) or {}).get("bucketName")
        if isinstance(bucket, str) and bucket not in own_buckets:
            yield (
                f"a copy {way} bucket {bucket!r}, which this stack does not create: its project cannot be told "
                "from its name; copy only between the stack's own buckets"
            )


@stack_policy(
    "separation-gcp-edges",
    "Every edge a Google stack opens to another project (VPC peering, Shared VPC, a network interface or Private "
    "Service Connect endpoint in another project, an IAM binding in or for another project, a Storage Transfer job "
    "copying to or from a bucket the stack does not create) ends in a project of the stack's purpose that the "
    "organization names; private services access only beside a managed service that needs it.",
    MANDATORY,
)
def gcp_edges(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts = google_facts(args)
    stack = view(args)
    for resource in stack.with_prefix("gcp:"):
        for what, end in _edges(resource):
            problem = edge_problem(facts, what, end)
            if problem:
                report_violation(f"{resource.name}: {problem}", resource.urn)
    own_buckets = {b.props.get("name") for b in stack.of_type(BUCKET)}
    for job in stack.of_type(TRANSFER):
        for problem in transfer_problems(job.props, own_buckets):
            report_violation(f"{job.name}: {problem}", job.urn)
    if stack.of_type(PSA) and not stack.of_type(*NEEDS_PSA):
        for resource in stack.of_type(PSA):
            report_violation(
                f"{resource.name}: private services access peers the network with Google's producer network, but "
                "the stack holds no managed service that needs it (Managed Lustre, Filestore): remove it",
                resource.urn,
            )


@stack_policy(
    "quota-gcp-groups-bounded",
    "Every Google managed instance group has an autoscaler with a maximum, and the stack's GPUs at those maxima "
    "are what the plan counted against the project's quota.",
    MANDATORY,
)
def gcp_groups_bounded(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts = google_facts(args)
    stack = view(args)
    scaled = {d.urn: a for a in stack.of_type(AUTOSCALER) for d in a.dependencies if d.resource_type == MIG}
    for group in stack.of_type(MIG):
        scaler = scaled.get(group.urn)
        policy = (scaler.props.get("autoscalingPolicy") or {}) if scaler else {}
        if not isinstance(policy.get("maxReplicas"), int):
            report_violation(f"{group.name} has no autoscaler with a maximum: what it launches is unbounded", group.urn)
    planned = sum(n.own for n in getattr(facts.plan, "quotas", []) if n.region != "global" and n.code)
    counted = sum(
        int((a.props.get("autoscalingPolicy") or {}).get("maxReplicas") or 0) for a in stack.of_type(AUTOSCALER)
    )
    per_vm = max((r.accelerators_per_instance for r in getattr(facts.plan, "regions", [])), default=1)
    if counted * per_vm > planned:
        report_violation(
            f"the groups' maxima launch {counted * per_vm} GPUs, more than the {planned} the quota plan counted"
        )


@stack_policy(
    "security-gcp-armored-frontend",
    "A Google fleet's public entry point is HTTPS only, and its backend service sits behind a Cloud Armor policy.",
    MANDATORY,
)
def gcp_armored_frontend(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    google_facts(args)
    stack = view(args)
    for rule in stack.of_type(GLOBAL_RULE):
        if str(rule.props.get("portRange")) != "443":
            report_violation(f"{rule.name} listens on {rule.props.get('portRange')}: serve HTTPS (443) only", rule.urn)
    for service in stack.of_type(BACKEND):
        public = service.props.get("loadBalancingScheme") == "EXTERNAL_MANAGED"
        # The policy's self link is unknown until it exists: the service names it, so it depends on it.
        if public and not stack.dependencies_of(service, SECURITY_POLICY):
            report_violation(f"{service.name} is public without a Cloud Armor security policy", service.urn)


__all__ = ["edge_problem", "gcp_armored_frontend", "gcp_edges", "gcp_groups_bounded", "transfer_problems"]


from gpuinfra.clouds.gcp.policy import slurm as _slurm  # noqa: E402,F401  (the managed Slurm path's rule)
from gpuinfra.clouds.gcp.policy import training as _training  # noqa: E402,F401  (registers the training rules)
