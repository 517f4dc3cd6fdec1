"""Inference fleets: always-on replicas bought on-demand, load-balancer health checks, two or more
zones per region, and none of the training hardware (EFA, placement groups, P instances) unless a
team allows it. EC2 fleets are judged on their Auto Scaling groups; Kubernetes fleets on their
Deployments and Services (the nodes, and so their zones and purchase options, are the cluster's)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from pulumi_policy import PolicyResource, ResourceValidationArgs, StackValidationArgs

from gpuinfra.catalog import Catalog
from gpuinfra.graph import tokens, views
from gpuinfra.plan import InferencePlan
from gpuinfra.policy.facts import require
from gpuinfra.policy.rules.declare import ADVISORY, MANDATORY, ReportViolation, resource_policy, stack_policy
from gpuinfra.policy.rules.values import StackView, as_int, get, has, listed, num, view

TARGET_GROUPS = (tokens.TARGET_GROUP, tokens.ALB_TARGET_GROUP)
EFA_RESOURCE = "vpc.amazonaws.com/efa"
HEALTHCHECK_ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-healthcheck-path"
ZONE_KEY = "topology.kubernetes.io/zone"


def on_demand_at(size: int, group: PolicyResource, stack: StackView) -> int:
    """On-demand instances of a group running `size` instances, split as the group splits them."""
    return views.split(group.props, size, stack.market_of(group))[0]


@stack_policy(
    "inference-on-demand-base",
    "Each region's always-on replicas (min_replicas) are on-demand: no group, and no schedule raising a "
    "group's floor, puts part of the minimum on spot.",
    MANDATORY,
)
def on_demand_base(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args, "inference")
    stack = view(args)
    groups = stack.of_type(tokens.ASG)
    if not groups:
        args.not_applicable("no Auto Scaling groups: on Kubernetes the nodes' purchase option is the cluster's")
    floors: dict[str, int] = defaultdict(int)
    for group in groups:
        minimum = as_int(get(group.props, "minSize"))
        on_demand = on_demand_at(minimum, group, stack)
        floors[stack.region_of(group) or "?"] += on_demand
        if on_demand < minimum:
            report_violation(
                f"{group.name}: minSize {minimum} but only {on_demand} on-demand at that size; "
                f"{minimum - on_demand} always-on replica(s) may be spot and vanish together. Raise "
                f"onDemandBaseCapacity to {minimum}",
                group.urn,
            )
    for schedule in stack.of_type(tokens.ASG_SCHEDULE):
        for group in stack.dependencies_of(schedule, tokens.ASG):
            minimum = as_int(get(schedule.props, "minSize"))
            on_demand = on_demand_at(minimum, group, stack)
            if on_demand < minimum:
                report_violation(
                    f"{schedule.name} raises {group.name} to minSize {minimum}, of which only "
                    f"{on_demand} on-demand; raise the floor of an on-demand group instead",
                    schedule.urn,
                )
    plan = facts.plan
    assert isinstance(plan, InferencePlan)
    for region in plan.regions:
        if floors.get(region.region, 0) < region.min_replicas:
            report_violation(
                f"{region.region}: min_replicas is {region.min_replicas} but the groups keep "
                f"{floors.get(region.region, 0)} on-demand replica(s) at their minimum size"
            )


@stack_policy(
    "inference-health-checks",
    "Inference replicas sit behind load-balancer health checks: target groups check a path and groups "
    "replace what the load balancer finds unhealthy (EC2); servers have a readiness probe and their "
    "load-balanced Service a health-check path (Kubernetes).",
    MANDATORY,
)
def health_checks(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    require(args, "inference")
    stack = view(args)
    for target_group in stack.of_type(*TARGET_GROUPS):
        check = get(target_group.props, "healthCheck", default={})
        protocol = str(get(check, "protocol", default=get(target_group.props, "protocol", default="HTTP"))).upper()
        if get(check, "enabled") is False:
            report_violation(
                f"{target_group.name} disables health checks; traffic would reach replicas still loading weights",
                target_group.urn,
            )
        elif protocol.startswith("HTTP") and not get(check, "path"):
            report_violation(
                f"{target_group.name} health-checks no path; check the server's readiness path (it "
                "answers 200 only once the weights are loaded)",
                target_group.urn,
            )
    for group in stack.of_type(tokens.ASG):
        attached = listed(get(group.props, "targetGroupArns")) or stack.dependencies_of(group, *TARGET_GROUPS)
        if not attached:
            report_violation(
                f"{group.name} is attached to no target group, so no load balancer checks its replicas", group.urn
            )
        elif get(group.props, "healthCheckType", default="EC2") != "ELB":
            report_violation(
                f"{group.name} uses healthCheckType {get(group.props, 'healthCheckType', default='EC2')}; "
                "use ELB so replicas the load balancer finds unhealthy are replaced",
                group.urn,
            )
    for deployment in stack.of_type(tokens.K8S_DEPLOYMENT):
        for container in get(deployment.props, "spec", "template", "spec", "containers", default=[]):
            if get(container, "ports") and not get(container, "readinessProbe"):
                report_violation(
                    f"{deployment.name}: container {get(container, 'name')} serves without a readiness "
                    "probe; pods would take traffic before the weights are loaded",
                    deployment.urn,
                )
    for service in stack.of_type(tokens.K8S_SERVICE):
        if get(service.props, "spec", "type") == "LoadBalancer" and not get(
            service.props, "metadata", "annotations", HEALTHCHECK_ANNOTATION
        ):
            report_violation(
                f"{service.name}: load balancer without {HEALTHCHECK_ANNOTATION}; it would check only "
                "that the port accepts connections",
                service.urn,
            )


@stack_policy(
    "inference-multi-zone", "Every inference region runs its EC2 replicas in two or more availability zones.", MANDATORY
)
def multi_zone(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    require(args, "inference")
    stack = view(args)
    zones: dict[str, set[str]] = defaultdict(set)
    groups: dict[str, list[str]] = defaultdict(list)
    for group in stack.of_type(tokens.ASG):
        region = stack.region_of(group) or "?"
        groups[region].append(group.urn)
        zones[region].update(str(z) for z in get(group.props, "availabilityZones", default=[]))
        for subnet in stack.dependencies_of(group, tokens.SUBNET):
            zone = get(subnet.props, "availabilityZone", default=get(subnet.props, "availabilityZoneId"))
            if zone:
                zones[region].add(str(zone))
    if not groups:
        args.not_applicable("no Auto Scaling groups (see inference-pod-zone-spread for Kubernetes)")
    for region, urns in sorted(groups.items()):
        if len(zones[region]) < 2:
            found = ", ".join(sorted(zones[region])) or "no zone"
            report_violation(
                f"{region}: replicas run in {found}; one zone outage would take the region down. Spread "
                "the groups over two or more zones",
                urns[0] if len(urns) == 1 else None,
            )


@resource_policy(
    "inference-pod-zone-spread",
    "Kubernetes inference Deployments with two or more replicas spread them over zones "
    "(topologySpreadConstraints or pod anti-affinity on topology.kubernetes.io/zone).",
    ADVISORY,
    types=(tokens.K8S_DEPLOYMENT,),
)
def pod_zone_spread(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    require(args, "inference")
    replicas = get(args.props, "spec", "replicas")
    # No spec.replicas: an autoscaler owns the count (gpuinfra's fleets scale from min_replicas >= 1 up).
    if replicas is not None and as_int(replicas, 1) < 2:
        return
    pod = get(args.props, "spec", "template", "spec", default={})
    spread = [c for c in get(pod, "topologySpreadConstraints", default=[]) if get(c, "topologyKey") == ZONE_KEY]
    anti = get(pod, "affinity", "podAntiAffinity", default={})
    terms = [
        *get(anti, "requiredDuringSchedulingIgnoredDuringExecution", default=[]),
        *(
            get(t, "podAffinityTerm", default={})
            for t in get(anti, "preferredDuringSchedulingIgnoredDuringExecution", default=[])
        ),
    ]
    if not spread and not any(get(t, "topologyKey") == ZONE_KEY for t in terms):
        report_violation(
            f"{args.name}: {num(replicas) if replicas is not None else 'autoscaled'} replicas with no zone spread; the "
            f"scheduler may put them all in one zone. Add a topologySpreadConstraint on {ZONE_KEY}"
        )


AUTH_ACTIONS = {"authenticate-oidc", "authenticate-cognito"}
API_KEY_MARK = "VLLM_API_KEY"
"""vLLM reads its --api-key from this variable; gpuinfra's replicas and pods set it from a secret."""


