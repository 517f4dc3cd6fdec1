"""One region's replicas: per purchase (on-demand, Spot), a regional instance template and a regional managed
instance group over the region's zones, autohealed on the fleet's health check, updated by the MIG updater, and
scaled by a regional autoscaler on the requests-in-flight gauge each VM writes to Cloud Monitoring."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from gpuinfra.clouds.gcp.catalog import gcp_book
from gpuinfra.clouds.gcp.pulumi.base import opts
from gpuinfra.clouds.gcp.spec import GcpInferenceSpec
from gpuinfra.clouds.gcp.spec.fleet import MAX_AUTOHEAL_DELAY
from gpuinfra.plan.serving import RegionPlan
from gpuinfra.pulumi.templates import render

QUEUE_METRIC = "custom.googleapis.com/gpuinfra/requests_in_flight"
"""The gauge each replica writes (templates/gcp/startup.sh.j2) and the autoscaler holds at its target."""
BOOT_DISK_GB = 200


@dataclass(frozen=True)
class ReplicaArgs:
    spec: GcpInferenceSpec
    region: RegionPlan
    project: str
    subnet: pulumi.Input[str]
    service_account: pulumi.Input[str]
    secret_id: pulumi.Input[str]
    bucket: str
    health_check: pulumi.Input[str]
    tag: str
    labels: dict[str, str]
    spot_notice_seconds: int
    source_region: str
    """The region whose bucket the release writes; the others' are filled by replication."""
    wait_seconds: int
    """How long a new VM waits for the release to be complete in its region's bucket (spec weights)."""
    replication: pulumi.Resource | None = None
    """The job that fills this region's bucket (None in the release's region): the groups are created after it."""


def startup_script(a: ReplicaArgs, purchase: str) -> str:
    s = a.spec
    return render(
        "gcp/startup.sh.j2",
        fleet=s.name,
        region=a.region.region,
        purchase=purchase,
        bucket=a.bucket,
        weights_prefix=s.model.weights_prefix,
        health_path=s.health_check.path,
        project=a.project,
        api_key_secret=f"{s.name}-api-key",
        image_ref=f"{s.server_image.split('@')[0]}@{s.server_image_digest}",
        port=s.health_check.server_port,
        model=s.model.name,
        server_args=[
            "--max-num-seqs",
            str(s.model.max_concurrent_sequences),
            "--max-model-len",
            str(s.model.context_length_tokens),
            "--gpu-memory-utilization",
            str(s.model.gpu_memory_utilization),
            "--tensor-parallel-size",
            str(max(1, a.region.accelerators_per_instance)),
            *s.server_args,
        ],
        metric=QUEUE_METRIC,
        source_region=a.source_region,
        wait_seconds=a.wait_seconds,
    )


STOP_SECONDS = 5
"""What the shutdown script leaves the server to stop (`docker stop --time 5`, templates/gcp/shutdown.sh.j2)."""


def drain_seconds(a: ReplicaArgs, purchase: str) -> int:
    """A Spot VM's drain is its preemption notice less the server's stop, so both end within the notice; an
    on-demand VM's is the plan's (the time its longest answer takes)."""
    if purchase == "spot":
        return a.spot_notice_seconds - STOP_SECONDS
    return a.region.drain_seconds


def template(name: str, a: ReplicaArgs, purchase: str, parent: pulumi.Resource) -> gcp.compute.RegionInstanceTemplate:
    spot = purchase == "spot"
    scheduling = {
        "on_host_maintenance": "TERMINATE",  # GPU VMs cannot live-migrate
        "automatic_restart": not spot,
        "provisioning_model": "SPOT" if spot else "STANDARD",
        "preemptible": spot,
        # Spot: deleted at preemption (its notice is the drain); on-demand: graceful shutdown gives the shutdown
        # script the plan's drain when a scale-in or an update deletes the VM.
        **(
            {"instance_termination_action": "DELETE"}
            if spot
            else {"graceful_shutdown": {"enabled": True, "max_duration": {"seconds": drain_seconds(a, purchase)}}}
        ),
    }
    shutdown = render(
        "gcp/shutdown.sh.j2",
        fleet=a.spec.name,
        purchase=purchase,
        drain_seconds=drain_seconds(a, purchase),
        stop_seconds=STOP_SECONDS,
        port=a.spec.health_check.server_port,
    )
    return gcp.compute.RegionInstanceTemplate(
        name,
        name_prefix=f"{name}-",
        region=a.region.region,
        machine_type=a.region.instance_type,
        disks=[
            {
                "boot": True,
                "auto_delete": True,
                "source_image": a.spec.image,
                "disk_size_gb": BOOT_DISK_GB,
                "disk_type": "pd-balanced",
            }
        ],
        network_interfaces=[{"subnetwork": a.subnet, "nic_type": "GVNIC"}],
        scheduling=scheduling,
        service_account={"email": a.service_account, "scopes": ["https://www.googleapis.com/auth/cloud-platform"]},
        shielded_instance_config={"enable_secure_boot": True, "enable_vtpm": True, "enable_integrity_monitoring": True},
        metadata={
            "startup-script": startup_script(a, purchase),
            "shutdown-script": shutdown,
            "block-project-ssh-keys": "true",
            "enable-oslogin": "TRUE",
        },
        tags=[a.tag],
        labels={**a.labels, "gpuinfra-purchase": purchase.replace("_", "-")},
        opts=opts(parent, delete_before_replace=False),
    )


