"""A replica group's rollout: the instance refresh a new launch template version starts (a canary checkpoint,
a soak, then the rest), the region's alarms that stop it, and auto rollback where AWS supports it
(plan/rollout.py has the rules and their sources).

What rolls back, and to what: the provider (terraform-provider-aws r/autoscaling_group, which pulumi-aws
bridges) sends UpdateAutoScalingGroup with the new template version and only then StartInstanceRefresh,
with DesiredConfiguration set to that same version when auto_rollback is on (group.go
expandStartInstanceRefreshInput: "The AutoRollback parameter cannot be set to true when the
DesiredConfiguration parameter is empty"). A rollback restores "the configuration that you last saved on
the Auto Scaling group before starting the instance refresh" (user guide, instance-refresh-rollback), which
the update has already made the new one (hashicorp/terraform-provider-aws#34189, open). So what reliably
protects the fleet here is the alarm stopping the refresh at the canary checkpoint; the way back is a
revert of the spec (a new template version with the old content) and `pulumi up` (docs/inference-operations.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from gpuinfra.plan.rollout import (
    ALARM_PERIOD_SECONDS,
    ALARM_PERIODS,
    ALARM_WINDOW_SECONDS,
    CHECKPOINTS,
    checkpoint_delay,
)


def rollout_alarms(
    name: str,
    alb: bool,
    load_balancer_suffix: pulumi.Input[str],
    target_group_suffix: pulumi.Input[str],
    o: pulumi.ResourceOptions,
) -> list[aws.cloudwatch.MetricAlarm]:
    """The alarms whose ALARM state stops (and, where supported, rolls back) a refresh of the region's groups.

    One for now: a replica behind the region's target group failing its health checks for the whole window
    (UnHealthyHostCount, Maximum >= 1). Every group of the region registers in that one target group, so the
    alarm watches the canary of each. UnHealthyHostCount exists for ALB and NLB target groups alike (ELB user
    guides, CloudWatch metrics), unlike the ALB-only HTTPCode_Target_5XX_Count. No data (no target
    registered) is not a failure of the rollout: notBreaching. Other modules (SLO alarms) extend this list.
    """
    return [
        aws.cloudwatch.MetricAlarm(
            f"{name}-rollout-unhealthy",
            alarm_description="a replica fails its load balancer health checks: stops an instance refresh",
            namespace="AWS/ApplicationELB" if alb else "AWS/NetworkELB",
            metric_name="UnHealthyHostCount",
            dimensions={"TargetGroup": target_group_suffix, "LoadBalancer": load_balancer_suffix},
            statistic="Maximum",
            period=ALARM_PERIOD_SECONDS,
            evaluation_periods=ALARM_PERIODS,
            datapoints_to_alarm=ALARM_PERIODS,
            threshold=1,
            comparison_operator="GreaterThanOrEqualToThreshold",
            treat_missing_data="notBreaching",
            opts=o,
        )
    ]


def instance_refresh(
    cold_start_seconds: float,
    alarm_names: Sequence[pulumi.Input[str]] = (),
    rollback: bool = False,
    alarm_window_seconds: int = ALARM_WINDOW_SECONDS,
) -> aws.autoscaling.GroupInstanceRefreshArgs:
    """Roll every instance onto a new launch template version, warm-pool instances included.

    The provider starts a refresh when the group's launch template (id or version) changes, and never for
    `$Latest` (terraform-provider-aws, r/autoscaling_group, instance_refresh: "A refresh will not start when
    version = "$Latest" is configured"); a refresh replaces the warm pool's instances after the in-service
    ones (EC2 Auto Scaling API, InstanceRefreshWarmPoolProgress). Launch before terminate: keep 100% healthy
    and go up to 200% while replacing, so a 2-instance group never drops to one (RefreshPreferences).
    Checkpoints: the canary share first, a soak of checkpoint_delay, then the rest; an alarm in ALARM fails
    the refresh ("CloudWatch alarms can be used to identify any issues and fail the operation",
    RefreshPreferences.AlarmSpecification), and with `rollback` AWS also undoes it (see the module docstring
    for what that restores through this provider).
    """
    return aws.autoscaling.GroupInstanceRefreshArgs(
        strategy="Rolling",
        preferences=aws.autoscaling.GroupInstanceRefreshPreferencesArgs(
            min_healthy_percentage=100,
            max_healthy_percentage=200,
            instance_warmup=str(int(cold_start_seconds)),
            skip_matching=True,
            checkpoint_percentages=list(CHECKPOINTS),
            checkpoint_delay=str(checkpoint_delay(cold_start_seconds, alarm_window_seconds)),
            alarm_specification=aws.autoscaling.GroupInstanceRefreshPreferencesAlarmSpecificationArgs(
                alarms=list(alarm_names)
            )
            if alarm_names
            else None,
            auto_rollback=True if rollback else None,
        ),
    )


__all__ = ["instance_refresh", "rollout_alarms"]
