"""A serving region's service-level alarms: what says the region is failing its users before they say so.

From the load balancer (AWS/ApplicationELB, per target group and load balancer: ELB user guide, "CloudWatch
metrics for your Application Load Balancer"):
- the share of requests the replicas answer with a 5xx, HTTPCode_Target_5XX_Count / RequestCount as metric math
  (no traffic is no data, not an error: missing data does not breach);
- TargetResponseTime p90 and p99 against the spec's end-to-end latency target (requests.latency_target_seconds);
  for a streamed answer the ALB measures until the response headers, so these watch non-streamed requests and
  the time to first byte of streamed ones;
- UnHealthyHostCount: a replica failing its health checks for the whole evaluation window.
An NLB has no HTTP metrics: it gets the unhealthy-host alarm only (AWS/NetworkELB).

From vLLM, per replica (the metric publisher, templates/inference/queue-metric.sh.j2): the mean time to first
token and the mean inter-token latency of the minute, alarmed against the spec's slo targets when it gives them.

Every alarm pages: it notifies the region's alert topic (components/alerts.py, subscribed by the account's `alerts` in
the organization file) on ALARM and OK; an account without alerts gets alarms without actions (their state is in the
console and the API: docs/inference-operations.md)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpuinfra.pulumi.components.alerts import notify
from gpuinfra.pulumi.components.inference.bootstrap import ITL_METRIC, METRIC_NAMESPACE, TTFT_METRIC

PERIOD = 60
"""Seconds per datapoint: ALB metrics are published every minute (standard resolution)."""


@dataclass(frozen=True)
class SloArgs:
    fleet: str
    region: str
    alb: bool
    load_balancer_suffix: pulumi.Input[str]
    """`app/<name>/<id>` (the LoadBalancer dimension)."""
    target_group_suffix: pulumi.Input[str]
    """`targetgroup/<name>/<id>` (the TargetGroup dimension)."""
    latency_target_seconds: float
    error_rate_percent: float
    evaluation_minutes: int
    ttft_seconds: float | None = None
    inter_token_seconds: float | None = None
    topic_arn: pulumi.Input[str] | None = None
    """The region's alert topic; None: the account has no `alerts`."""


@dataclass(frozen=True)
class Alarm:
    """One alarm's varying part; `alarm` adds the shared period, window and actions."""

    key: str
    description: str
    threshold: float
    comparison: str = "GreaterThanThreshold"
    namespace: str | None = None
    metric_name: str | None = None
    dimensions: pulumi.Input[dict[str, pulumi.Input[str]]] | None = None
    statistic: str | None = None
    extended_statistic: str | None = None
    queries: list[aws.cloudwatch.MetricAlarmMetricQueryArgs] | None = None


def alarm_name(fleet: str, region: str, key: str) -> str:
    """`<fleet>-<region>-<key>`: one name per alarm, readable in the console's alarm list."""
    return f"{fleet}-{region}-{key}"


def error_share_queries(args: SloArgs) -> list[aws.cloudwatch.MetricAlarmMetricQueryArgs]:
    """100 * 5xx / requests per minute. FILL(errors, 0): the 5xx count has no datapoint in a minute without a
    5xx; a minute without requests has no RequestCount, so no share (missing, not breaching)."""
    dims = {"LoadBalancer": args.load_balancer_suffix, "TargetGroup": args.target_group_suffix}

    def metric(query_id: str, name: str) -> aws.cloudwatch.MetricAlarmMetricQueryArgs:
        return aws.cloudwatch.MetricAlarmMetricQueryArgs(
            id=query_id,
            return_data=False,
            metric=aws.cloudwatch.MetricAlarmMetricQueryMetricArgs(
                namespace="AWS/ApplicationELB", metric_name=name, dimensions=dims, period=PERIOD, stat="Sum"
            ),
        )

    return [
        metric("errors", "HTTPCode_Target_5XX_Count"),
        metric("requests", "RequestCount"),
        aws.cloudwatch.MetricAlarmMetricQueryArgs(
            id="share",
            expression="100 * FILL(errors, 0) / requests",
            label="percent of requests answered 5xx by the replicas",
            return_data=True,
        ),
    ]


