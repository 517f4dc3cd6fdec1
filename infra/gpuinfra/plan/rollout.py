"""How a new launch template version reaches a replica group: a canary step, a soak, then the rest; and
whether EC2 Auto Scaling can roll the group back when the canary's alarms fire.

Sources (EC2 Auto Scaling API reference, RefreshPreferences; user guide "Add checkpoints to an instance
refresh" and "Undo changes with a manual or auto rollback"):
- CheckpointPercentages: ascending, unique, the last one 100 to replace every instance; a checkpoint is
  reached when the share of replaced and warmed-up instances is at or above it, never below, so the first
  step of a small group is one instance.
- CheckpointDelay: seconds to wait at a checkpoint (0..172800); it needs CheckpointPercentages.
- AutoRollback: not supported when the refresh has no desired configuration, when the group uses the
  template's $Latest or $Default version, or when the template's ImageId is a Systems Manager parameter
  (resolve:ssm:...) "instead of an AMI ID"; "You also cannot roll back to a launch template that is
  configured to use an AMI alias from the AWS Systems Manager Parameter Store". So a pinned parameter version
  is read at deploy and the template gets its AMI id.
"""

from __future__ import annotations

CANARY_PERCENT = 10
"""The first checkpoint: one replica in ten (a design choice, not an AWS figure). A group of fewer than ten
replaces one instance first, because a checkpoint is reached at or above its percentage."""
CHECKPOINTS = (CANARY_PERCENT, 100)
ALARM_PERIOD_SECONDS = 60
ALARM_PERIODS = 3
"""The rollout alarm's window: three one-minute periods, as the no-healthy-replica alarm (endpoint.py)."""
ALARM_WINDOW_SECONDS = ALARM_PERIOD_SECONDS * ALARM_PERIODS
MAX_CHECKPOINT_DELAY_SECONDS = 172800
"""RefreshPreferences.CheckpointDelay's maximum (botocore autoscaling model)."""
REPLICATION_SLA_MINUTES = 15
"""S3 Replication Time Control replicates 99.99% of new objects within 15 minutes, and its
ReplicationTime.Time.Minutes and Metrics.EventThreshold.Minutes take only 15 (S3 UG "Meeting compliance requirements
with S3 Replication Time Control"; S3 API ReplicationTimeValue). A replica region's canary waits this long, at
most, for a new release's manifest (components/inference/replicas.py's launch deadline covers it)."""
REPLICATION_SLA_SECONDS = REPLICATION_SLA_MINUTES * 60
KUBERNETES_SURGE = 1
"""Pods a Kubernetes fleet's rolling update adds above the replica count (Deployment maxSurge, with
maxUnavailable 0): at max_replicas the new pod needs a node beyond the maximum, so the NodePool's limit and the
quota plan count this many more nodes."""
SSM_IMAGE = "resolve:ssm:"
FLOATING_VERSIONS = ("$Latest", "$Default")


def checkpoint_delay(cold_start_seconds: float, alarm_window_seconds: int = ALARM_WINDOW_SECONDS) -> int:
    """The canary's soak before the rest rolls: one planned cold start (a canary that fails its health checks
    is replaced by the group, and its replacement is seen failing too) plus the longest window of the alarms
    that stop the refresh, so each has judged a canary that serves before the refresh moves on."""
    return min(MAX_CHECKPOINT_DELAY_SECONDS, int(cold_start_seconds) + alarm_window_seconds)


def pinned_ssm(image_id: str) -> tuple[str, str] | None:
    """(parameter, version) of `resolve:ssm:<parameter>:<version>` with a numeric version (None otherwise): a
    pinned parameter version names one AMI, which the stack reads at deploy (SSM GetParameter takes
    `<name>:<version>`) and writes into the launch template as an AMI id."""
    if not image_id.startswith(SSM_IMAGE):
        return None
    name, _, version = image_id.removeprefix(SSM_IMAGE).rpartition(":")
    return (name, version) if name and version.isdigit() else None


def rollback_blocker(image_id: str, version: str | None = None) -> str | None:
    """Why EC2 Auto Scaling cannot roll a refresh of this template back (None: it can). A pinned SSM version is
    resolved to its AMI id at deploy (pinned_ssm), so only an unpinned parameter stays in the template."""
    if image_id.startswith(SSM_IMAGE) and pinned_ssm(image_id) is None:
        return (
            f"the image {image_id} is a Systems Manager parameter: EC2 Auto Scaling rolls back only to a launch "
            "template whose ImageId is an AMI id (RollbackInstanceRefresh, RefreshPreferences.AutoRollback)"
        )
    if version in FLOATING_VERSIONS:
        return f"the group uses the template's {version} version: a rollback needs a numbered version"
    return None


__all__ = [
    "ALARM_PERIODS",
    "ALARM_PERIOD_SECONDS",
    "ALARM_WINDOW_SECONDS",
    "CANARY_PERCENT",
    "CHECKPOINTS",
    "KUBERNETES_SURGE",
    "REPLICATION_SLA_MINUTES",
    "REPLICATION_SLA_SECONDS",
    "checkpoint_delay",
    "pinned_ssm",
    "rollback_blocker",
]
