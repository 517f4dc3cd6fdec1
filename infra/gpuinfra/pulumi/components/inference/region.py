"""One serving region on EC2: network, load balancer, replicas."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_random as random

from gpuinfra.catalog.engines import Engine
from gpuinfra.plan import InferencePlan
from gpuinfra.plan.capacity import split_capacity
from gpuinfra.plan.rollout import ALARM_WINDOW_SECONDS
from gpuinfra.plan.schedules import schedule_time_zone
from gpuinfra.plan.serving import RegionPlan
from gpuinfra.pulumi.components.alerts import alert_topic
from gpuinfra.pulumi.components.inference.bootstrap import ServerConfig, replica_cloud_init
from gpuinfra.pulumi.components.inference.endpoint import EndpointArgs, RegionalEndpoint, log_bucket_name
from gpuinfra.pulumi.components.inference.engine import engine_args, engine_config
from gpuinfra.pulumi.components.inference.images import (
    CachedImage,
    fleet_image,
    mirror_repository,
    pull_through_cache,
)
from gpuinfra.pulumi.components.inference.network import InferenceNetwork, NetworkArgs
from gpuinfra.pulumi.components.inference.replicas import (
    ReplicasArgs,
    ScheduleArgs,
    ServingReplicas,
    launch_deadline,
    launch_heartbeat,
)
from gpuinfra.pulumi.components.inference.rollout import rollout_alarms
from gpuinfra.pulumi.components.inference.slo import PERIOD as SLO_PERIOD
from gpuinfra.pulumi.components.inference.slo import STOPS_ROLLOUT, SloArgs, slo_alarms
from gpuinfra.pulumi.components.vpc_logs import FlowLogSettings
from gpuinfra.spec import FleetRegion, InferenceSpec, Registry
from gpuinfra.spec.org import Alerts

TYPE = "gpuinfra:inference:Region"


@dataclass(frozen=True)
class RegionArgs:
    spec: InferenceSpec
    fleet_region: FleetRegion
    vpc_cidr: str
    """The region's VPC network (InferenceSpec.vpc_cidr_of: its own or its default by region order)."""
    region_plan: RegionPlan
    plan: InferencePlan
    registry: Registry
    registry_account_id: str
    account_id: str
    tags: dict[str, str]
    engine: Engine
    """The model server the fleet runs (the catalog's engines.yaml row for spec.engine)."""
    alerts: Alerts | None = None
    """The account's `alerts` (organization file): the region's paging alarms notify a topic they subscribe."""
    time_zones: Mapping[str, str] = field(default_factory=dict)
    """Region -> local IANA zone (the catalog's), where schedules asking for the region's own clock run."""


def api_key_secret(fleet: str, region: str) -> str:
    """Name of the region's API-key secret in Secrets Manager."""
    return f"{fleet}/{region}/api-key"


def root_volume_gib(weights_bytes: int) -> int:
    """OS and image plus the weights cache (kept on EBS so it survives a warm-pool stop)."""
    return max(100, math.ceil(weights_bytes / 2**30 * 1.2) + 60)


def api_key_value(
    name: str,
    secret_name: str,
    fleet: str,
    region: str,
    tags: dict[str, str],
    provider: pulumi.ProviderResource,
    parent: pulumi.Resource,
) -> aws.secretsmanager.SecretVersion:
    """The region's API key with a value from the first `pulumi up`: a secret created empty fails every
    GetSecretValue (ResourceNotFoundException for the AWSCURRENT label) until someone sets it. The value is
    generated (random.RandomPassword, kept in the stack's state as a Pulumi secret); rotate it with
    `pulumi up --replace <the password's URN>`, then an instance refresh (servers read the key at start)."""
    o = pulumi.ResourceOptions(parent=parent, provider=provider)
    secret = aws.secretsmanager.Secret(
        f"{name}-api-key",
        name=secret_name,
        description=f"API key the {fleet} servers in {region} require on /v1 (vLLM --api-key)",
        recovery_window_in_days=7,
        tags=tags,
        opts=o,
    )
    generator = random.Provider(f"{name}-random", opts=pulumi.ResourceOptions(parent=parent))
    value = random.RandomPassword(
        f"{name}-api-key-value",
        length=48,
        special=False,
        opts=pulumi.ResourceOptions(parent=parent, provider=generator),
    )
    return aws.secretsmanager.SecretVersion(
        f"{name}-api-key-version", secret_id=secret.id, secret_string=value.result, opts=o
    )


