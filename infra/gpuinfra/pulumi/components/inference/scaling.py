"""One control loop per region over its groups (base on-demand, burst spot, on-demand overflow).

The signal: requests in flight (vLLM's num_requests_waiting + num_requests_running), summed over every
healthy replica of the region (each publishes under the fleet's dimension, not its group's), divided by
the combined in-service count of the groups (EC2 Auto Scaling group metrics). Metric math alarms drive
step-scaling policies on each group:

- base out: load per replica above the target; the base (on-demand, warm pool) scales first;
- burst out: the same signal, but only once the base is at its maximum (desired >= max), so the burst
  group takes the share above it that spot_burst_share gives it (the base's maximum is the on-demand part);
- spot short: a burst replica asked for but never launched (desired above in service plus pending) for
  SPOT_SHORT_PERIODS minutes moves one slot from the burst group to the on-demand overflow group: one alarm,
  two actions, overflow +1 and burst -1;
- burst in, then base in: below half the target for the scale-in window; overflow leaves first, spot only
  once the overflow group is empty, the base only when the burst group is empty.

Bounded by construction: the base's maximum is the on-demand part of max_replicas and the burst group's the
spot part; the overflow group only ever takes slots the burst group gives up (the transfer), and the burst
group scales out only into its maximum less both groups' desired capacity (the signal is capped so the step
it selects never adds more than that headroom). So base + burst + overflow never exceeds max_replicas, through
a spot shortage and the return of spot alike; the overflow's on-demand replicas leave first when the load falls.

A group at zero scales out: its alarm reads the region metric (published by the base's replicas) and the
groups' metrics (published by Auto Scaling for every group with metrics collection, whatever its size),
never data from its own absent instances. Missing data (no replica healthy yet) is notBreaching, so an
alarm waits rather than acting on a gap. CloudWatch re-invokes Auto Scaling actions every minute while
an alarm stays in ALARM (CloudWatch user guide, Alarm actions), and step scaling honours the instance
warm-up (EC2 Auto Scaling user guide, Step and simple scaling policies).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from gpuinfra.pulumi.components.inference.bootstrap import METRIC_NAME, METRIC_NAMESPACE

GROUP_METRICS = ["GroupInServiceInstances", "GroupPendingInstances", "GroupDesiredCapacity", "GroupMaxSize"]
"""Auto Scaling group metrics the alarms read (enabled on every group at 1-minute granularity)."""
PERIOD = 60


@dataclass(frozen=True)
class LoopArgs:
    name: str
    fleet: str
    base_group: str
    burst_group: str | None
    target_per_replica: float
    warmup_seconds: int
    scale_in_periods: int
    overflow_group: str | None = None


def _metric(query_id: str, namespace: str, metric: str, dimensions: dict[str, str], stat: str) -> dict[str, Any]:
    return {
        "id": query_id,
        "return_data": False,
        "metric": {
            "namespace": namespace,
            "metric_name": metric,
            "dimensions": dimensions,
            "period": PERIOD,
            "stat": stat,
        },
    }


def _group(query_id: str, group: str, metric: str) -> dict[str, Any]:
    return _metric(query_id, "AWS/AutoScaling", metric, {"AutoScalingGroupName": group}, "Average")


def load_per_replica(args: LoopArgs) -> tuple[list[dict[str, Any]], str]:
    """The queries and the expression of load per in-service replica (both groups)."""
    queries = [
        _metric("load", METRIC_NAMESPACE, METRIC_NAME, {"Fleet": args.fleet}, "Sum"),
        _group("base", args.base_group, "GroupInServiceInstances"),
    ]
    serving = "FILL(base, 0)"
    if args.burst_group:
        queries.append(_group("burst", args.burst_group, "GroupInServiceInstances"))
        serving += " + FILL(burst, 0)"
    if args.overflow_group:
        queries.append(_group("overflow", args.overflow_group, "GroupInServiceInstances"))
        serving += " + FILL(overflow, 0)"
    # No replica in service (the first boot): the division has no value, which the alarms treat as missing.
    return queries, f"load / ({serving})"


def _queries(queries: list[dict[str, Any]], signal: str, label: str) -> list[Any]:
    """The alarm's metric queries: `queries` (metrics and intermediate expressions) and the returned `signal`."""
    queries = [*queries, {"id": "signal", "expression": signal, "label": label, "return_data": True}]
    return [
        aws.cloudwatch.MetricAlarmMetricQueryArgs(
            id=q["id"],
            expression=q.get("expression"),
            label=q.get("label"),
            return_data=q["return_data"],
            metric=aws.cloudwatch.MetricAlarmMetricQueryMetricArgs(**q["metric"]) if "metric" in q else None,
        )
        for q in queries
    ]


