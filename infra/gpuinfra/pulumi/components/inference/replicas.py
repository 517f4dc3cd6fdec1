"""Serving replicas in one region: the on-demand base group (min replicas, warm pool, instance refresh),
the spot burst group above it (several instance types), lifecycle hooks, and one region control loop.

Why two groups: EC2 Auto Scaling rejects a warm pool on a group with a mixed instances policy or spot
(PutWarmPool API reference). The base keeps the warm pool; the burst group holds only the spot share
above the base. Both sit behind one target group; scaling.py drives both from one region-level signal.

Lifecycle hooks are created with the groups (initial lifecycle hooks), so no instance ever launches
without them: the launch hook keeps a warm-pool instance running until image and weights are on its
root volume (EC2 Auto Scaling user guide, warm pool instance lifecycle: without a hook the instance is
stopped as soon as it launches, before user data has run), and keeps a new replica out of service until
its server is healthy; the terminating hook lets it finish its generations.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from gpuinfra.plan.coldstart import ROOT_VOLUME_THROUGHPUT_MIB_S
from gpuinfra.plan.rollout import ALARM_WINDOW_SECONDS, REPLICATION_SLA_SECONDS, pinned_ssm, rollback_blocker
from gpuinfra.pulumi.components import iam
from gpuinfra.pulumi.components.base import child, group_tags
from gpuinfra.pulumi.components.inference.bootstrap import LAUNCH_HOOK, METRIC_NAME, METRIC_NAMESPACE, TERMINATE_HOOK
from gpuinfra.pulumi.components.inference.rollout import instance_refresh
from gpuinfra.pulumi.components.inference.scaling import GROUP_METRICS, LoopArgs, region_loop
from gpuinfra.pulumi.components.profiles import instance_identity

TYPE = "gpuinfra:inference:Replicas"


@dataclass(frozen=True)
class ScheduleArgs:
    name: str
    recurrence: str
    min_replicas: int
    max_replicas: int | None
    time_zone: str = "Etc/UTC"
    """IANA time zone the recurrence runs in (plan/schedules.py: the region's own by default)."""


@dataclass(frozen=True)
class ReplicasArgs:
    fleet: str
    region: str
    instance_type: str
    image_id: str
    root_volume_gib: int
    min_replicas: int
    max_on_demand: int
    max_spot: int
    expected_on_demand: int
    expected_spot: int
    warm_pool: int
    cold_start_seconds: float
    drain_seconds: int
    spot_types: Sequence[str]
    account_id: str
    api_key_secret: str | None
    private_subnet_ids: Sequence[pulumi.Input[str]]
    security_group_id: pulumi.Input[str]
    target_group_arn: pulumi.Input[str]
    registry_bucket: str
    model_prefix: str
    registry_account_id: str
    user_data: str
    target_queue_depth: float
    scale_out_cooldown_seconds: int
    scale_in_cooldown_seconds: int
    schedules: Sequence[ScheduleArgs]
    predictive: bool
    tags: dict[str, str]
    image_prefix: str | None = None
    """ECR repository prefix the server image comes from: the fleet's mirror or a pull-through cache (None: pulled
    from its registry directly)."""
    image_import: bool = False
    """A pull-through cache: the first pull creates the repository and imports the image."""
    rollout_alarms: Sequence[pulumi.Input[str]] = ()
    """Names of the alarms that stop an instance refresh of the region's groups (rollout.rollout_alarms)."""
    rollout_window_seconds: int = ALARM_WINDOW_SECONDS
    """The longest evaluation window of those alarms: the canary's soak covers it."""


def group_names(fleet: str, region: str) -> tuple[str, str]:
    return f"{fleet}-{region}-base", f"{fleet}-{region}-burst"


def overflow_name(fleet: str, region: str) -> str:
    """The on-demand group that takes the burst share while spot capacity cannot be had."""
    return f"{fleet}-{region}-overflow"


HOOK_MARGIN_SECONDS = 300
"""Lifecycle hook heartbeat beyond the modelled cold start (or drain) before the default result applies."""
MAX_HEARTBEAT_SECONDS = 7200
"""HeartbeatTimeout's maximum (PutLifecycleHook API reference)."""


LAUNCH_DEADLINE_FACTOR = 3
"""A launch still not healthy after this many planned cold starts (plus the margin) is abandoned by the
instance itself; until then it records heartbeats, so a load slower than planned is not cut off."""


def launch_heartbeat(cold_start_seconds: float) -> int:
    """The launch hook's timeout: the planned cold start plus HOOK_MARGIN_SECONDS; heartbeats restart it."""
    return min(MAX_HEARTBEAT_SECONDS, int(cold_start_seconds) + HOOK_MARGIN_SECONDS)


def launch_deadline(cold_start_seconds: float) -> int:
    """How long the lifecycle script keeps a launch alive with heartbeats before it abandons it: at least a cold
    start after the 15 minutes Replication Time Control allows a new release to reach a replica region (the
    prefetch waits for its manifest there)."""
    cold = int(cold_start_seconds)
    return max(LAUNCH_DEADLINE_FACTOR * cold, cold + REPLICATION_SLA_SECONDS) + HOOK_MARGIN_SECONDS


def lifecycle_hooks(args: ReplicasArgs) -> list[aws.autoscaling.GroupInitialLifecycleHookArgs]:
    """Launch: ABANDON when the instance never becomes ready (the group replaces it). Terminating: CONTINUE
    after the drain budget, so a hung drain does not block scale-in forever."""
    return [
        aws.autoscaling.GroupInitialLifecycleHookArgs(
            name=LAUNCH_HOOK,
            lifecycle_transition="autoscaling:EC2_INSTANCE_LAUNCHING",
            heartbeat_timeout=launch_heartbeat(args.cold_start_seconds),
            default_result="ABANDON",
        ),
        aws.autoscaling.GroupInitialLifecycleHookArgs(
            name=TERMINATE_HOOK,
            lifecycle_transition="autoscaling:EC2_INSTANCE_TERMINATING",
            heartbeat_timeout=min(MAX_HEARTBEAT_SECONDS, args.drain_seconds + 120),
            default_result="CONTINUE",
        ),
    ]


def replica_policy(args: ReplicasArgs) -> str:
    """Read-only access to this region's weights (GetObject and ListBucket on the model prefix), the
    registry key through S3 only, the one metric namespace the server publishes, acting on its own instance in
    the fleet's groups of the region, pulling its image, and reading the region's API key."""
    return iam.document(
        *iam.s3_read("Weights", args.registry_bucket, args.model_prefix),
        iam.kms_via_s3(
            "WeightsKey", args.registry_account_id, args.region, decrypt_only=True, bucket=args.registry_bucket
        ),
        {
            "Sid": "QueueMetric",
            "Effect": "Allow",
            "Action": ["cloudwatch:PutMetricData"],
            "Resource": ["*"],
            "Condition": {"StringEquals": {"cloudwatch:namespace": METRIC_NAMESPACE}},
        },
        *group_statements(args),
        *image_statements(args),
        *api_key_statements(args),
    )


def group_statements(args: ReplicasArgs) -> list[dict[str, Any]]:
    """What an instance does to itself in the region's groups of this fleet (base, burst, overflow): complete its
    lifecycle actions, detach on a spot notice, mark itself Unhealthy on a failed GPU."""
    base, burst = group_names(args.fleet, args.region)
    groups = [
        f"arn:aws:autoscaling:{args.region}:{args.account_id}:autoScalingGroup:*:autoScalingGroupName/{g}"
        for g in (base, burst, overflow_name(args.fleet, args.region))
    ]
    return [
        {
            "Sid": "LifecycleHooks",
            "Effect": "Allow",
            "Action": ["autoscaling:CompleteLifecycleAction"],
            "Resource": groups,
        },
        {
            # The drain unit (templates/inference/drain.sh.j2) detaches its own instance on the two-minute spot
            # notice, so its replacement starts at once; DetachInstances takes the group ARN as its resource
            # (Service Authorization Reference, Amazon EC2 Auto Scaling).
            "Sid": "SpotDetach",
            "Effect": "Allow",
            "Action": ["autoscaling:DetachInstances"],
            "Resource": groups,
        },
        {
            # The GPU check (templates/inference/gpu-health.sh.j2) marks its own instance Unhealthy; only in the
            # region's groups of this fleet (SetInstanceHealth takes the group ARN as its resource: Service
            # Authorization Reference, Amazon EC2 Auto Scaling, actions table).
            "Sid": "GpuHealth",
            "Effect": "Allow",
            "Action": ["autoscaling:SetInstanceHealth"],
            "Resource": groups,
        },
    ]


def image_statements(args: ReplicasArgs) -> list[dict[str, Any]]:
    """Pulling the server image from the fleet's ECR repositories (none when it comes from its registry)."""
    if not args.image_prefix:
        return []
    repositories = f"arn:aws:ecr:{args.region}:{args.account_id}:repository/{args.image_prefix}/*"
    return [
        # GetAuthorizationToken has no resource (ECR API reference: Resource "*").
        {"Sid": "ImageLogin", "Effect": "Allow", "Action": ["ecr:GetAuthorizationToken"], "Resource": ["*"]},
        {
            "Sid": "ImagePull",
            "Effect": "Allow",
            # Pulling through a cache, the first pull creates the repository and imports the image (ECR user
            # guide, pull through cache: IAM permissions CreateRepository, BatchImportUpstreamImage); from the
            # fleet's mirror it only reads.
            "Action": [
                "ecr:BatchGetImage",
                "ecr:GetDownloadUrlForLayer",
                "ecr:BatchCheckLayerAvailability",
                *(["ecr:CreateRepository", "ecr:BatchImportUpstreamImage"] if args.image_import else []),
            ],
            "Resource": [repositories],
        },
    ]


def api_key_statements(args: ReplicasArgs) -> list[dict[str, Any]]:
    """Reading the region's API key (none without one)."""
    if not args.api_key_secret:
        return []
    return [
        {
            "Sid": "ApiKey",
            "Effect": "Allow",
            "Action": ["secretsmanager:GetSecretValue"],
            # Secrets Manager appends six random characters to a secret's name in its ARN.
            "Resource": [f"arn:aws:secretsmanager:{args.region}:{args.account_id}:secret:{args.api_key_secret}-??????"],
        }
    ]


def launch_image(image_id: str, o: pulumi.ResourceOptions) -> pulumi.Input[str]:
    """The launch template's AMI id: as given, or the AMI a pinned SSM parameter version names, read at deploy
    (and at preview, so a new version shows as a template change), so EC2 Auto Scaling can roll a failed refresh
    back (RefreshPreferences.AutoRollback refuses a template whose ImageId is a parameter)."""
    ssm = pinned_ssm(image_id)
    if ssm is None:
        return image_id
    parameter = aws.ssm.get_parameter_output(
        name=f"{ssm[0]}:{ssm[1]}", opts=pulumi.InvokeOutputOptions(provider=o.provider, parent=o.parent)
    )
    return parameter.value


def scale_in_periods(cooldown_seconds: int) -> int:
    """Minutes of low queue depth before one replica is removed."""
    return max(3, math.ceil(cooldown_seconds / 60))


def launch_template(
    name: str, args: ReplicasArgs, profile_arn: pulumi.Input[str], o: pulumi.ResourceOptions
) -> aws.ec2.LaunchTemplate:
    """The one template every group of the region launches: the image, IMDSv2 for the host only, an encrypted gp3
    root volume that caches image and weights, the replica's user data, tags on what it launches."""
    return aws.ec2.LaunchTemplate(
        f"{name}-lt",
        image_id=launch_image(args.image_id, o),
        instance_type=args.instance_type,
        update_default_version=True,
        vpc_security_group_ids=[args.security_group_id],
        iam_instance_profile=aws.ec2.LaunchTemplateIamInstanceProfileArgs(arn=profile_arn),
        metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
            http_endpoint="enabled",
            http_tokens="required",
            # 1: only the host reaches IMDS; the vLLM container (Docker bridge, one more hop) needs no
            # role (EKS Best Practices, "Restrict access to the instance profile assigned to the worker node").
            http_put_response_hop_limit=1,
            instance_metadata_tags="enabled",
        ),
        block_device_mappings=[
            aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                device_name="/dev/sda1",
                ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                    volume_size=args.root_volume_gib,
                    volume_type="gp3",
                    throughput=ROOT_VOLUME_THROUGHPUT_MIB_S,
                    encrypted="true",
                    delete_on_termination="true",
                ),
            )
        ],
        user_data=base64.b64encode(args.user_data.encode()).decode(),
        tag_specifications=[
            aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=args.tags)
            for kind in ("instance", "volume", "network-interface")
        ],
        opts=o,
    )