def _user_data(template: Mapping[str, Any]) -> str:
    """The template's user data as cloud-init writes its files: base64 decoded, and the gz+b64 write_files
    entries (the replicas' scripts) unpacked."""
    import base64
    import binascii

    from gpuinfra.templating import unpacked

    raw = get(template, "userData")
    if not isinstance(raw, str):
        return ""
    try:
        return unpacked(base64.b64decode(raw, validate=True).decode(errors="replace"))
    except (binascii.Error, ValueError):
        return raw


def _listener_authenticates(listener: PolicyResource, stack: StackView) -> bool:
    actions = [*get(listener.props, "defaultActions", default=[])]
    for rule in stack.dependents_of(listener, tokens.LISTENER_RULE):
        actions += get(rule.props, "actions", default=[])
    return any(get(a, "type") in AUTH_ACTIONS for a in actions)


@stack_policy(
    "inference-protected-endpoint",
    "An internet-facing inference endpoint authenticates requests (an API key the server checks, or OIDC/"
    "Cognito on the ALB listener) and has an AWS WAF web ACL (rate limits, managed rules) on its load "
    "balancer; WAF attaches to ALBs only, so an internet-facing NLB or Kubernetes Service is refused.",
    MANDATORY,
)
def protected_endpoint(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    require(args, "inference")
    stack = view(args)
    balancers = stack.of_type(tokens.LOAD_BALANCER, tokens.ALB_LOAD_BALANCER)
    services = [s for s in stack.of_type(tokens.K8S_SERVICE) if views.internet_facing_service(s.props)]
    if not balancers and not services:
        args.not_applicable("no load balancers")
    guarded = {
        d.urn
        for association in stack.of_type(tokens.WAF_WEB_ACL_ASSOCIATION)
        for d in stack.dependencies_of(association, tokens.LOAD_BALANCER, tokens.ALB_LOAD_BALANCER)
    }
    api_key_regions = {
        stack.region_of(t) for t in stack.of_type(tokens.LAUNCH_TEMPLATE) if API_KEY_MARK in _user_data(t.props)
    }
    secret_regions = {stack.region_of(s) for s in stack.of_type(tokens.SECRETS_MANAGER_SECRET)}
    for lb in balancers:
        if get(lb.props, "internal") is True:
            continue
        if get(lb.props, "loadBalancerType", default="application") != "application":
            report_violation(
                f"{lb.name}: an internet-facing network load balancer takes no WAF web ACL; make it internal "
                "or serve through an ALB",
                lb.urn,
            )
            continue
        if lb.urn not in guarded:
            report_violation(f"{lb.name}: internet-facing with no AWS WAF web ACL associated", lb.urn)
        region = stack.region_of(lb)
        listeners = stack.dependents_of(lb, tokens.LISTENER, tokens.ALB_LISTENER)
        if not any(_listener_authenticates(li, stack) for li in listeners) and not (
            region in api_key_regions and region in secret_regions
        ):
            report_violation(
                f"{lb.name}: internet-facing with no authentication (no API key from Secrets Manager at the "
                "server, no OIDC/Cognito action on a listener)",
                lb.urn,
            )
    for service in services:
        report_violation(
            f"{service.name}: an internet-facing Service load balancer (NLB) takes no WAF web ACL; set the "
            "scheme annotation to internal",
            service.urn,
        )


ALARM_CHECKS = ("CLOUDWATCH_METRIC", "CALCULATED", "RECOVERY_CONTROL")
"""Route 53 health-check types that probe nothing over the network (Route 53 API reference, HealthCheckConfig
Type): the only kinds that can judge an endpoint inside a VPC."""


def _private_endpoints(resources: list[PolicyResource]) -> list[PolicyResource]:
    """Internal load balancers, and Services whose load balancer the cluster's controller makes internal."""
    return [
        r
        for r in resources
        if (
            r.resource_type == tokens.K8S_SERVICE
            and get(r.props, "spec", "type") == "LoadBalancer"
            and not views.internet_facing_service(r.props)
        )
        or (r.resource_type != tokens.K8S_SERVICE and get(r.props, "internal") is True)
    ]


@stack_policy(
    "inference-private-failover",
    "A Route 53 record in front of a private endpoint (an internal load balancer, or a Kubernetes Service's) "
    "fails over on a CloudWatch-alarm health check: Route 53's health checkers are outside the VPC, so an "
    "HTTP(S) or TCP check of a private endpoint always fails, and when every record is unhealthy Route 53 "
    "answers as if all were healthy.",
    MANDATORY,
)
def private_failover(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    require(args, "inference")
    stack = view(args)
    endpoints = (tokens.LOAD_BALANCER, tokens.ALB_LOAD_BALANCER, tokens.K8S_SERVICE)
    checked = [
        (record, check)
        for record in stack.of_type(tokens.ROUTE53_RECORD)
        for check in stack.dependencies_of(record, tokens.ROUTE53_HEALTH_CHECK)
    ]
    if not checked:
        args.not_applicable("no Route 53 record with a health check")
    for record, check in checked:
        kind = str(get(check.props, "type", default=""))
        private = _private_endpoints(
            stack.dependencies_of(record, *endpoints) + stack.dependencies_of(check, *endpoints)
        )
        if private and kind not in ALARM_CHECKS:
            report_violation(
                f"{record.name}: health check {check.name} ({kind}) probes {private[0].name}, a private endpoint "
                "Route 53's checkers cannot reach; use a CLOUDWATCH_METRIC check on an alarm over its target "
                "group's HealthyHostCount (Route 53 API reference, CreateHealthCheck, Private Hosted Zones)",
                record.urn,
            )


def _kubernetes_hardware(props: Mapping[str, Any]) -> tuple[bool, list[str]]:
    """(requests EFA devices, instance types selected) of a Deployment's pods."""
    pod = get(props, "spec", "template", "spec", default={})
    efa = any(
        get(c, "resources", kind, EFA_RESOURCE)
        for c in get(pod, "containers", default=[])
        for kind in ("requests", "limits")
    )
    selected = [
        str(v)
        for k, v in (get(pod, "nodeSelector", default={}) or {}).items()
        if k in ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
    ]
    return efa, selected


@resource_policy(
    "inference-no-training-hardware",
    "Inference uses no EFA, no placement groups and no P-family (or Trn) instances, the training "
    "hardware, unless the pack's config allows it.",
    ADVISORY,
    types=(tokens.LAUNCH_TEMPLATE, tokens.ASG, tokens.INSTANCE, tokens.PLACEMENT_GROUP, tokens.K8S_DEPLOYMENT),
    config={
        "allow_efa": {"type": "boolean", "default": False, "description": "Allow EFA interfaces."},
        "allow_placement_groups": {"type": "boolean", "default": False, "description": "Allow placement groups."},
        "allow_training_instances": {
            "type": "boolean",
            "default": False,
            "description": "Allow training-class instance types (P, Trn).",
        },
    },
)
def no_training_hardware(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args, "inference")
    config = args.get_config()
    props = args.props
    kind = args.resource_type
    if (kind == tokens.PLACEMENT_GROUP or (kind == tokens.ASG and has(props, "placementGroup"))) and not config.get(
        "allow_placement_groups", False
    ):
        report_violation(
            f"{args.name}: placement groups pack replicas onto one rack, against spreading them "
            "(allow_placement_groups to permit)"
        )
    if kind == tokens.LAUNCH_TEMPLATE:
        efa = views.efa_interfaces(props)
        types = [get(props, "instanceType")]
    elif kind == tokens.K8S_DEPLOYMENT:
        requested, types = _kubernetes_hardware(props)
        efa = 1 if requested else 0
    else:
        efa = 0
        overrides = get(props, "mixedInstancesPolicy", "launchTemplate", "overrides", default=[])
        types = [get(props, "instanceType")] if kind == tokens.INSTANCE else [get(o, "instanceType") for o in overrides]
    if efa and not config.get("allow_efa", False):
        report_violation(
            f"{args.name}: {efa} EFA interface(s) or device request(s); replicas do not talk to each "
            "other (allow_efa to permit)"
        )
    catalog = facts.catalog
    training = sorted({str(t) for t in types if t and catalog.is_training_class(family_of(str(t), catalog))})
    if training and not config.get("allow_training_instances", False):
        report_violation(
            f"{args.name}: {', '.join(training)} is training-class hardware; serve on G or Inf types "
            "(allow_training_instances to permit)"
        )


def family_of(instance_type: str, catalog: Catalog) -> str:
    info = catalog.instance(instance_type)
    return info.family if info is not None else instance_type.split(".")[0]


__all__ = [
    "family_of",
    "health_checks",
    "multi_zone",
    "no_training_hardware",
    "on_demand_at",
    "on_demand_base",
    "pod_zone_spread",
]
