"""The load balancer in front of a Kubernetes fleet's region, and the alarm Route 53 fails over on.

The AWS Load Balancer Controller, not this stack, creates the NLB and its target group from the Service
(`aws-load-balancer-type: external`). The stack names the NLB (`aws-load-balancer-name`) and tags what the
controller makes for the Service (`aws-load-balancer-additional-resource-tags`: the NLB, its target groups
and listeners), then reads both back once the Service has its load balancer, and alarms on the target
group's healthy hosts as the EC2 fleet does (kubernetes-sigs/aws-load-balancer-controller
docs/guide/service/annotations.md: "aws-load-balancer-name specifies the custom name to use for the load
balancer. Name longer than 32 characters will be treated as an error"; "If you modify this annotation after
service creation, there is no effect"; "AWS Resource Tags ... additional-resource-tags specifies additional
tags to apply to the AWS resources")."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpuinfra.graph.views import LB_ANNOTATION
from gpuinfra.pulumi.components.inference.endpoint import healthy_hosts_alarm

NAME_ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-name"
ATTRIBUTES_ANNOTATION = LB_ANNOTATION + "attributes"
"""Load balancer attributes the controller sets on the NLB, e.g. access logs (annotations.md, "Load Balancer
Attributes": `access_logs.s3.enabled=true,access_logs.s3.bucket=...,access_logs.s3.prefix=...`)."""
TAGS_ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-additional-resource-tags"
ENDPOINT_TAG = "gpuinfra:endpoint"
"""Tag the controller puts on the Service's NLB and target group: the one target group the stack reads back."""
NAME_LIMIT = 32
"""CreateLoadBalancer Name: at most 32 characters, alphanumerics and hyphens, not beginning with "internal-"
(Elastic Load Balancing API reference)."""


def load_balancer_name(fleet: str) -> str:
    """The NLB's name: the fleet's (already 2-32 lower-case letters, digits and dashes), unless that begins
    with the prefix ELB reserves for internal load balancers' DNS names."""
    if fleet.startswith("internal-"):
        fleet = f"lb-{fleet}"[:NAME_LIMIT].rstrip("-")
    return fleet


def service_annotations(fleet: str) -> dict[str, str]:
    """Annotations that make the controller's NLB and target group findable by the stack."""
    name = load_balancer_name(fleet)
    return {NAME_ANNOTATION: name, TAGS_ANNOTATION: f"{ENDPOINT_TAG}={name}"}


def access_log_annotations(bucket: str, prefix: str) -> dict[str, str]:
    """The controller's attributes that turn the NLB's access logs on, into `bucket` under `prefix`. An NLB writes
    them for TLS listeners only (ELB guide for Network Load Balancers, "Access logs": "Access logs are created
    only if the load balancer has a TLS listener"), so a fleet without a certificate gets none."""
    attributes = {"access_logs.s3.enabled": "true", "access_logs.s3.bucket": bucket, "access_logs.s3.prefix": prefix}
    return {ATTRIBUTES_ANNOTATION: ",".join(f"{k}={v}" for k, v in attributes.items())}


@dataclass(frozen=True)
class ServiceLoadBalancer:
    dns_name: pulumi.Output[str]
    zone_id: pulumi.Output[str]
    arn: pulumi.Output[str]
    health_alarm: aws.cloudwatch.MetricAlarm | None
    """Only for an internal NLB: Route 53's checkers cannot reach it."""
    load_balancer_suffix: pulumi.Output[str]
    """`net/<name>/<id>`, the LoadBalancer dimension of its metrics."""
    target_group_suffix: pulumi.Output[str]
    """`targetgroup/<name>/<id>`, the TargetGroup dimension."""
    vpc_id: pulumi.Output[str]
    """The VPC the controller put the NLB in: the cluster's."""


def service_load_balancer(
    name: str,
    fleet: str,
    service: pulumi.Resource,
    internal: bool,
    provider: pulumi.ProviderResource,
    parent: pulumi.Resource,
    topic_arn: pulumi.Input[str] | None = None,
) -> ServiceLoadBalancer:
    """Read the controller's NLB (by name) and target group (by tag) after the Service exists: Pulumi waits for
    a LoadBalancer Service until its status has an ingress hostname, which the controller writes once the NLB,
    target group and listener are deployed. A lookup that finds none, or several, fails the update instead of
    alarming on the wrong target group (terraform-provider-aws data source aws_lb_target_group: tags "must
    exactly match", one result). `topic_arn`: the region's alert topic, which the alarm pages."""
    lb_name = load_balancer_name(fleet)
    after = pulumi.InvokeOutputOptions(provider=provider, parent=parent, depends_on=[service])
    lb = aws.lb.get_load_balancer_output(name=lb_name, opts=after)
    tg = aws.lb.get_target_group_output(tags={ENDPOINT_TAG: lb_name}, opts=after)
    alarm = (
        healthy_hosts_alarm(
            name,
            False,
            lb.arn_suffix,
            tg.arn_suffix,
            pulumi.ResourceOptions(parent=parent, provider=provider),
            topic_arn,
        )
        if internal
        else None
    )
    return ServiceLoadBalancer(lb.dns_name, lb.zone_id, lb.arn, alarm, lb.arn_suffix, tg.arn_suffix, lb.vpc_id)


__all__ = [
    "ATTRIBUTES_ANNOTATION",
    "ENDPOINT_TAG",
    "NAME_ANNOTATION",
    "TAGS_ANNOTATION",
    "ServiceLoadBalancer",
    "access_log_annotations",
    "load_balancer_name",
    "service_annotations",
    "service_load_balancer",
]
