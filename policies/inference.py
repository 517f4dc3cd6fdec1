"""Inference fleets: always-on replicas bought on-demand, load-balancer health checks, two or more
zones per region, and none of the training hardware (EFA, placement groups, P instances) unless a
team allows it."""

from __future__ import annotations

from collections import defaultdict

from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs

from .facts import require
from .rules import ADVISORY, MANDATORY, resource_policy, stack_policy
from .values import ASG, INSTANCE, LAUNCH_TEMPLATE, as_int, get, has, listed, num, view

TARGET_GROUPS = ("aws:lb/targetGroup:TargetGroup", "aws:alb/targetGroup:TargetGroup")
PLACEMENT_GROUP = "aws:ec2/placementGroup:PlacementGroup"
SUBNET = "aws:ec2/subnet:Subnet"
EFA_TYPES = frozenset({"efa", "efa-only"})


@resource_policy("inference-on-demand-base",
                 "An inference group's on-demand base covers its minimum replicas, so the always-on floor is never spot.",
                 MANDATORY, types=(ASG,))
def on_demand_base(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    require(args, "inference")
    distribution = get(args.props, "mixedInstancesPolicy", "instancesDistribution")
    if distribution is None:
        return  # a plain launch template: every instance is on-demand
    base = as_int(get(distribution, "onDemandBaseCapacity"))
    minimum = as_int(get(args.props, "minSize"))
    if base < minimum:
        report_violation(f"{args.name}: minSize {num(get(args.props, 'minSize'))} but onDemandBaseCapacity "
                         f"{num(base)}; {minimum - base} of the always-on replicas may be spot and vanish together. "
                         f"Set onDemandBaseCapacity to at least {minimum}")


@stack_policy("inference-health-checks",
              "Inference replicas sit behind load-balancer health checks: target groups check a path, and groups "
              "replace instances the load balancer finds unhealthy (healthCheckType ELB).", MANDATORY)
def health_checks(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    require(args, "inference")
    stack = view(args)
    for target_group in stack.of_type(*TARGET_GROUPS):
        check = get(target_group.props, "healthCheck", default={})
        protocol = str(get(check, "protocol", default=get(target_group.props, "protocol", default="HTTP"))).upper()
        if get(check, "enabled") is False:
            report_violation(f"{target_group.name} disables health checks; traffic would reach replicas still "
                             "loading weights", target_group.urn)
        elif protocol.startswith("HTTP") and not get(check, "path"):
            report_violation(f"{target_group.name} health-checks no path; check the server's readiness path (it "
                             "answers 200 only once the weights are loaded)", target_group.urn)
    for group in stack.of_type(ASG):
        attached = listed(get(group.props, "targetGroupArns")) or stack.dependencies_of(group, *TARGET_GROUPS)
        if not attached:
            report_violation(f"{group.name} is attached to no target group, so no load balancer checks its replicas",
                             group.urn)
        elif get(group.props, "healthCheckType", default="EC2") != "ELB":
            report_violation(f"{group.name} uses healthCheckType {get(group.props, 'healthCheckType', default='EC2')}; "
                             "use ELB so replicas the load balancer finds unhealthy are replaced", group.urn)


@stack_policy("inference-multi-zone", "Every inference region runs its replicas in two or more availability zones.",
              MANDATORY)
def multi_zone(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    require(args, "inference")
    stack = view(args)
    zones: dict[str, set[str]] = defaultdict(set)
    groups: dict[str, list[str]] = defaultdict(list)
    for group in stack.of_type(ASG):
        region = stack.region_of(group) or "?"
        groups[region].append(group.urn)
        zones[region].update(str(z) for z in get(group.props, "availabilityZones", default=[]))
        for subnet in stack.dependencies_of(group, SUBNET):
            zone = get(subnet.props, "availabilityZone", default=get(subnet.props, "availabilityZoneId"))
            if zone:
                zones[region].add(str(zone))
    for region, urns in sorted(groups.items()):
        if len(zones[region]) < 2:
            found = ", ".join(sorted(zones[region])) or "no zone"
            report_violation(f"{region}: replicas run in {found}; one zone outage would take the region down. Spread "
                             "the group over two or more zones", urns[0] if len(urns) == 1 else None)


@resource_policy("inference-no-training-hardware",
                 "Inference uses no EFA, no placement groups and no P-family instances (training hardware) unless "
                 "the pack's config allows it.", ADVISORY, types=(LAUNCH_TEMPLATE, ASG, INSTANCE, PLACEMENT_GROUP),
                 config={
                     "allow_efa": {"type": "boolean", "default": False, "description": "Allow EFA interfaces."},
                     "allow_placement_groups": {"type": "boolean", "default": False,
                                                "description": "Allow placement groups."},
                     "allow_p_family": {"type": "boolean", "default": False,
                                        "description": "Allow P-family (training-class) instance types."},
                 })
def no_training_hardware(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    require(args, "inference")
    config = args.get_config()
    props = args.props
    if args.resource_type == PLACEMENT_GROUP or (args.resource_type == ASG and has(props, "placementGroup")):
        if not config.get("allow_placement_groups", False):
            report_violation(f"{args.name}: placement groups pack replicas onto one rack, against spreading them "
                             "(allow_placement_groups to permit)")
    if args.resource_type == LAUNCH_TEMPLATE and not config.get("allow_efa", False):
        efa = [ni for ni in get(props, "networkInterfaces", default=[]) if get(ni, "interfaceType") in EFA_TYPES]
        if efa:
            report_violation(f"{args.name}: {len(efa)} EFA interface(s); replicas do not talk to each other "
                             "(allow_efa to permit)")
    if not config.get("allow_p_family", False):
        types = [get(props, "instanceType")] if args.resource_type in (LAUNCH_TEMPLATE, INSTANCE) else [
            get(o, "instanceType") for o in get(props, "mixedInstancesPolicy", "launchTemplate", "overrides", default=[])]
        p_family = sorted({str(t) for t in types if t and is_p_family(str(t))})
        if p_family:
            report_violation(f"{args.name}: {', '.join(p_family)} is training-class hardware; serve on G or Inf types "
                             "(allow_p_family to permit)")


def is_p_family(instance_type: str) -> bool:
    """p4d.24xlarge, p5.48xlarge, p6-b200.48xlarge: the family starts with p and a digit."""
    family = instance_type.split(".")[0]
    return len(family) > 1 and family[0] == "p" and family[1].isdigit()


__all__ = ["health_checks", "is_p_family", "multi_zone", "no_training_hardware", "on_demand_base"]