def group_settings(args: ReplicasArgs, template: aws.ec2.LaunchTemplate) -> dict[str, Any]:
    """What every group of the region shares: subnets, the target group, ELB health with a grace over the cold
    start, the lifecycle hooks, metrics for the control loop, and the instance refresh a new template version
    starts."""
    return {
        "vpc_zone_identifiers": list(args.private_subnet_ids),
        "target_group_arns": [args.target_group_arn],
        "health_check_type": "ELB",
        # Grace >= the modelled cold start (the launch hook also keeps an instance out of service, and
        # so out of health checks, until its server answers).
        "health_check_grace_period": int(args.cold_start_seconds) + 60,
        "default_instance_warmup": int(args.cold_start_seconds),
        "wait_for_capacity_timeout": "0",
        "initial_lifecycle_hooks": lifecycle_hooks(args),
        "enabled_metrics": GROUP_METRICS,
        "metrics_granularity": "1Minute",
        # Numbered version always (template_version), so only the image decides whether AWS can roll a refresh
        # back.
        "instance_refresh": instance_refresh(
            args.cold_start_seconds,
            args.rollout_alarms,
            rollback=rollback_blocker(args.image_id) is None,
            alarm_window_seconds=args.rollout_window_seconds,
        ),
    }


def template_version(template: aws.ec2.LaunchTemplate) -> pulumi.Output[str]:
    """The version the template has after this update (not $Latest): a new version (new user data: model, image,
    flags; a new AMI) changes the groups' launch template, and that starts their instance refresh."""
    return template.latest_version.apply(str)