def region_alert_topic(
    name: str, args: RegionArgs, provider: pulumi.ProviderResource, parent: pulumi.Resource
) -> pulumi.Output[str] | None:
    """The region's alert topic (`<name>-alerts-topic`) when the account has `alerts`: alarm actions name a topic
    of the alarm's own region, so each region has its own."""
    if args.alerts is None:
        return None
    o = pulumi.ResourceOptions(parent=parent, provider=provider)
    return alert_topic(f"{name}-alerts", args.account_id, args.alerts, o).arn


def network_args(args: RegionArgs) -> NetworkArgs:
    """The region's VPC over its planned zones, with its NAT choice, client networks and flow logs."""
    spec, rp = args.spec, args.region_plan
    return NetworkArgs(
        rp.region,
        rp.zones,
        args.vpc_cidr,
        spec.load_balancer.server_port,
        spec.access.scheme == "internal",
        nat_per_zone=spec.nat_gateways == "per_zone",
        client_cidrs=tuple(spec.access.client_cidrs),
        account_id=args.account_id,
        flow_logs=FlowLogSettings.of(spec),
    )


def endpoint_args(args: RegionArgs, network: InferenceNetwork, topic: pulumi.Output[str] | None) -> EndpointArgs:
    """The region's load balancer: in the public subnets, or the private ones for an internal fleet."""
    spec, rp, lb = args.spec, args.region_plan, args.spec.load_balancer
    internal = spec.access.scheme == "internal"
    return EndpointArgs(
        kind=lb.type,
        vpc_id=network.vpc.id,
        public_subnet_ids=[s.id for s in (network.private_subnets if internal else network.public_subnets)],
        security_group_id=network.lb_security_group.id,
        certificate_arn=args.fleet_region.certificate_arn,
        server_port=lb.server_port,
        health_check_path=lb.health_check_path,
        healthy_threshold=lb.healthy_threshold,
        unhealthy_threshold=lb.unhealthy_threshold,
        interval_seconds=lb.health_check_interval_seconds,
        internal=internal,
        deregistration_seconds=rp.drain_seconds,
        waf=spec.access.waf if lb.type == "alb" else None,
        tags=args.tags,
        account_id=args.account_id,
        region=rp.region,
        log_bucket=log_bucket_name(spec.name, args.account_id, rp.region),
        log_retention_days=spec.log_retention_days,
        alarm_topic_arn=topic,
    )


def server_config(args: RegionArgs, cached: CachedImage | None, api_key: str | None) -> ServerConfig:
    """What a replica's user data runs: the region's weights, the server image (from the fleet's ECR when cached),
    the engine's flags, the lifecycle deadlines from the planned cold start."""
    spec, rp, lb, model = args.spec, args.region_plan, args.spec.load_balancer, args.spec.model
    assert rp.instance_type is not None, "validators stop a fleet without an instance type"
    accelerators = max(1, rp.accelerators_per_instance)
    return ServerConfig(
        fleet=spec.name,
        region=rp.region,
        instance_type=rp.instance_type,
        bucket=args.registry.replica_bucket(rp.region),
        model_prefix=args.registry.model_prefix,
        weights_prefix=model.weights_prefix,
        adapters=tuple((a.name, a.weights_prefix) for a in model.adapters),
        image=cached.image if cached else spec.server_image,
        image_registry=cached.registry if cached else None,
        server_port=lb.server_port,
        engine_args=tuple(engine_args(model, "/model", accelerators, args.engine, spec.server_args)),
        engine=args.engine,
        engine_config=engine_config(model, spec.engine),
        max_sequences=model.max_concurrent_sequences,
        launch_heartbeat_seconds=launch_heartbeat(rp.cold_start_seconds),
        launch_deadline_seconds=launch_deadline(rp.cold_start_seconds),
        health_path=lb.health_check_path,
        drain_seconds=rp.drain_seconds,
        image_digest=spec.server_image_digest,
        server_kind=spec.server_kind,
        accelerators=accelerators,
        api_key_secret=api_key,
    )