def alarm_queries(args: LoopArgs) -> list[Any]:
    """Queries of one alarm: the load per replica as its signal."""
    queries, per_replica = load_per_replica(args)
    return _queries(queries, per_replica, "requests in flight per replica")


STEPS = ((0.0, 0.5, 1), (0.5, 1.0, 2), (1.0, None, 4))
"""Scale-out steps: +1, +2, +4 replicas as the load per replica exceeds the target by 0-50%, 50-100%, more
(bounds as fractions of the target, relative to the alarm's threshold, the target)."""


def _step_out(name: str, group: aws.autoscaling.Group, args: LoopArgs, o: pulumi.ResourceOptions) -> Any:
    t = args.target_per_replica
    return aws.autoscaling.Policy(
        name,
        autoscaling_group_name=group.name,
        policy_type="StepScaling",
        adjustment_type="ChangeInCapacity",
        estimated_instance_warmup=args.warmup_seconds,
        step_adjustments=[
            aws.autoscaling.PolicyStepAdjustmentArgs(
                metric_interval_lower_bound=f"{low * t:g}",
                metric_interval_upper_bound=None if high is None else f"{high * t:g}",
                scaling_adjustment=step,
            )
            for low, high, step in STEPS
        ],
        opts=o,
    )


def capped(signal: str, headroom: str, t: float) -> str:
    """The signal with its value held inside the step no larger than `headroom` replicas (0 without any): the
    step a policy selects from the metric (STEPS) then never adds more than the group may take."""
    one = (1 + (STEPS[0][0] + STEPS[0][1]) / 2) * t  # mid +1 interval, above the threshold
    two = (1 + (STEPS[1][0] + STEPS[1][1]) / 2) * t  # mid +2 interval
    return (
        f"IF({headroom} >= 4, {signal}, IF({headroom} >= 2, IF({signal} > {two:g}, {two:g}, {signal}), "
        f"IF({headroom} >= 1, IF({signal} > {one:g}, {one:g}, {signal}), 0)))"
    )


def _step_one(name: str, group: aws.autoscaling.Group, change: int, o: pulumi.ResourceOptions) -> Any:
    """One replica, whatever the metric (the spot-short transfer). No instance warm-up for the +1: the
    transfer's two halves must apply together at every invocation, or the burst would give more than the
    overflow takes."""
    return aws.autoscaling.Policy(
        name,
        autoscaling_group_name=group.name,
        policy_type="StepScaling",
        adjustment_type="ChangeInCapacity",
        estimated_instance_warmup=0 if change > 0 else None,
        step_adjustments=[
            aws.autoscaling.PolicyStepAdjustmentArgs(metric_interval_lower_bound="0", scaling_adjustment=change)
        ],
        opts=o,
    )


def _step_in(name: str, group: aws.autoscaling.Group, o: pulumi.ResourceOptions) -> Any:
    return aws.autoscaling.Policy(
        name,
        autoscaling_group_name=group.name,
        policy_type="StepScaling",
        adjustment_type="ChangeInCapacity",
        step_adjustments=[
            aws.autoscaling.PolicyStepAdjustmentArgs(metric_interval_upper_bound="0", scaling_adjustment=-1)
        ],
        opts=o,
    )