def base_group(
    name: str, args: ReplicasArgs, template: aws.ec2.LaunchTemplate, common: dict[str, Any], o: pulumi.ResourceOptions
) -> aws.autoscaling.Group:
    """The on-demand base: the floor, the planned on-demand share, and the warm pool."""
    return aws.autoscaling.Group(
        f"{name}-base",
        name=group_names(args.fleet, args.region)[0],
        min_size=args.min_replicas,
        max_size=args.max_on_demand,
        launch_template=aws.autoscaling.GroupLaunchTemplateArgs(id=template.id, version=template_version(template)),
        warm_pool=aws.autoscaling.GroupWarmPoolArgs(
            # The pool holds max(MinSize, MaxGroupPreparedCapacity - desired) instances (PutWarmPool API
            # reference); without the ceiling it holds maxSize - desired. min + planned keeps it at the
            # planned size at every desired capacity, which is what the cost prices.
            min_size=args.warm_pool,
            max_group_prepared_capacity=args.min_replicas + args.warm_pool,
            pool_state="Stopped",
            # No reuse on scale-in: a leaving replica takes the terminating hook, so it drains (a return to
            # the pool would skip the drain, which waits for target state Terminated), and the pool refills
            # with a fresh launch through the launch hook's Warmed:* path. Returning would also lift the pool
            # above the planned size the cost prices.
            instance_reuse_policy=aws.autoscaling.GroupWarmPoolInstanceReusePolicyArgs(reuse_on_scale_in=False),
        )
        if args.warm_pool
        else None,
        tags=group_tags(args.tags, args.expected_on_demand),
        **common,
        opts=o,
    )


