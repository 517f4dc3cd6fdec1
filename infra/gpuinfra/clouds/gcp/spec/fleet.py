"""The inference fleet on Google Cloud (`gpuinfra:inference` with `cloud: gcp`): G2 (L4) regional managed
instance groups behind one global external Application Load Balancer.

The model, request shape, scaling targets and cold start are the cloud-neutral parts AWS's fleet uses
(spec/inference.py), so the planner sizes both the same way; what differs is Google's: regions and zones, a
project instead of an account, a pinned Compute Engine image, Cloud Armor instead of WAF, and one global entry
point instead of latency records."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from gpuinfra.clouds.gcp.spec.project import PROJECT_ID, GcpLabels, GcpRegion, GcpZone
from gpuinfra.spec.base import AccountName, Invalid, Name, RuleId, SpecModel, VpcCidr, updates
from gpuinfra.spec.inference import (
    AcceleratorName,
    Autoscaling,
    ColdStart,
    ImageReference,
    RequestShape,
    ServedModel,
)
from gpuinfra.spec.target import Target

DEFAULT_SUBNET_SECOND_OCTET = 96
"""Default subnets are 10.96.0.0/20, 10.97.0.0/20, ... by region order (one VPC network, a subnet per region)."""
IMAGE = rf"^projects/{PROJECT_ID}/global/images/[a-z]([-a-z0-9]{{0,61}}[a-z0-9])?$"
"""A Compute Engine image by name (projects/<project>/global/images/<name>): one image, never a family, whose
newest member would change under a running fleet."""
ARMOR_INTERVALS = (10, 30, 60, 120, 180, 240, 300, 600, 900, 1200, 1800, 2700, 3600)
"""The rate-limit intervals Cloud Armor accepts (compute v1 SecurityPolicyRuleRateLimitOptionsThreshold
intervalSec: "Must be one of 10, 30, 60, 120, 180, 240, 300, 600, 900, 1200, 1800, 2700, or 3600")."""


MachineTypeName = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z][a-z0-9]*-[a-z0-9-]+$"),
    Field(description="A Compute Engine machine type, e.g. g2-standard-8."),
]


class GcpInstance(SpecModel):
    """Which machine serves: a G2 machine type, or auto."""

    type: Literal["auto"] | MachineTypeName = "auto"
    """A machine type (g2-standard-8), or auto: the cheapest G2 type whose L4s and memory hold weights and cache."""
    gpu: AcceleratorName | None = None
    """Restrict auto to machine types with this accelerator (L4)."""


class GcpFleetRegion(SpecModel):
    """One region of the fleet: a regional managed instance group over its zones."""

    region: GcpRegion = Field(json_schema_extra=updates("replace"))
    min_replicas: Annotated[int, Field(ge=1, le=10_000)]
    """Always-on replicas (on-demand VMs)."""
    max_replicas: Annotated[int, Field(ge=1, le=10_000)]
    """Most replicas the region may scale out to."""
    peak_rps: Annotated[float, Field(ge=0)]
    """Requests per second this region must absorb at its daily peak."""
    zones: list[GcpZone] = []
    """Zones the regional MIG spreads over (its distribution policy); default: every zone of the region the
    catalog lists the machine type in."""
    machine_type: MachineTypeName | None = None
    """Override the fleet's machine type here."""
    throughput_rps_per_replica: Annotated[float, Field(gt=0)] | None = None
    """Requests per second one replica of this region sustains; default: the fleet's."""
    subnet_cidr: VpcCidr | None = Field(None, json_schema_extra=updates("replace"))
    """The region's subnet of the fleet's VPC network; default 10.(96+i).0.0/20 for the i-th region."""

    @model_validator(mode="after")
    def _bounds_and_zones(self) -> GcpFleetRegion:
        if self.min_replicas > self.max_replicas:
            raise Invalid(
                f"min_replicas {self.min_replicas} > max_replicas {self.max_replicas}: the group cannot exist",
                ("min_replicas",),
                f"lower min_replicas or raise max_replicas to at least {self.min_replicas}",
            )
        for i, zone in enumerate(self.zones):
            if zone.rsplit("-", 1)[0] != self.region:
                raise Invalid(f"zone {zone} is not in region {self.region}", ("zones", i), f"use {self.region}-a ...")
        return self


