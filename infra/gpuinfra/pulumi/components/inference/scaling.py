"""One control loop per region over both groups (base on-demand, burst spot).

The signal: requests in flight (vLLM's num_requests_waiting + num_requests_running), summed over every
healthy replica of the region (each publishes under the fleet's dimension, not its group's), divided by
the combined in-service count of both groups (EC2 Auto Scaling group metrics). Metric math alarms drive
step-scaling policies on each group:

- base out: load per replica above the target; the base (on-demand, warm pool) scales first;
- burst out: the same signal, but only once the base is at its maximum (desired >= max), so the burst
  group takes the share above it that spot_burst_share gives it (the base's maximum is the on-demand part);
- burst in, then base in: below half the target for the scale-in window; the base shrinks only when
  the burst group is empty.

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

GROUP_METRICS = ["GroupInServiceInstances", "GroupDesiredCapacity", "GroupMaxSize"]
"""Auto Scaling group metrics the alarms read (enabled on both groups at 1-minute granularity)."""
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


def alarm_queries(args: LoopArgs, gate: str | None = None, extra: list[dict[str, Any]] | None = None) -> list[Any]:
    """Queries of one alarm: the load per replica, optionally gated (IF(gate, per_replica, 0))."""
    queries, per_replica = load_per_replica(args)
    queries = queries + (extra or [])
    expression = per_replica if gate is None else f"IF({gate}, {per_replica}, 0)"
    queries.append(
        {"id": "signal", "expression": expression, "label": "requests in flight per replica", "return_data": True}
    )
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


def _step_out(name: str, group: aws.autoscaling.Group, args: LoopArgs, o: pulumi.ResourceOptions) -> Any:
    """+1, +2, +4 replicas as the load per replica exceeds the target by 0-50%, 50-100%, more."""
    t = args.target_per_replica
    return aws.autoscaling.Policy(
        name,
        autoscaling_group_name=group.name,
        policy_type="StepScaling",
        adjustment_type="ChangeInCapacity",
        estimated_instance_warmup=args.warmup_seconds,
        step_adjustments=[
            aws.autoscaling.PolicyStepAdjustmentArgs(
                metric_interval_lower_bound="0", metric_interval_upper_bound=f"{t / 2:g}", scaling_adjustment=1
            ),
            aws.autoscaling.PolicyStepAdjustmentArgs(
                metric_interval_lower_bound=f"{t / 2:g}", metric_interval_upper_bound=f"{t:g}", scaling_adjustment=2
            ),
            aws.autoscaling.PolicyStepAdjustmentArgs(metric_interval_lower_bound=f"{t:g}", scaling_adjustment=4),
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
        alarm_actions=[action.arn],
        opts=o,
    )


SPOT_SHORT_PERIODS = 10
"""Minutes the burst group's desired capacity stays above its in-service count (spot not fulfilled, counted
beyond a cold start's launch time) before the on-demand overflow group takes the share."""


