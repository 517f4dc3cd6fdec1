"""Training clusters: EFA on every card that carries one, a cluster placement group, one
availability zone, and spot capacity only with checkpoints no further apart than the planner's bound."""

from __future__ import annotations

from pulumi_policy import ResourceValidationArgs, StackValidationArgs

from gpuinfra.graph import tokens, views
from gpuinfra.plan import TrainingPlan
from gpuinfra.plan.checkpoint import interval_within_bound
from gpuinfra.policy.facts import StackFacts, require
from gpuinfra.policy.rules.declare import MANDATORY, ReportViolation, resource_policy, stack_policy
from gpuinfra.policy.rules.groups import Group, groups
from gpuinfra.policy.rules.values import StackView, as_int, get, num, view
from gpuinfra.spec import TrainingSpec


def gpu_groups(stack: StackView, facts: StackFacts) -> list[Group]:
    """The groups of accelerator nodes (a Slurm controller or an EKS system pool needs no EFA fabric)."""

    def accelerated(name: str) -> bool:
        info = facts.catalog.instance(name)
        return info is not None and info.accelerator_count > 0

    return [g for g in groups(stack) if any(accelerated(t) for t in g.instance_types)]


@stack_policy(
    "training-efa-every-card",
    "Every training node group's launch templates put an EFA interface on every network card that carries one "
    "(the catalog's per-card data: p6-b300, for one, has none on card 0).",
    MANDATORY,
)
def efa_every_card(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args, "training")
    stack = view(args)
    for group in gpu_groups(stack, facts):
        info = facts.catalog.instance(group.instance_types[0]) if group.instance_types else None
        if info is None or not info.efa_cards:
            continue
        for template in stack.dependencies_of(group.resource, tokens.LAUNCH_TEMPLATE):
            cards = {
                as_int(get(ni, "networkCardIndex"))
                for ni in get(template.props, "networkInterfaces", default=[])
                if get(ni, "interfaceType") in views.EFA_TYPES
            }
            missing = sorted(set(info.efa_cards) - cards)
            if missing:
                shown = ", ".join(map(str, missing[:8])) + (" ..." if len(missing) > 8 else "")
                report_violation(
                    f"{template.name}: {info.name} has {len(info.efa_cards)} EFA-capable network cards but EFA is on "
                    f"{len(cards)}; cards without EFA: {shown}. NCCL traffic over the missing cards falls back "
                    "to TCP; add one efa-only interface per EFA card",
                    template.urn,
                )


@stack_policy(
    "training-cluster-placement-group",
    "Every training node group (Auto Scaling or EKS) launches into a placement group with strategy cluster.",
    MANDATORY,
)
def cluster_placement_group(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args, "training")
    for group in gpu_groups(view(args), facts):
        if group.max_size <= 1:
            continue
        strategies = sorted({str(get(pg.props, "strategy")) for pg in group.placement_groups})
        if not group.declares_placement or not group.placement_groups:
            report_violation(
                f"{group.name} launches into no placement group; EFA needs the nodes in one cluster placement group",
                group.urn,
            )
        elif strategies != ["cluster"]:
            report_violation(
                f"{group.name} uses a placement group with strategy {', '.join(strategies)}; use cluster", group.urn
            )


@stack_policy(
    "training-one-zone",
    "A training cluster's nodes and file system live in one availability zone (EFA cannot cross zones).",
    MANDATORY,
)
def one_zone(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args, "training")
    stack = view(args)
    zones: dict[str, list[str]] = {}
    users = [(g.resource, g.subnets) for g in gpu_groups(stack, facts)]
    users += [(fs, tuple(stack.dependencies_of(fs, tokens.SUBNET))) for fs in stack.of_type(tokens.LUSTRE)]
    for user, subnets in users:
        for zone in get(user.props, "availabilityZones", default=[]):
            zones.setdefault(str(zone), []).append(user.name)
        for subnet in subnets:
            zone = get(subnet.props, "availabilityZone", default=get(subnet.props, "availabilityZoneId"))
            if zone:
                zones.setdefault(str(zone), []).append(user.name)
    if len(zones) > 1:
        spread = "; ".join(f"{z}: {', '.join(sorted(set(u)))}" for z, u in sorted(zones.items()))
        report_violation(f"the cluster spans {len(zones)} zones ({spread}); EFA and the placement group need one")


@resource_policy(
    "training-spot-checkpointing",
    "Training runs on spot only with checkpointing at an interval no longer than the planner's bound.",
    MANDATORY,
    types=(tokens.ASG, tokens.EKS_NODE_GROUP, tokens.PCS_NODE_GROUP, tokens.LAUNCH_TEMPLATE),
)
def spot_checkpointing(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args, "training")
    spot = _spot_nodes(args)
    if spot == 0 or get(args.props, "tags", tokens.ELASTIC_PARTITION_TAG):
        return  # an elastic partition's spot nodes run the jobs that are not the gang (compute.elastic)
    spec, plan = facts.spec, facts.plan
    assert isinstance(spec, TrainingSpec) and isinstance(plan, TrainingPlan)
    what = f"{args.name} runs {spot} spot node(s)" if spot > 0 else f"{args.name} launches spot instances"
    if spec.checkpointing is None:
        report_violation(
            f"{what} without checkpointing; a reclaim loses every step since the job started. Add "
            "checkpointing or buy on-demand"
        )
    elif plan.checkpoint is None:
        report_violation(
            f"{what}, but the checkpoint interval cannot be bounded ({plan.checkpoint_note}); set "
            "checkpointing.write_bandwidth_gb_s"
        )
    elif not interval_within_bound(plan.checkpoint.interval_minutes, plan.checkpoint):
        ck = plan.checkpoint
        report_violation(
            f"{what} but checkpoints every {num(ck.interval_minutes)} min, longer than the bound of "
            f"{ck.max_interval_minutes:.0f} min (twice the Young/Daly optimum "
            f"{ck.young_interval_minutes:.0f} min); set checkpointing.interval_minutes to at most "
            f"{ck.max_interval_minutes:.0f}"
        )


def _spot_nodes(args: ResourceValidationArgs) -> int:
    """Spot nodes at maximum size, split as the group splits them (-1: a launch template that forces spot)."""
    if args.resource_type == tokens.LAUNCH_TEMPLATE:
        return -1 if get(args.props, "instanceMarketOptions", "marketType") == "spot" else 0
    if args.resource_type == tokens.PCS_NODE_GROUP:
        spot = get(args.props, "purchaseOption") == "SPOT"
        return as_int(get(args.props, "scalingConfiguration", "maxInstanceCount")) if spot else 0
    if args.resource_type == tokens.EKS_NODE_GROUP:
        spot = get(args.props, "capacityType") == "SPOT"
        return as_int(get(args.props, "scalingConfig", "maxSize")) if spot else 0
    return views.split(args.props, as_int(get(args.props, "maxSize")), None)[1]


__all__ = ["cluster_placement_group", "efa_every_card", "one_zone", "spot_checkpointing"]