class HealthCheck(SpecModel):
    """The HTTP health check the load balancer and the MIG's autohealing share."""

    path: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9_./-]*$")] = "/health"
    """Answers 200 only once the weights are loaded and verified."""
    server_port: Annotated[int, Field(ge=1, le=65535)] = 8000
    """Port the model server listens on (the backend service's named port)."""
    check_interval_seconds: Annotated[int, Field(ge=1, le=300)] = 10
    """Seconds between probes (Compute Engine healthChecks checkIntervalSec, 1 to 300)."""
    timeout_seconds: Annotated[int, Field(ge=1, le=300)] = 5
    """Seconds a probe waits for its answer (timeoutSec; at most the interval)."""
    healthy_threshold: Annotated[int, Field(ge=1, le=10)] = 2
    """Consecutive passing probes that mark a VM healthy again (healthyThreshold, 1 to 10)."""
    unhealthy_threshold: Annotated[int, Field(ge=1, le=10)] = 3
    """Consecutive failing probes that mark a VM unhealthy: autohealing then recreates it (unhealthyThreshold)."""

    @model_validator(mode="after")
    def _timeout(self) -> HealthCheck:
        if self.timeout_seconds > self.check_interval_seconds:
            raise Invalid(
                "timeout_seconds exceeds check_interval_seconds (compute v1 HealthCheck: the timeout must be "
                "less than or equal to checkIntervalSec)",
                ("timeout_seconds",),
                f"at most {self.check_interval_seconds}",
            )
        return self


class Armor(SpecModel):
    """The Cloud Armor security policy on the global backend service: who may call, and how often."""

    rate_limit_per_key: Annotated[int, Field(ge=1, le=1_000_000_000)] = 3000
    """Requests one API key (the Authorization header) may send per interval before Cloud Armor answers 429."""
    rate_limit_per_ip: Annotated[int, Field(ge=1, le=1_000_000_000)] = 6000
    """Requests one client address may send per interval (stops floods from one address)."""
    interval_seconds: Literal[10, 30, 60, 120, 180, 240, 300, 600, 900, 1200, 1800, 2700, 3600] = 300
    """The rate limits' interval (one of the values Cloud Armor accepts)."""
    require_api_key: bool = True
    """Deny (403) any request without an `Authorization: Bearer` header at the edge; the server checks the key."""


class Frontend(SpecModel):
    """The one global external Application Load Balancer in front of every region."""

    domain_name: Annotated[str, StringConstraints(pattern=r"^[a-z0-9.-]+\.[a-z]{2,}$")]
    """The fleet's DNS name: its Google-managed certificate is issued for it once its A record points at the
    load balancer's global address (a stack output)."""
    armor: Armor = Armor()


MAX_AUTOHEAL_DELAY = 3600
"""autoHealingPolicies.initialDelaySec: "between 0 and 3600" (compute v1 InstanceGroupManagerAutoHealingPolicy)."""


class Weights(SpecModel):
    """Where the replicas read the weights: a Cloud Storage bucket in each serving region, the first region's
    written by the release and replicated to the others by Storage Transfer Service (cross-bucket replication)."""

    bucket: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]{1,40}[a-z0-9]$")]
    """Name stem of the regional buckets: `<bucket>-<region>` holds the model prefix in each region. The release
    writes the first region's (manifest.json last); a replication job per other region copies every new or updated
    object to it (the stack creates the buckets and jobs, reads the buckets, never writes them)."""
    replication_wait_minutes: Annotated[int, Field(ge=0, le=360)] = 45
    """How long a new replica waits for the release (its manifest and every file it lists, at their sizes) to be
    in its region's bucket before it gives up and is replaced: cross-bucket replication has no RPO ("most objects
    replicate in minutes; objects over 1 GiB can take hours", cloud.google.com/storage-transfer/docs/
    cross-bucket-replication), so a replica never starts on a copy not yet complete and the MIG updater's roll in
    that region waits with it."""


