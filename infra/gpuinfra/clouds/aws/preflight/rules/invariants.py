"""Cross-resource invariants: what a resource refers to exists in the graph, and it is ordered after it.

A name that only matches (a policy's group name typed twice) leaves `pulumi up` free to create the policy
before its group, or against a group that is not there; a reference through an output gives Pulumi the
dependency. Certificates come from outside the stack (the spec names them): they must at least be ACM
certificates of the listener's own region and account, since ACM certificates are regional.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.catalog import Catalog
from gpuinfra.clouds.aws.preflight.requests.routing import region_of_arn
from gpuinfra.clouds.aws.preflight.rules.base import Violation, rule
from gpuinfra.clouds.aws.preflight.rules.identity import account_of, provider_account
from gpuinfra.graph import Graph, Resource, tokens

ASG = tokens.ASG


def provider_region(graph: Graph, r: Resource) -> str | None:
    provider = graph.provider_of(r)
    region = provider.inputs.get("region") if provider else None
    return region if isinstance(region, str) else None


@rule(
    "PF-X-DEPENDS",
    "every scaling policy, scheduled action, lifecycle hook and node group depends on the group or cluster it "
    "names, and that group or cluster is in the graph",
    "Pulumi resource model: a reference through an output orders creation (pulumi.com/docs/concepts/inputs-outputs)",
)
def depends_on_group(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    referrers = (
        (tokens.ASG_POLICY, "autoscalingGroupName", ASG, "name"),
        (tokens.ASG_SCHEDULE, "autoscalingGroupName", ASG, "name"),
        (tokens.ASG_LIFECYCLE_HOOK, "autoscalingGroupName", ASG, "name"),
        (tokens.EKS_NODE_GROUP, "clusterName", tokens.EKS_CLUSTER, "name"),
        (
            tokens.FSX_DRA,
            "fileSystemId",
            tokens.LUSTRE,
            None,
        ),
    )
    for type_, key, target, target_key in referrers:
        candidates = graph.of_type(target)
        for r in graph.of_type(type_):
            named = r.inputs.get(key)
            deps = graph.dependencies_of(r, target)
            if not deps:
                yield Violation(r, key, named, f"no {target.rsplit(':', 1)[-1]} among its dependencies")
                continue
            if (
                target_key
                and not any(d.inputs.get(target_key) == named for d in deps)
                and any(c.inputs.get(target_key) == named for c in candidates)
            ):
                yield Violation(r, key, named, "depends on a different one than it names")
    # A warm pool is an argument of its group resource (aws.autoscaling.Group warmPool): ordered by construction.


@rule(
    "PF-X-CERT",
    "a listener's certificate is in the graph (and depended on) or an ACM certificate of the listener's region "
    "and account",
    "AWS Certificate Manager User Guide: certificates are regional resources "
    "(https://docs.aws.amazon.com/acm/latest/userguide/acm-regions.html)",
)
def certificates(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    in_graph = {c.urn for c in graph.of_type(tokens.ACM_CERTIFICATE)}
    for li in graph.of_type(tokens.LISTENER):
        arn = li.inputs.get("certificateArn")
        if not isinstance(arn, str) or any(u in in_graph for u in li.dependencies):
            continue
        if not arn.startswith("arn:aws:acm:"):
            yield Violation(li, "certificateArn", arn, "not an ACM certificate ARN and not in the graph")
            continue
        region, account = region_of_arn(arn), account_of(arn)
        if region != provider_region(graph, li):
            yield Violation(
                li, "certificateArn", arn, f"certificate in {region}, listener in {provider_region(graph, li)}"
            )
        if account != provider_account(graph, li):
            yield Violation(
                li,
                "certificateArn",
                arn,
                f"certificate of account {account}, listener in {provider_account(graph, li)}",
            )


TARGETS = (
    tokens.LOAD_BALANCER,
    tokens.GA_ACCELERATOR,
    tokens.CLOUDFRONT_DISTRIBUTION,
)


def _load_balancer_services(graph: Graph, record: Resource) -> list[Resource]:
    """LoadBalancer Services the record depends on: their load balancer is made by the cluster's controller
    (the AWS Load Balancer Controller for `aws-load-balancer-type: external`) and read back by the stack."""
    return [
        s
        for s in graph.dependencies_of(record, tokens.K8S_SERVICE)
        if (s.inputs.get("spec") or {}).get("type") == "LoadBalancer"
    ]


@rule(
    "PF-X-TARGET",
    "every alias record's target and health check, and every Global Accelerator endpoint, is a resource of the graph "
    "(or the load balancer of a LoadBalancer Service of the graph)",
    "Amazon Route 53 API Reference, AliasTarget and HealthCheckId; "
    "AWS Global Accelerator API Reference, EndpointConfiguration",
)
def targets(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for r in graph.of_type(tokens.ROUTE53_RECORD):
        if r.inputs.get("aliases") and not (graph.dependencies_of(r, *TARGETS) or _load_balancer_services(graph, r)):
            yield Violation(r, "aliases[0].name", r.inputs["aliases"][0].get("name"), "alias target not in the graph")
        if r.inputs.get("healthCheckId") and not graph.dependencies_of(r, tokens.ROUTE53_HEALTH_CHECK):
            yield Violation(r, "healthCheckId", r.inputs["healthCheckId"], "health check not in the graph")
    for group in graph.of_type(tokens.GA_ENDPOINT_GROUP):
        endpoints = group.inputs.get("endpointConfigurations") or []
        if endpoints and not graph.dependencies_of(group, tokens.LOAD_BALANCER, tokens.INSTANCE, tokens.EIP):
            yield Violation(
                group, "endpointConfigurations", [e.get("endpointId") for e in endpoints], "endpoint not in the graph"
            )


__all__ = ["provider_region"]
