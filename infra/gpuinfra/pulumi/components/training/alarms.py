"""Alarms that reach someone: an SNS topic per stack, subscribed by the account's `alerts` (organization file), and
the alarms of a training (or fine-tuning) stack on it.

- FSx for Lustre free capacity (AWS/FSx FreeDataStorageCapacity, bytes, per FileSystemId: FSx for Lustre User Guide,
  "Amazon FSx for Lustre metrics"): below a fifth of the file system, checkpoints are near ENOSPC;
- unavailable Slurm nodes (gpuinfra/Training UnavailableNodes, published by the login node's repair loop every run,
  node_repair.py): above zero for half an hour means the loop did not bring the node back; missing data (the loop
  stopped) alarms too;
- GPU errors (gpuinfra/Training GpuErrors, published by a compute node's health check when it finds an Xid or an
  uncorrected ECC error: health-check.sh.j2);
- the checkpoint pruner (gpuinfra/Training PrunerRuns, published by each successful run on the login node): no
  successful run in an hour alarms, because a pruner that stops fills Lustre;
- failed AWS Batch jobs (fine-tuning): an EventBridge rule on "Batch Job State Change" events with status FAILED for
  the stack's queue (AWS Batch User Guide, "Batch job state change events"), delivered to the topic.

The topic policy lets CloudWatch and EventBridge publish for this account only (SNS Developer Guide, "Amazon SNS
access policy": aws:SourceAccount; EventBridge User Guide, "Permissions for Amazon SNS": a target topic's policy
must allow events.amazonaws.com).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpuinfra.pulumi.components.alerts import alert_topic, topic_policy
from gpuinfra.pulumi.components.training.gpu_metrics import NAMESPACE
from gpuinfra.spec.org import Alerts

TYPE = "gpuinfra:training:Alarms"

FREE_FRACTION = 0.2
"""Alarm below a fifth of the file system free: at 1,120 GB per checkpoint on 57,600 GiB that is ~10 checkpoints of
room, hours of run at the planner's intervals, time for someone to act."""
PERIOD_SECONDS = 300
UNAVAILABLE_PERIODS = 6
"""Half an hour: the repair loop replaces a failed node after 10 minutes and PCS boots the new one in minutes."""
GIB = 1024**3


@dataclass(frozen=True)
class AlarmArgs:
    stack: str
    account_id: str
    alerts: Alerts | None
    cluster: str
    lustre_id: pulumi.Input[str] | None = None
    lustre_capacity_gib: int = 0
    slurm: bool = False
    """The PCS stack's node, GPU and pruner alarms."""
    batch_queue_arn: pulumi.Input[str] | None = None


@dataclass(frozen=True)
class AlarmSpec:
    """An alarm on one of the cluster's metrics in gpuinfra/Training (CloudWatch PutMetricAlarm's fields)."""

    suffix: str
    description: str
    """After "<cluster>: "."""
    metric: str
    statistic: str
    comparison: str
    threshold: int
    periods: int
    """EvaluationPeriods, of PERIOD_SECONDS each."""
    missing: str
    """TreatMissingData: `breaching` where silence means the publisher stopped."""
    datapoints: int | None = None
    """DatapointsToAlarm; None: all of `periods`."""


SLURM_ALARMS = (
    AlarmSpec(
        "unavailable-nodes",
        "nodes drained or down for 30 min, or the repair loop stopped",
        "UnavailableNodes",
        "Minimum",
        "GreaterThanThreshold",
        0,
        UNAVAILABLE_PERIODS,
        "breaching",
    ),
    AlarmSpec(
        "gpu-errors",
        "a node reported a GPU Xid or an uncorrected ECC error",
        "GpuErrors",
        "Maximum",
        "GreaterThanThreshold",
        0,
        1,
        "notBreaching",
    ),
    AlarmSpec(
        "pruner",
        "no successful checkpoint pruning in an hour (Lustre fills)",
        "PrunerRuns",
        "Sum",
        "LessThanThreshold",
        1,
        12,
        "breaching",
        datapoints=12,
    ),
)
"""The PCS stack's node, GPU and pruner alarms (the module's docstring says what each watches and why)."""


