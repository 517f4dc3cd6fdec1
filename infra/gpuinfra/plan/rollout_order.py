"""The order a new release reaches the fleet's regions: the registry's home region first, the replica regions as
their copy of the release arrives.

Every region's groups get the new launch template in one `pulumi up`, and each starts its own instance refresh at
once, so the order is not a sequence of deploys: it is where each region's canary can start. The home region's
bucket holds a release as soon as promote.sh writes its manifest (last). A replica region's copy comes by S3
replication with Replication Time Control, which replicates 99.99% of objects within 15 minutes (S3 UG, "Meeting
compliance requirements with S3 Replication Time Control"); until the manifest is in the region's bucket its
canary's prefetch exits 75 and is retried under lifecycle heartbeats (EC2, templates/inference/prefetch.sh.j2), or
the new pod's `verify` init container fails and the kubelet restarts it with back-off (Kubernetes), so no replica
starts before its copy exists. Figures are upper bounds measured from the promote.
"""

from __future__ import annotations

import math

from gpuinfra.plan.memory import Plain
from gpuinfra.plan.rollout import (
    ALARM_PERIOD_SECONDS,
    ALARM_WINDOW_SECONDS,
    CANARY_PERCENT,
    REPLICATION_SLA_SECONDS,
    checkpoint_delay,
)

KUBELET_BACKOFF_CAP_SECONDS = 300
"""The kubelet restarts a failing container with an exponential back-off capped at five minutes (Kubernetes docs,
"Pod Lifecycle", container restarts): a pod whose init container found no manifest may wait that long after it
arrives."""


class RolloutStep(Plain):
    """One region in a new release's rollout (EC2: a canary share, a soak, the rest; Kubernetes: one pod at a
    time behind its readiness probe)."""

    order: int
    """1: the registry's home region; 2: the replica regions, side by side."""
    region: str
    weights_bucket: str
    manifest_wait_seconds: int
    """At most, after the promote: 0 in the home region, Replication Time Control's 15 minutes in a replica."""
    first_step: str
    held_seconds: int
    """At most, how long the region's first new replica may be held before its cold start begins: the manifest's
    wait, plus on Kubernetes the kubelet's back-off after it arrives."""
    first_ready_seconds: int
    """At most, after the promote: held_seconds, then one cold start."""
    soak_seconds: int
    """EC2: the refresh's CheckpointDelay after the canary (0 on Kubernetes: readiness gates each pod)."""

    @property
    def rest_from_seconds(self) -> int:
        """When the rest of the region starts replacing, at most, after the promote."""
        return self.first_ready_seconds + self.soak_seconds


def soak_window_seconds(alb: bool, slo_evaluation_minutes: int) -> int:
    """The longest window of the alarms that stop a region's refresh: the rollout's own, and on an ALB the SLO's
    5xx share over `slo_evaluation_minutes` one-minute periods (components/inference/region.py `_alarms`)."""
    return max(ALARM_WINDOW_SECONDS, slo_evaluation_minutes * ALARM_PERIOD_SECONDS if alb else 0)


def rollout_steps(
    regions: list[tuple[str, float]],
    home_region: str,
    bucket_of: dict[str, str],
    kubernetes: bool,
    soak_window: int,
) -> list[RolloutStep]:
    """Per fleet region (name, planned cold start in seconds), home region first: where its weights come from and
    when its first new replica can serve and its rest begin, at most, after a release is promoted."""
    steps = [
        _step(region, cold, region == home_region, bucket_of[region], kubernetes, soak_window)
        for region, cold in regions
    ]
    return sorted(steps, key=lambda s: s.order)


def _step(region: str, cold: float, home: bool, bucket: str, kubernetes: bool, soak_window: int) -> RolloutStep:
    wait = 0 if home else REPLICATION_SLA_SECONDS
    backoff = KUBELET_BACKOFF_CAP_SECONDS if kubernetes and wait else 0
    return RolloutStep(
        order=1 if home else 2,
        region=region,
        weights_bucket=bucket,
        manifest_wait_seconds=wait,
        held_seconds=wait + backoff,
        first_step="1 new pod (maxSurge 1)" if kubernetes else f"canary {CANARY_PERCENT}%, at least 1",
        first_ready_seconds=wait + backoff + math.ceil(cold),
        soak_seconds=0 if kubernetes else checkpoint_delay(cold, soak_window),
    )


__all__ = ["KUBELET_BACKOFF_CAP_SECONDS", "RolloutStep", "rollout_steps", "soak_window_seconds"]
