"""Replica floors: an always-on floor spread over the region's zones, and scheduled floors that come back down."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.plan import InferencePlan
from gpuinfra.spec import InferenceSpec
from gpuinfra.validators.base import Failure, Level, rule

AZ_BALANCE = "https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-availability-zone-balanced.html"
"""EC2 Auto Scaling UG, Availability Zone distribution: the group keeps an equal number of instances in each
enabled zone, so a floor of n replicas covers at most n zones."""
SCHEDULED_ACTIONS = "https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-scheduled-scaling.html"
"""EC2 Auto Scaling UG, scheduled scaling: each recurrence sets the group's minimum (and maximum) and nothing
restores the earlier value; a raised floor stays until another action lowers it."""


@rule(Level.WARNING)
def replicas_below_zones(spec: InferenceSpec, plan: InferencePlan) -> Iterator[Failure]:
    """An always-on floor below the region's zone count runs in fewer zones than the group spans: with
    min_replicas 1 the region's trough is served from one zone, and losing it leaves no replica until a new
    one has cold-started elsewhere (the group spans the zones, so inference-multi-zone passes)."""
    if spec.platform != "ec2":
        return  # a cluster's zones are the cluster's, not the spec's
    for i, (region, rp) in enumerate(zip(spec.regions, plan.regions, strict=True)):
        if region.min_replicas < len(rp.zones):
            yield Failure(
                f"{region.region}: min_replicas {region.min_replicas} across {len(rp.zones)} zones: the group "
                f"balances instances over its zones ({AZ_BALANCE}), so at the floor "
                f"{len(rp.zones) - region.min_replicas} zone(s) hold no replica and a zone's loss leaves the "
                f"region empty for a cold start ({rp.cold_start_seconds:,.0f} s)",
                ("regions", i, "min_replicas"),
                f"write `min_replicas: {len(rp.zones)}` in the region's entry, or suppress replicas-below-zones where "
                "global routing carries the region's trough elsewhere while it relaunches",
            )


@rule(Level.WARNING)
def schedule_floor_never_lowered(spec: InferenceSpec, plan: InferencePlan) -> Iterator[Failure]:
    """A schedule that raises a region's floor above min_replicas needs a paired action that brings it back
    (each scheduled action sets the minimum and nothing restores it): otherwise from its first recurrence on the
    region pays for the raised floor every hour, which the plan and its cost do not show."""
    schedules = spec.autoscaling.schedules
    if spec.platform != "ec2" or not schedules:
        return
    for j, schedule in enumerate(schedules):
        for region, rp in zip(spec.regions, plan.regions, strict=True):
            # the base group's floor as the component sets it: clamped to the on-demand maximum
            raised = min(schedule.min_replicas, rp.max_on_demand)
            restored = any(min(s.min_replicas, rp.max_on_demand) <= region.min_replicas for s in schedules)
            if raised > region.min_replicas and not restored:
                yield Failure(
                    f"schedule {schedule.name} raises {region.region}'s floor from {region.min_replicas} to "
                    f"{raised} and no schedule lowers it back: each recurrence sets the minimum and nothing "
                    f"restores it ({SCHEDULED_ACTIONS}), so the region runs {raised} replicas around the clock",
                    ("autoscaling", "schedules", j, "min_replicas"),
                    "add an entry to `autoscaling.schedules` at the end of the peak with "
                    f"`min_replicas: {region.min_replicas}`, or write `min_replicas: {raised}` in {region.region}'s "
                    "regions[] entry",
                )
                break  # one finding per schedule, at its first region