class Rollout(SpecModel):
    """The regional MIG's updater: how a new instance template reaches running replicas."""

    max_surge: Annotated[int, Field(ge=0, le=1000)] = 3
    """Extra VMs the updater may create above the target size (a regional MIG takes 0 or at least its zone
    count: compute v1 FixedOrPercent for regional groups)."""
    max_unavailable: Annotated[int, Field(ge=0, le=1000)] = 0
    """VMs that may be down during the update (0: replace only after the new one is healthy)."""


class GcpInferenceSpec(SpecModel):
    """A geo-distributed inference fleet on Google Cloud."""

    @property
    def target(self) -> Target:
        return Target("gcp", self.account, tuple(r.region for r in self.regions))

    cloud: Literal["gcp"]
    """Google Cloud (docs/gcp.md)."""
    name: Name
    account: AccountName
    """The organization's project entry (cloud: gcp, purpose: inference) the fleet deploys into."""
    model: ServedModel
    instance: GcpInstance = GcpInstance()
    regions: Annotated[list[GcpFleetRegion], Field(min_length=1)]
    requests: RequestShape
    throughput_rps_per_replica: Annotated[float, Field(gt=0)]
    """Requests per second one replica sustains at the latency target (vllm bench serve); the planner refuses a
    figure above its memory-bandwidth bound."""
    autoscaling: Autoscaling
    """Scaled on the replicas' requests in flight, a Cloud Monitoring metric each VM writes."""
    spot_burst_share: Annotated[float, Field(ge=0, le=1)] = 0.0
    """Share of capacity above min_replicas that runs as Spot VMs (their own MIG per region); Spot VMs get at most
    30 s of notice, which the drain and the planner take as the window."""
    health_check: HealthCheck = HealthCheck()
    frontend: Frontend
    weights: Weights
    image: Annotated[str, StringConstraints(pattern=IMAGE)]
    """The replicas' boot image with the NVIDIA driver and Docker, pinned by name."""
    server_image: ImageReference = "vllm/vllm-openai:v0.11.0"
    """The model server's container image, pulled by the digest below."""
    server_image_digest: Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")]
    """The server image's digest: every replica runs the same bytes."""
    server_args: list[Annotated[str, StringConstraints(min_length=1, max_length=256)]] = []
    """Extra arguments to the model server, each one word (shell-quoted into the startup script)."""
    cold_start: ColdStart = ColdStart()
    rollout: Rollout = Rollout()
    failover: Literal["none", "n_plus_one"] = "n_plus_one"
    """n_plus_one: each region can take its own peak plus the largest other region's (the load balancer sends a
    failed region's users to the next closest healthy one)."""
    labels: GcpLabels = {}
    """Labels on every resource that takes them (Google labels: lower-case keys and values)."""
    suppress: list[RuleId] = []
    """Warnings (and suppressible errors) this stack accepts, by rule id."""

    def throughput_of(self, region: GcpFleetRegion) -> float:
        return region.throughput_rps_per_replica or self.throughput_rps_per_replica

    def throughput_path(self, index: int) -> tuple[str | int, ...]:
        if self.regions[index].throughput_rps_per_replica is not None:
            return ("regions", index, "throughput_rps_per_replica")
        return ("throughput_rps_per_replica",)

    def subnet_of(self, index: int) -> str:
        return self.regions[index].subnet_cidr or f"10.{DEFAULT_SUBNET_SECOND_OCTET + index}.0.0/20"

    @model_validator(mode="after")
    def _distinct_regions(self) -> GcpInferenceSpec:
        seen: set[str] = set()
        for i, r in enumerate(self.regions):
            if r.region in seen:
                raise Invalid(f"region {r.region} is listed twice", ("regions", i, "region"), "list it once")
            seen.add(r.region)
        return self


__all__ = [
    "ARMOR_INTERVALS",
    "MAX_AUTOHEAL_DELAY",
    "Armor",
    "Frontend",
    "GcpFleetRegion",
    "GcpInferenceSpec",
    "GcpInstance",
    "HealthCheck",
    "Rollout",
    "Weights",
]