class StackAlarms(pulumi.ComponentResource):
    topic: aws.sns.Topic
    alarms: list[aws.cloudwatch.MetricAlarm]

    def __init__(
        self,
        name: str,
        args: AlarmArgs,
        provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
        workload: str = "training",
    ) -> None:
        """`workload`: the type token's module (gpuinfra:<workload>:Alarms), the stack's own workload."""
        super().__init__(f"gpuinfra:{workload}:Alarms", name, None, opts)
        o = pulumi.ResourceOptions(parent=self, provider=provider)
        self.topic = alert_topic(name, args.account_id, args.alerts, o)
        self.alarms = self._alarms(name, args, o)
        if args.batch_queue_arn is not None:
            self._batch_failures(name, args.batch_queue_arn, o)
        self.register_outputs({"topic": self.topic.arn})

    def _alarm(self, name: str, o: pulumi.ResourceOptions, **kwargs: object) -> aws.cloudwatch.MetricAlarm:
        return aws.cloudwatch.MetricAlarm(
            name, alarm_actions=[self.topic.arn], ok_actions=[self.topic.arn], period=PERIOD_SECONDS, opts=o, **kwargs
        )

    def _alarms(self, name: str, args: AlarmArgs, o: pulumi.ResourceOptions) -> list[aws.cloudwatch.MetricAlarm]:
        out = []
        if args.lustre_id is not None and args.lustre_capacity_gib:
            out.append(
                self._alarm(
                    f"{name}-lustre-free",
                    o,
                    alarm_description=f"{args.cluster}: Lustre below {FREE_FRACTION:.0%} free (checkpoints near full)",
                    namespace="AWS/FSx",
                    metric_name="FreeDataStorageCapacity",
                    dimensions={"FileSystemId": args.lustre_id},
                    statistic="Minimum",
                    comparison_operator="LessThanThreshold",
                    threshold=round(args.lustre_capacity_gib * GIB * FREE_FRACTION),
                    evaluation_periods=2,
                    treat_missing_data="missing",
                )
            )
        if args.slurm:
            out += [self._metric_alarm(f"{name}-{spec.suffix}", spec, args.cluster, o) for spec in SLURM_ALARMS]
        return out

    def _metric_alarm(
        self, name: str, spec: AlarmSpec, cluster: str, o: pulumi.ResourceOptions
    ) -> aws.cloudwatch.MetricAlarm:
        """One of the cluster's own metrics (gpuinfra/Training, dimension Cluster), alarmed as its spec says."""
        return self._alarm(
            name,
            o,
            alarm_description=f"{cluster}: {spec.description}",
            namespace=NAMESPACE,
            metric_name=spec.metric,
            dimensions={"Cluster": cluster},
            statistic=spec.statistic,
            comparison_operator=spec.comparison,
            threshold=spec.threshold,
            evaluation_periods=spec.periods,
            treat_missing_data=spec.missing,
            **({"datapoints_to_alarm": spec.datapoints} if spec.datapoints is not None else {}),
        )

    def _batch_failures(self, name: str, queue_arn: pulumi.Input[str], o: pulumi.ResourceOptions) -> None:
        pattern = pulumi.Output.from_input(queue_arn).apply(
            lambda arn: json.dumps(
                {
                    "source": ["aws.batch"],
                    "detail-type": ["Batch Job State Change"],
                    "detail": {"status": ["FAILED"], "jobQueue": [arn]},
                },
                sort_keys=True,
            )
        )
        rule = aws.cloudwatch.EventRule(
            f"{name}-batch-failed", description="a fine-tuning job failed", event_pattern=pattern, opts=o
        )
        aws.cloudwatch.EventTarget(f"{name}-batch-failed-target", rule=rule.name, arn=self.topic.arn, opts=o)


__all__ = [
    "FREE_FRACTION",
    "NAMESPACE",
    "SLURM_ALARMS",
    "TYPE",
    "AlarmArgs",
    "AlarmSpec",
    "StackAlarms",
    "topic_policy",
]