def schedule_args(args: RegionArgs) -> list[ScheduleArgs]:
    """The spec's schedules on the region's clock (its own zone unless a schedule names one)."""
    region = args.region_plan.region
    return [
        ScheduleArgs(
            s.name,
            s.recurrence,
            s.min_replicas,
            s.max_replicas,
            schedule_time_zone(s.time_zone, region, args.time_zones) or "Etc/UTC",
        )
        for s in args.spec.autoscaling.schedules
    ]


@dataclass(frozen=True)
class Placement:
    """Where the region's replicas run and what they join: from the network, the endpoint and the image."""

    network: InferenceNetwork
    target_group_arn: pulumi.Input[str]
    cached: CachedImage | None
    api_key: str | None
    rollout_alarms: list[pulumi.Output[str]]
    rollout_window_seconds: int


def replicas_args(args: RegionArgs, at: Placement) -> ReplicasArgs:
    """The region's groups as planned (floor, on-demand and spot maxima, warm pool, expected split), their image,
    user data, control-loop targets, schedules, and the alarms that stop a refresh."""
    spec, rp, fr = args.spec, args.region_plan, args.fleet_region
    assert rp.instance_type is not None, "validators stop a fleet without an instance type"
    expected_od, expected_spot = split_capacity(rp.planned_replicas, rp.on_demand_base, rp.on_demand_pct_above_base)
    auto = spec.autoscaling
    return ReplicasArgs(
        fleet=spec.name,
        region=rp.region,
        instance_type=rp.instance_type,
        image_id=fr.image_id or spec.image_id,
        root_volume_gib=root_volume_gib(args.plan.memory.weights_bytes),
        min_replicas=rp.min_replicas,
        max_on_demand=rp.max_on_demand,
        max_spot=rp.max_spot,
        expected_on_demand=expected_od,
        expected_spot=expected_spot,
        warm_pool=rp.warm_pool,
        cold_start_seconds=rp.cold_start_seconds,
        drain_seconds=rp.drain_seconds,
        spot_types=rp.spot_types,
        account_id=args.account_id,
        api_key_secret=at.api_key,
        private_subnet_ids=[s.id for s in at.network.private_subnets],
        security_group_id=at.network.replica_security_group.id,
        target_group_arn=at.target_group_arn,
        registry_bucket=args.registry.replica_bucket(rp.region),
        model_prefix=args.registry.model_prefix,
        registry_account_id=args.registry_account_id,
        image_prefix=at.cached.prefix if at.cached else None,
        image_import=spec.image_source == "ecr_pull_through",
        user_data=replica_cloud_init(server_config(args, at.cached, at.api_key)),
        target_queue_depth=auto.target_queue_depth_per_replica,
        scale_out_cooldown_seconds=auto.scale_out_cooldown_seconds,
        scale_in_cooldown_seconds=auto.scale_in_cooldown_seconds,
        schedules=schedule_args(args),
        predictive=auto.predictive,
        tags=args.tags,
        rollout_alarms=at.rollout_alarms,
        rollout_window_seconds=at.rollout_window_seconds,
    )