def burst_group(
    name: str, args: ReplicasArgs, template: aws.ec2.LaunchTemplate, common: dict[str, Any], o: pulumi.ResourceOptions
) -> aws.autoscaling.Group:
    """The spot share above the base, over the region's spot types (price-capacity-optimized)."""
    return aws.autoscaling.Group(
        f"{name}-burst",
        name=group_names(args.fleet, args.region)[1],
        min_size=0,
        max_size=args.max_spot,
        capacity_rebalance=True,
        mixed_instances_policy=aws.autoscaling.GroupMixedInstancesPolicyArgs(
            instances_distribution=aws.autoscaling.GroupMixedInstancesPolicyInstancesDistributionArgs(
                on_demand_base_capacity=0,
                on_demand_percentage_above_base_capacity=0,
                spot_allocation_strategy="price-capacity-optimized",
            ),
            launch_template=aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateArgs(
                launch_template_specification=aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateLaunchTemplateSpecificationArgs(
                    launch_template_id=template.id, version=template_version(template)
                ),
                overrides=[
                    aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateOverrideArgs(instance_type=t)
                    for t in args.spot_types or [args.instance_type]
                ],
            ),
        ),
        tags=group_tags(args.tags, args.expected_spot),
        **common,
        opts=o,
    )


def overflow_group(
    name: str, args: ReplicasArgs, template: aws.ec2.LaunchTemplate, common: dict[str, Any], o: pulumi.ResourceOptions
) -> aws.autoscaling.Group:
    """EC2 Auto Scaling never substitutes on-demand for spot it cannot get (InstancesDistribution:
    OnDemandPercentageAboveBaseCapacity 0 = all spot above the base). This on-demand group takes the burst share
    when the burst group's desired capacity stays above its in-service count (scaling.py)."""
    return aws.autoscaling.Group(
        f"{name}-overflow",
        name=overflow_name(args.fleet, args.region),
        min_size=0,
        max_size=args.max_spot,
        launch_template=aws.autoscaling.GroupLaunchTemplateArgs(id=template.id, version=template_version(template)),
        tags=group_tags(args.tags, 0),
        **common,
        opts=o,
    )