def _alarm(
    name: str,
    description: str,
    queries: list[Any],
    above: bool,
    threshold: float,
    periods: int,
    action: Any,
    o: pulumi.ResourceOptions,
    *more: Any,
) -> aws.cloudwatch.MetricAlarm:
    return aws.cloudwatch.MetricAlarm(
        name,
        alarm_description=description,
        comparison_operator="GreaterThanThreshold" if above else "LessThanThreshold",
        threshold=threshold,
        evaluation_periods=periods,
        datapoints_to_alarm=periods,
        metric_queries=queries,
        treat_missing_data="notBreaching",
        alarm_actions=[action.arn, *(m.arn for m in more)],
        opts=o,
    )


SPOT_SHORT_PERIODS = 10
"""Minutes a burst replica stays asked for but unlaunched (desired above in service plus pending: no spot
capacity in any of its pools) before its slot moves to the on-demand overflow group."""


def _expression(query_id: str, expression: str) -> dict[str, Any]:
    """An intermediate metric math result another expression of the alarm reads by its id."""
    return {"id": query_id, "expression": expression, "return_data": False}


def overflow_loop(
    args: LoopArgs, burst: aws.autoscaling.Group, overflow: aws.autoscaling.Group, o: pulumi.ResourceOptions
) -> None:
    """Spot short: one slot at a time from the burst group to the overflow group (their sum unchanged). In:
    below half the target, first of all groups (on-demand above plan is the dearest capacity)."""
    assert args.burst_group is not None
    t = args.target_per_replica
    unlaunched = [
        _group("burstdesired", args.burst_group, "GroupDesiredCapacity"),
        _group("burstinservice", args.burst_group, "GroupInServiceInstances"),
        _group("burstpending", args.burst_group, "GroupPendingInstances"),
    ]
    _alarm(
        f"{args.name}-spot-short",
        f"{args.fleet}: a spot replica asked for and not launched for {SPOT_SHORT_PERIODS} minutes: move its slot "
        "to the on-demand overflow group (overflow +1, burst -1; the region's total is unchanged)",
        _queries(
            unlaunched,
            "FILL(burstdesired, 0) - FILL(burstinservice, 0) - FILL(burstpending, 0)",
            "burst replicas asked for and not launched",
        ),
        True,
        0.5,
        SPOT_SHORT_PERIODS,
        _step_one(f"{args.name}-overflow-take", overflow, 1, o),
        o,
        _step_one(f"{args.name}-burst-give", burst, -1, o),
    )
    _alarm(
        f"{args.name}-overflow-in",
        f"{args.fleet}: requests in flight per replica below {t / 2:g}; remove an on-demand overflow replica first",
        alarm_queries(args),
        False,
        t / 2,
        args.scale_in_periods,
        _step_in(f"{args.name}-overflow-scale-in", overflow, o),
        o,
    )


def burst_out_queries(args: LoopArgs) -> list[Any]:
    """Load per replica once the base is full, capped to the burst group's headroom: its maximum less the
    desired capacity of the burst and overflow groups (the overflow holds slots the burst gave up). Nine
    metrics and three expressions: within an alarm's ten of each (CloudWatch user guide, alarm limits)."""
    assert args.burst_group is not None
    queries, per_replica = load_per_replica(args)
    queries += [
        _group("basedesired", args.base_group, "GroupDesiredCapacity"),
        _group("basemax", args.base_group, "GroupMaxSize"),
        _group("burstdesired", args.burst_group, "GroupDesiredCapacity"),
        _group("burstmax", args.burst_group, "GroupMaxSize"),
    ]
    headroom = "FILL(burstmax, 0) - FILL(burstdesired, 0)"
    if args.overflow_group:
        queries.append(_group("overflowdesired", args.overflow_group, "GroupDesiredCapacity"))
        headroom += " - FILL(overflowdesired, 0)"
    queries += [_expression("perreplica", per_replica), _expression("headroom", headroom)]
    signal = f"IF(basedesired >= basemax, {capped('perreplica', 'headroom', args.target_per_replica)}, 0)"
    return _queries(queries, signal, "requests in flight per replica (base full, capped to the burst's headroom)")