class InferenceRegion(pulumi.ComponentResource):
    endpoint: RegionalEndpoint
    replicas: ServingReplicas
    vpc_id: pulumi.Output[str]
    """The region's VPC (an internal fleet's private zone is associated with it)."""

    def __init__(
        self, name: str, args: RegionArgs, provider: pulumi.ProviderResource, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        spec, region = args.spec, args.region_plan.region
        here = pulumi.ResourceOptions(parent=self)
        topic = region_alert_topic(name, args, provider, self)
        network = InferenceNetwork(f"{name}-net", network_args(args), provider, here)
        self.vpc_id = network.vpc.id
        self.endpoint = RegionalEndpoint(f"{name}-endpoint", endpoint_args(args, network, topic), provider, here)
        rollout_alarm_names, rollout_window = self._alarms(name, spec, region, provider, topic)
        api_key = api_key_secret(spec.name, region) if spec.access.auth == "api_key" else None
        if api_key:
            api_key_value(name, api_key, spec.name, region, args.tags, provider, self)
        cached = self._image(name, args, provider)
        placement = Placement(
            network, self.endpoint.target_group.arn, cached, api_key, rollout_alarm_names, rollout_window
        )
        self.replicas = ServingReplicas(f"{name}-replicas", replicas_args(args, placement), provider, here)
        self.register_outputs({"dns_name": self.endpoint.load_balancer.dns_name})

    def _image(self, name: str, args: RegionArgs, provider: pulumi.ProviderResource) -> CachedImage | None:
        """Where the replicas pull the server image: the fleet's mirror repository, a pull-through cache rule (both
        made here), or the image's own registry (None)."""
        spec = args.spec
        cached = fleet_image(args.account_id, args.region_plan.region, spec.name, spec.server_image, spec.image_source)
        image_opts = pulumi.ResourceOptions(parent=self, provider=provider)
        if spec.image_source == "ecr_mirror":
            mirror_repository(name, spec.name, spec.server_image, args.tags, image_opts)
        elif cached is not None:
            pull_through_cache(name, spec.name, spec.server_image, args.tags, image_opts)
        return cached

    def _alarms(
        self,
        name: str,
        spec: InferenceSpec,
        region: str,
        provider: pulumi.ProviderResource,
        topic: pulumi.Output[str] | None,
    ) -> tuple[list[pulumi.Output[str]], int]:
        """The region's SLO alarms, and which alarms stop an instance refresh of its groups (the rollout's own and
        the SLO's STOPS_ROLLOUT) with the longest window among them, which the canary's soak must cover."""
        o = pulumi.ResourceOptions(parent=self, provider=provider)
        lb, slo = spec.load_balancer, spec.slo
        service_alarms = slo_alarms(
            SloArgs(
                fleet=spec.name,
                region=region,
                alb=lb.type == "alb",
                load_balancer_suffix=self.endpoint.load_balancer.arn_suffix,
                target_group_suffix=self.endpoint.target_group.arn_suffix,
                latency_target_seconds=spec.requests.latency_target_seconds,
                error_rate_percent=slo.error_rate_percent,
                evaluation_minutes=slo.evaluation_minutes,
                ttft_seconds=slo.time_to_first_token_seconds,
                inter_token_seconds=slo.inter_token_latency_seconds,
                topic_arn=topic,
            ),
            o,
        )
        stops = [service_alarms[key] for key in STOPS_ROLLOUT if key in service_alarms]
        own = rollout_alarms(
            name, lb.type == "alb", self.endpoint.load_balancer.arn_suffix, self.endpoint.target_group.arn_suffix, o
        )
        window = max(ALARM_WINDOW_SECONDS, spec.slo.evaluation_minutes * SLO_PERIOD if stops else 0)
        return [a.name for a in own + stops], window


__all__ = [
    "TYPE",
    "InferenceRegion",
    "Placement",
    "RegionArgs",
    "api_key_secret",
    "api_key_value",
    "endpoint_args",
    "network_args",
    "region_alert_topic",
    "replicas_args",
    "root_volume_gib",
    "schedule_args",
    "server_config",
]