def load_balancer_alarms(args: SloArgs) -> list[Alarm]:
    """Errors, response time and unhealthy replicas, from the load balancer's own metrics."""
    dims = {"LoadBalancer": args.load_balancer_suffix, "TargetGroup": args.target_group_suffix}
    unhealthy = Alarm(
        "unhealthy-replica",
        "a replica failed its load balancer health checks for the whole window (ELB UnHealthyHostCount)",
        0,
        namespace="AWS/ApplicationELB" if args.alb else "AWS/NetworkELB",
        metric_name="UnHealthyHostCount",
        dimensions=dims,
        statistic="Minimum",
    )
    if not args.alb:
        return [unhealthy]
    target = args.latency_target_seconds
    return [
        Alarm(
            "5xx-share",
            f"more than {args.error_rate_percent:g}% of requests answered 5xx by the replicas",
            args.error_rate_percent,
            queries=error_share_queries(args),
        ),
        *(
            Alarm(
                f"response-time-{p}",
                f"TargetResponseTime {p} above the {target:g} s latency target",
                target,
                namespace="AWS/ApplicationELB",
                metric_name="TargetResponseTime",
                dimensions=dims,
                extended_statistic=p,
            )
            for p in ("p90", "p99")
        ),
        unhealthy,
    ]


def server_alarms(args: SloArgs) -> list[Alarm]:
    """Time to first token and inter-token latency (the replicas' minute means, averaged over the region)."""
    out = []
    for key, metric, target, what in (
        ("ttft", TTFT_METRIC, args.ttft_seconds, "time to first token"),
        ("inter-token", ITL_METRIC, args.inter_token_seconds, "inter-token latency"),
    ):
        if target is not None:
            out.append(
                Alarm(
                    key,
                    f"mean {what} above its {target:g} s target (vLLM, averaged over the region's replicas)",
                    target,
                    namespace=METRIC_NAMESPACE,
                    metric_name=metric,
                    dimensions={"Fleet": args.fleet},
                    statistic="Average",
                )
            )
    return out


def alarm(args: SloArgs, spec: Alarm, o: pulumi.ResourceOptions) -> aws.cloudwatch.MetricAlarm:
    """`spec` over `evaluation_minutes` consecutive minutes; missing data never breaches (no traffic, no
    replica in service yet: the no-healthy-replica alarm of endpoint.py covers an empty region)."""
    single = spec.queries is None
    return aws.cloudwatch.MetricAlarm(
        alarm_name(args.fleet, args.region, spec.key),
        name=alarm_name(args.fleet, args.region, spec.key),
        alarm_description=spec.description,
        namespace=spec.namespace,
        metric_name=spec.metric_name,
        dimensions=spec.dimensions,
        statistic=spec.statistic,
        extended_statistic=spec.extended_statistic,
        period=PERIOD if single else None,
        metric_queries=spec.queries,
        evaluation_periods=args.evaluation_minutes,
        datapoints_to_alarm=args.evaluation_minutes,
        threshold=spec.threshold,
        comparison_operator=spec.comparison,
        treat_missing_data="notBreaching",
        opts=o,
        **notify(args.topic_arn),
    )


STOPS_ROLLOUT = ("5xx-share",)
"""The SLO alarms that also stop an instance refresh (rollout.instance_refresh): a canary that passes its health
checks but answers with errors (a bad model or image version) raises the region's 5xx share; one canary in ten
answering only 5xx is a share of 10%, far above the 1% default. Latency alarms do not stop a rollout: the
surge of a refresh itself may slow the region."""


def slo_alarms(args: SloArgs, o: pulumi.ResourceOptions) -> dict[str, aws.cloudwatch.MetricAlarm]:
    """Every service-level alarm of the region, by key."""
    return {spec.key: alarm(args, spec, o) for spec in (*load_balancer_alarms(args), *server_alarms(args))}


__all__ = [
    "PERIOD",
    "STOPS_ROLLOUT",
    "Alarm",
    "SloArgs",
    "alarm_name",
    "error_share_queries",
    "load_balancer_alarms",
    "slo_alarms",
]