def overflow_loop(args: LoopArgs, overflow: aws.autoscaling.Group, o: pulumi.ResourceOptions) -> None:
    """Out: load above target, the base at its maximum, and spot short (burst desired > in service for
    SPOT_SHORT_PERIODS minutes). In: below half the target, first of all groups (on-demand above plan is the
    dearest capacity)."""
    assert args.burst_group is not None
    t = args.target_per_replica
    spot_short = [
        _group("basedesired", args.base_group, "GroupDesiredCapacity"),
        _group("basemax", args.base_group, "GroupMaxSize"),
        _group("burstdesired", args.burst_group, "GroupDesiredCapacity"),
        _group("burstinservice", args.burst_group, "GroupInServiceInstances"),
    ]
    gate = "basedesired >= basemax AND FILL(burstdesired, 0) - FILL(burstinservice, 0) >= 1"
    _alarm(
        f"{args.name}-overflow-out",
        f"{args.fleet}: spot capacity unfulfilled (burst desired above in service for {SPOT_SHORT_PERIODS} "
        f"minutes) with requests in flight per replica above {t:g}: add on-demand overflow replicas",
        alarm_queries(args, gate, spot_short),
        True,
        t,
        SPOT_SHORT_PERIODS,
        _step_out(f"{args.name}-overflow-scale-out", overflow, args, o),
        o,
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


def region_loop(
    args: LoopArgs,
    base: aws.autoscaling.Group,
    burst: aws.autoscaling.Group | None,
    o: pulumi.ResourceOptions,
    overflow: aws.autoscaling.Group | None = None,
) -> None:
    """The alarms and step policies of one region's control loop."""
    t = args.target_per_replica
    n = args.name
    _alarm(
        f"{n}-base-out",
        f"{args.fleet}: requests in flight per replica above {t:g}; add on-demand replicas first",
        alarm_queries(args),
        True,
        t,
        2,
        _step_out(f"{n}-base-scale-out", base, args, o),
        o,
    )
    base_full = [
        _group("basedesired", args.base_group, "GroupDesiredCapacity"),
        _group("basemax", args.base_group, "GroupMaxSize"),
    ]
    if burst is not None and args.burst_group:
        _alarm(
            f"{n}-burst-out",
            f"{args.fleet}: requests in flight per replica above {t:g} with the on-demand base at its maximum; "
            "add spot replicas (this alarm reads no metric of the burst group's own instances)",
            alarm_queries(args, "basedesired >= basemax", base_full),
            True,
            t,
            2,
            _step_out(f"{n}-burst-scale-out", burst, args, o),
            o,
        )
        burst_in = alarm_queries(args)
        if overflow is not None and args.overflow_group:
            overflow_loop(args, overflow, o)
            # Spot goes only once the overflow group is empty (the gate returns t, which is not below t/2).
            burst_in = alarm_queries(
                args, None, [_group("overflowdesired", args.overflow_group, "GroupDesiredCapacity")]
            )
            burst_in[-1] = aws.cloudwatch.MetricAlarmMetricQueryArgs(
                id="signal",
                expression=f"IF(FILL(overflowdesired, 0) == 0, {load_per_replica(args)[1]}, {t:g})",
                label="requests in flight per replica (the overflow group empty)",
                return_data=True,
            )
        _alarm(
            f"{n}-burst-in",
            f"{args.fleet}: requests in flight per replica below {t / 2:g}; remove a spot replica first",
            burst_in,
            False,
            t / 2,
            args.scale_in_periods,
            _step_in(f"{n}-burst-scale-in", burst, o),
            o,
        )
        burst_desired = [_group("burstdesired", args.burst_group, "GroupDesiredCapacity")]
        base_in_queries = alarm_queries(args, "FILL(burstdesired, 0) == 0", burst_desired)
        # Gated to 0 while spot replicas remain: 0 < t/2 would remove a base replica, so the gate returns t.
        base_in_queries[-1] = aws.cloudwatch.MetricAlarmMetricQueryArgs(
            id="signal",
            expression=f"IF(FILL(burstdesired, 0) == 0, {load_per_replica(args)[1]}, {t:g})",
            label="requests in flight per replica (the burst group empty)",
            return_data=True,
        )
    else:
        base_in_queries = alarm_queries(args)
    _alarm(
        f"{n}-base-in",
        f"{args.fleet}: requests in flight per replica below {t / 2:g} and no spot replica left; remove an "
        "on-demand replica (the group's minimum keeps the floor)",
        base_in_queries,
        False,
        t / 2,
        args.scale_in_periods,
        _step_in(f"{n}-base-scale-in", base, o),
        o,
    )


__all__ = [
    "GROUP_METRICS",
    "SPOT_SHORT_PERIODS",
    "LoopArgs",
    "alarm_queries",
    "load_per_replica",
    "overflow_loop",
    "region_loop",
]