def schedules(name: str, args: ReplicasArgs, base: aws.autoscaling.Group, o: pulumi.ResourceOptions) -> None:
    """The spec's scheduled floors on the base group, in each schedule's time zone, within the base's maximum."""
    for schedule in args.schedules:
        aws.autoscaling.Schedule(
            f"{name}-{schedule.name}",
            scheduled_action_name=schedule.name,
            autoscaling_group_name=base.name,
            recurrence=schedule.recurrence,
            time_zone=schedule.time_zone,
            min_size=min(schedule.min_replicas, args.max_on_demand),
            max_size=min(schedule.max_replicas or args.max_on_demand, args.max_on_demand),
            opts=o,
        )


class ServingReplicas(pulumi.ComponentResource):
    base: aws.autoscaling.Group
    burst: aws.autoscaling.Group | None
    overflow: aws.autoscaling.Group | None

    def __init__(
        self,
        name: str,
        args: ReplicasArgs,
        provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        o = child(self, provider)
        profile = instance_identity(name, f"{args.fleet} replicas in {args.region}", replica_policy(args), o).profile
        template = launch_template(name, args, profile.arn, o)
        common = group_settings(args, template)
        self.base = base_group(name, args, template, common, o)
        self.burst = burst_group(name, args, template, common, o) if args.max_spot > 0 else None
        self.overflow = overflow_group(name, args, template, common, o) if self.burst is not None else None
        self._loop(name, args, o)
        schedules(name, args, self.base, o)
        if args.predictive:
            self._predictive(name, group_names(args.fleet, args.region)[0], args, o)
        self.register_outputs({"base_group": self.base.name, "burst_group": self.burst.name if self.burst else None})

    def _loop(self, name: str, args: ReplicasArgs, o: pulumi.ResourceOptions) -> None:
        """The region's control loop over the groups it has (scaling.py)."""
        base_name, burst_name = group_names(args.fleet, args.region)
        region_loop(
            LoopArgs(
                name=name,
                fleet=args.fleet,
                base_group=base_name,
                burst_group=burst_name if self.burst is not None else None,
                target_per_replica=args.target_queue_depth,
                warmup_seconds=int(args.cold_start_seconds),
                scale_in_periods=scale_in_periods(args.scale_in_cooldown_seconds),
                overflow_group=overflow_name(args.fleet, args.region) if self.overflow is not None else None,
            ),
            self.base,
            self.burst,
            o,
            self.overflow,
        )

    @staticmethod
    def _predictive(name: str, group_name: str, args: ReplicasArgs, o: pulumi.ResourceOptions) -> None:
        """Forecast the daily peak/trough cycle of the region's load and scale the base ahead of it."""

        def query(query_id: str, stat: str) -> dict[str, Any]:
            metric = {
                "metric_name": METRIC_NAME,
                "namespace": METRIC_NAMESPACE,
                "dimensions": [{"name": "Fleet", "value": args.fleet}],
            }
            return {"metric_data_queries": [{"id": query_id, "metric_stat": {"metric": metric, "stat": stat}}]}

        configuration: dict[str, Any] = {
            "mode": "ForecastAndScale",
            "scheduling_buffer_time": str(int(args.cold_start_seconds)),
            "metric_specification": {
                "target_value": args.target_queue_depth,
                "customized_scaling_metric_specification": query("queue_per_replica", "Average"),
                "customized_load_metric_specification": query("queue_total", "Sum"),
            },
        }
        aws.autoscaling.Policy(
            f"{name}-predictive",
            autoscaling_group_name=group_name,
            policy_type="PredictiveScaling",
            predictive_scaling_configuration=configuration,
            opts=o,
        )


__all__ = [
    "TYPE",
    "ReplicasArgs",
    "ScheduleArgs",
    "ServingReplicas",
    "api_key_statements",
    "base_group",
    "burst_group",
    "group_names",
    "group_settings",
    "group_statements",
    "image_statements",
    "launch_deadline",
    "launch_heartbeat",
    "launch_image",
    "launch_template",
    "lifecycle_hooks",
    "overflow_group",
    "overflow_name",
    "replica_policy",
    "scale_in_periods",
    "schedules",
    "template_version",
]