def group(name: str, a: ReplicaArgs, purchase: str, parent: pulumi.Resource) -> gcp.compute.RegionInstanceGroupManager:
    tpl = template(f"{name}-tpl", a, purchase, parent)
    r, rollout = a.region, a.spec.rollout
    cold = min(MAX_AUTOHEAL_DELAY, math.ceil(r.cold_start_seconds))
    waited = min(MAX_AUTOHEAL_DELAY, cold + a.wait_seconds)  # a VM waiting for its weights is not yet failing
    warm = r.warm_pool if purchase == "on_demand" else 0
    return gcp.compute.RegionInstanceGroupManager(
        name,
        name=name,
        region=r.region,
        base_instance_name=name,
        versions=[{"name": "primary", "instance_template": tpl.self_link}],
        distribution_policy_zones=r.zones,
        distribution_policy_target_shape="EVEN",
        named_ports=[{"name": "http", "port": a.spec.health_check.server_port}],
        auto_healing_policies={"health_check": a.health_check, "initial_delay_sec": waited},
        update_policy={
            "type": "PROACTIVE",
            "minimal_action": "REPLACE",
            "replacement_method": "SUBSTITUTE",
            "instance_redistribution_type": "PROACTIVE",
            "max_surge_fixed": rollout.max_surge,
            "max_unavailable_fixed": rollout.max_unavailable,
            "min_ready_sec": cold,
        },
        # Warm capacity: stopped VMs with the image and weights on disk, started before new ones are created.
        **(
            {"standby_policy": {"mode": "SCALE_OUT_POOL", "initial_delay_sec": cold}, "target_stopped_size": warm}
            if warm
            else {}
        ),
        wait_for_instances=False,
        opts=opts(parent, ignore_changes=["target_size"], depends_on=[a.replication] if a.replication else []),
    )


def autoscaler(
    name: str,
    a: ReplicaArgs,
    mig: gcp.compute.RegionInstanceGroupManager,
    bounds: tuple[int, int],
    parent: pulumi.Resource,
) -> gcp.compute.RegionAutoscaler:
    s, r = a.spec.autoscaling, a.region
    schedules = (
        {
            x.name: {
                "min_required_replicas": x.min_replicas,
                "schedule": x.recurrence,
                "time_zone": gcp_book().time_zones[r.region] if x.time_zone == "region" else x.time_zone,
                "duration_sec": 12 * 3600,
            }
            for x in s.schedules
        }
        if bounds[0] > 0
        else {}
    )
    return gcp.compute.RegionAutoscaler(
        name,
        name=name,
        region=r.region,
        target=mig.id,
        autoscaling_policy={
            "min_replicas": bounds[0],
            "max_replicas": bounds[1],
            "cooldown_period": min(3600, math.ceil(r.cold_start_seconds)),
            "metrics": [{"name": QUEUE_METRIC, "target": s.target_queue_depth_per_replica, "type": "GAUGE"}],
            "scale_in_control": {
                "max_scaled_in_replicas": {"fixed": 1},
                "time_window_sec": s.scale_in_cooldown_seconds,
            },
            "mode": "ON",
            **({"scaling_schedules": schedules} if schedules else {}),
        },
        opts=opts(parent),
    )


class RegionReplicas(pulumi.ComponentResource):
    """The region's on-demand group (its floor, min_replicas, and its share of the burst) and Spot group."""

    def __init__(self, name: str, a: ReplicaArgs, parent: pulumi.Resource) -> None:
        super().__init__("gpuinfra:inference:GcpRegionReplicas", name, None, opts(parent))
        r = a.region
        self.groups: list[gcp.compute.RegionInstanceGroupManager] = []
        for purchase, bounds in (("on_demand", (r.min_replicas, r.max_on_demand)), ("spot", (0, r.max_spot))):
            if bounds[1] <= 0:
                continue
            suffix = "od" if purchase == "on_demand" else "spot"
            mig = group(f"{name}-{suffix}", a, purchase, self)
            autoscaler(f"{name}-{suffix}", a, mig, bounds, self)
            self.groups.append(mig)
        self.register_outputs({})


__all__ = ["QUEUE_METRIC", "STOP_SECONDS", "RegionReplicas", "ReplicaArgs", "startup_script"]