def region_loop(
    args: LoopArgs,
    base: aws.autoscaling.Group,
    burst: aws.autoscaling.Group | None,
    o: pulumi.ResourceOptions,
    overflow: aws.autoscaling.Group | None = None,
) -> None:
    """The alarms and step policies of one region's control loop: the base scales out first, spot above it (with
    its overflow), and in, the base last."""
    t = args.target_per_replica
    _alarm(
        f"{args.name}-base-out",
        f"{args.fleet}: requests in flight per replica above {t:g}; add on-demand replicas first",
        alarm_queries(args),
        True,
        t,
        2,
        _step_out(f"{args.name}-base-scale-out", base, args, o),
        o,
    )
    base_in = alarm_queries(args)
    if burst is not None and args.burst_group:
        burst_loop(args, burst, overflow, o)
        base_in = base_in_queries(args)
    _alarm(
        f"{args.name}-base-in",
        f"{args.fleet}: requests in flight per replica below {t / 2:g} and no spot replica left; remove an "
        "on-demand replica (the group's minimum keeps the floor)",
        base_in,
        False,
        t / 2,
        args.scale_in_periods,
        _step_in(f"{args.name}-base-scale-in", base, o),
        o,
    )


def burst_loop(
    args: LoopArgs, burst: aws.autoscaling.Group, overflow: aws.autoscaling.Group | None, o: pulumi.ResourceOptions
) -> None:
    """The spot group's out (once the base is full, within its headroom) and in (once the overflow is empty), and
    the overflow group's loop when it has one."""
    t = args.target_per_replica
    _alarm(
        f"{args.name}-burst-out",
        f"{args.fleet}: requests in flight per replica above {t:g} with the on-demand base at its maximum; "
        "add spot replicas, never more than the burst group's maximum less the burst and overflow groups' "
        "desired capacity",
        burst_out_queries(args),
        True,
        t,
        2,
        _step_out(f"{args.name}-burst-scale-out", burst, args, o),
        o,
    )
    burst_in = alarm_queries(args)
    if overflow is not None and args.overflow_group:
        overflow_loop(args, burst, overflow, o)
        # Spot goes only once the overflow group is empty (the gate returns t, which is not below t/2).
        queries, per_replica = load_per_replica(args)
        burst_in = _queries(
            [*queries, _group("overflowdesired", args.overflow_group, "GroupDesiredCapacity")],
            f"IF(FILL(overflowdesired, 0) == 0, {per_replica}, {t:g})",
            "requests in flight per replica (the overflow group empty)",
        )
    _alarm(
        f"{args.name}-burst-in",
        f"{args.fleet}: requests in flight per replica below {t / 2:g}; remove a spot replica first",
        burst_in,
        False,
        t / 2,
        args.scale_in_periods,
        _step_in(f"{args.name}-burst-scale-in", burst, o),
        o,
    )


def base_in_queries(args: LoopArgs) -> list[Any]:
    """Load per replica, gated while spot or overflow replicas remain: 0 < t/2 would remove a base replica, so the
    gate returns t. The overflow holds the burst's slots after a spot shortage (the burst at 0): it leaves before
    the base."""
    assert args.burst_group is not None
    above_base = [_group("burstdesired", args.burst_group, "GroupDesiredCapacity")]
    empty = "FILL(burstdesired, 0) == 0"
    if args.overflow_group:
        above_base.append(_group("overflowdesired", args.overflow_group, "GroupDesiredCapacity"))
        empty = "FILL(burstdesired, 0) + FILL(overflowdesired, 0) == 0"
    queries, per_replica = load_per_replica(args)
    return _queries(
        [*queries, *above_base],
        f"IF({empty}, {per_replica}, {args.target_per_replica:g})",
        "requests in flight per replica (the burst and overflow groups empty)",
    )


__all__ = [
    "GROUP_METRICS",
    "SPOT_SHORT_PERIODS",
    "STEPS",
    "LoopArgs",
    "alarm_queries",
    "base_in_queries",
    "burst_loop",
    "burst_out_queries",
    "capped",
    "load_per_replica",
    "overflow_loop",
    "region_loop",
]
