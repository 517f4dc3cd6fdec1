"""What a Kubernetes training pod does when it is stopped (a drain, node repair, a JobSet restart, the kubelet's
graceful node shutdown): the same checkpoint contract as a Slurm node's interruption watcher. A preStop hook
writes the checkpoint-now file (the epoch second to finish by) and waits the planner's checkpoint write time; then
the kubelet sends SIGTERM, which torchrun forwards to its workers and follows with SIGKILL 30 s later. The pod's
terminationGracePeriodSeconds covers both (Kubernetes, "Container Lifecycle Hooks": the grace period counts from
before the preStop hook runs, and the hook must finish before SIGTERM is sent)."""

from __future__ import annotations

from gpuinfra.pulumi.components.training.bootstrap import (
    CHECKPOINT_NOW_FILE,
    REQUEUE_MARGIN_SECONDS,
    TERM_SECONDS,
    save_seconds,
)

NOW_DIR = CHECKPOINT_NOW_FILE.rsplit("/", 1)[0]
"""An emptyDir in the pod at the path a Slurm node uses: one file name in the contract."""
NO_CHECKPOINT_GRACE_SECONDS = TERM_SECONDS + REQUEUE_MARGIN_SECONDS


def checkpoint_window(write_seconds: float | None) -> int:
    """Seconds the preStop hook gives the trainer: the planner's checkpoint write time, capped so the window,
    torchrun's 30 s shutdown and a margin fit the 120 s spot notice (bootstrap.save_seconds, shared with PCS)."""
    return save_seconds(write_seconds)


def grace_seconds(window: int | None) -> int:
    """terminationGracePeriodSeconds: the checkpoint window, torchrun's shutdown after SIGTERM, and a margin."""
    return NO_CHECKPOINT_GRACE_SECONDS + (window or 0)


def pre_stop(window: int, now_file: str = CHECKPOINT_NOW_FILE) -> str:
    """The preStop hook's POSIX sh script (run by the image's /bin/sh, with the container's environment): write the
    deadline atomically, then wait out the window (a trainer that has finished may simply exit: SIGTERM follows)."""
    directory = now_file.rsplit("/", 1)[0]
    return (
        f"deadline=$(( $(date +%s) + {window} )) && mkdir -p {directory} && "
        f'printf "%s\\n" "$deadline" > {now_file}.tmp && mv {now_file}.tmp {now_file} && sleep {window}'
    )


__all__ = ["NOW_DIR", "checkpoint_window", "grace_seconds", "pre_stop"]
