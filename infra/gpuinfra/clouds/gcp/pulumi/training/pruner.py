"""Checkpoint retention on GKE: the pruner EKS and on premises run (pulumi/components/training/pruner.py: the one
script, templates/training/prune-checkpoints.sh.j2, as a CronJob outside Kueue), over the run directories on
Managed Lustre through the trainer's claim. It refuses to run unless the mount is the stack's Lustre (the source
GKE's Lustre CSI driver mounts ends in `:/<filesystem>`).

Managed Lustre exports nothing to Cloud Storage by itself, so there are no copies to tag: a checkpoint past the
newest `keep_last` (and not a milestone) leaves Lustre. The checkpoint bucket's superseded object versions expire
after `retention_days` by its own lifecycle rule (storage.py)."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpuinfra.clouds.gcp.spec.training import GcpTrainingSpec
from gpuinfra.pulumi.components.training.bootstrap import Retention
from gpuinfra.pulumi.components.training.pruner import create_pruner, cronjob_spec
from gpuinfra.pulumi.components.training.storage import CHECKPOINT_PATH
from gpuinfra.spec.training import Checkpointing

MILESTONE_MARKER = str(Checkpointing.model_fields["milestone_marker"].default)
"""The file that keeps a checkpoint forever: the training contract's (AWS's spec default), the same on GKE."""


def gke_retention(spec: GcpTrainingSpec) -> Retention | None:
    """The spec's retention over the checkpoint root on Managed Lustre; None when checkpoints go elsewhere."""
    ckpt, lustre = spec.checkpointing, spec.lustre
    if ckpt is None or ckpt.target != "lustre" or lustre is None:
        return None
    return Retention(
        f"{lustre.mount_path}{CHECKPOINT_PATH}",
        None,
        "",
        ckpt.keep_last,
        MILESTONE_MARKER,
        ckpt.retention_days,
        mount_path=lustre.mount_path,
        fs_name=lustre.filesystem,
    )


def create_gke_pruner(
    name: str,
    cluster: str,
    retention: Retention,
    image: str,
    claim: str,
    namespace: pulumi.Input[str],
    labels: dict[str, str],
    o: pulumi.ResourceOptions,
) -> k8s.batch.v1.CronJob:
    """The script's ConfigMap, the pruner's ServiceAccount and the CronJob, with the trainer's claim."""
    mount = retention.mount_path or retention.checkpoint_dir
    return create_pruner(name, cluster, retention, image, mount, _volume(claim), namespace, labels, o)


def _volume(claim: str) -> dict[str, Any]:
    return {"persistentVolumeClaim": {"claimName": claim}}


def pruner_pod(cluster: str, retention: Retention, image: str, claim: str) -> dict[str, Any]:
    """The CronJob's pod spec (the namespace's Pod Security level is judged on it too)."""
    mount = retention.mount_path or retention.checkpoint_dir
    return dict(cronjob_spec(cluster, image, mount, _volume(claim), "")["jobTemplate"]["spec"]["template"]["spec"])


__all__ = ["MILESTONE_MARKER", "create_gke_pruner", "gke_retention", "pruner_pod"]
