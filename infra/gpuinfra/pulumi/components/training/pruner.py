"""Checkpoint retention on Kubernetes (EKS and on premises): the same pruner script the PCS login node runs
(templates/training/prune-checkpoints.sh.j2), as a CronJob over the run directories on the shared file system.

The CronJob is a plain batch/v1 Job without a Kueue queue label, so Kueue leaves it alone (Kueue's
manageJobsWithoutQueueName defaults to false) and it never waits behind a training run for quota. It runs in the
training namespace under its own ServiceAccount (on EKS bound by Pod Identity to a role that may only list and tag
the checkpoint prefix), with the trainer's image (bash, coreutils, findutils; the AWS CLI where S3 copies are
tagged), on any node that is not a GPU node (no GPU toleration).
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpuinfra.pulumi.components.training.bootstrap import Retention, prune_checkpoints
from gpuinfra.pulumi.components.training.storage import CHECKPOINT_PATH
from gpuinfra.spec import TrainingSpec

SCHEDULE = "*/15 * * * *"
"""Every 15 minutes, as the PCS login node's timer (OnUnitActiveSec=15min)."""
SCRIPT_PATH = "/opt/gpuinfra"


def retention_for(spec: TrainingSpec, mount_path: str, export_uri: str | None, fs_name: str = "") -> Retention | None:
    """The spec's retention over the checkpoint root on the Lustre mounted at `mount_path` (checked before each run:
    mount_check.py), with the S3 export whose copies are tagged (None: none)."""
    ckpt = spec.checkpointing
    if ckpt is None or ckpt.target != "lustre":
        return None
    bucket, _, prefix = export_uri.removeprefix("s3://").partition("/") if export_uri else (None, "", "")
    return Retention(
        f"{mount_path}{CHECKPOINT_PATH}",
        bucket,
        prefix,
        ckpt.keep_last,
        ckpt.milestone_marker,
        ckpt.retention_days,
        mount_path=mount_path,
        fs_name=fs_name,
    )


def pruner_service_account(cluster: str) -> str:
    return f"{cluster}-checkpoint-pruner"


PRUNER_CAPABILITIES = ["DAC_OVERRIDE", "FOWNER"]
"""What the pruner keeps of root's powers: it removes checkpoint directories written by the trainers, whose user
(and so the directories' owner and mode) is the training pods' choice, not the pruner's; DAC_OVERRIDE writes into
a directory it does not own, FOWNER removes from a sticky one. Both are in the Pod Security Standards' Baseline
set; the pod is Baseline, not Restricted, for them and for running as UID 0 (docs/security.md)."""


def container_security_context() -> dict[str, Any]:
    """Least privilege for the pruner: no privilege escalation, a read-only root file system (scratch in /tmp, an
    emptyDir), every capability dropped but the two it needs, the runtime's default seccomp profile."""
    return {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "privileged": False,
        "capabilities": {"drop": ["ALL"], "add": PRUNER_CAPABILITIES},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def cronjob_spec(
    cluster: str, image: str, mount_path: str, lustre_volume: dict[str, Any], script_config_map: str
) -> dict[str, Any]:
    """The CronJob's spec: one pod at a time, the script from its ConfigMap, the shared file system at the path the
    trainer sees it."""
    pod = {
        "serviceAccountName": pruner_service_account(cluster),
        # It never calls the Kubernetes API; EKS Pod Identity's credentials come through the token volume its
        # webhook projects, not through the automounted API token.
        "automountServiceAccountToken": False,
        "restartPolicy": "Never",
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [
            {
                "name": "prune",
                "image": image,
                "imagePullPolicy": "IfNotPresent",
                "command": ["/bin/bash", f"{SCRIPT_PATH}/prune-checkpoints"],
                "env": [{"name": "HOME", "value": "/tmp"}, {"name": "TMPDIR", "value": "/tmp"}],
                "resources": {
                    "requests": {"cpu": "100m", "memory": "128Mi", "ephemeral-storage": "64Mi"},
                    "limits": {"cpu": "500m", "memory": "256Mi", "ephemeral-storage": "256Mi"},
                },
                "securityContext": container_security_context(),
                "volumeMounts": [
                    {"name": "lustre", "mountPath": mount_path},
                    {"name": "script", "mountPath": SCRIPT_PATH, "readOnly": True},
                    {"name": "tmp", "mountPath": "/tmp"},
                ],
            }
        ],
        "volumes": [
            {"name": "lustre", **lustre_volume},
            {"name": "script", "configMap": {"name": script_config_map, "defaultMode": 0o555}},
            {"name": "tmp", "emptyDir": {"sizeLimit": "256Mi"}},
        ],
    }
    return {
        "schedule": SCHEDULE,
        "concurrencyPolicy": "Forbid",
        "successfulJobsHistoryLimit": 1,
        "failedJobsHistoryLimit": 3,
        "jobTemplate": {"spec": {"backoffLimit": 0, "template": {"spec": pod}}},
    }


def create_pruner(
    name: str,
    cluster: str,
    retention: Retention,
    image: str,
    mount_path: str,
    lustre_volume: dict[str, Any],
    namespace: pulumi.Input[str],
    labels: dict[str, str],
    o: pulumi.ResourceOptions,
) -> k8s.batch.v1.CronJob:
    """ConfigMap (the script), ServiceAccount and CronJob in the training namespace."""
    script = k8s.core.v1.ConfigMap(
        f"{name}-pruner-script",
        metadata={"name": f"{cluster}-checkpoint-pruner", "namespace": namespace, "labels": labels},
        data={"prune-checkpoints": prune_checkpoints(cluster, retention)},
        opts=o,
    )
    k8s.core.v1.ServiceAccount(
        f"{name}-pruner-sa",
        metadata={"name": pruner_service_account(cluster), "namespace": namespace, "labels": labels},
        opts=o,
    )
    return k8s.batch.v1.CronJob(
        f"{name}-pruner",
        metadata={"name": f"{cluster}-checkpoint-pruner", "namespace": namespace, "labels": labels},
        spec=script.metadata["name"].apply(lambda cm: cronjob_spec(cluster, image, mount_path, lustre_volume, cm)),
        opts=o,
    )


__all__ = ["SCHEDULE", "create_pruner", "cronjob_spec", "pruner_service_account", "retention_for"]
