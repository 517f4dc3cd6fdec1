"""The checkpoint-now contract on AWS Batch spot instances (review finding T9): a host service that turns EC2's spot
interruption notice into the checkpoint-now file (templates/finetune/spot-notice.sh.j2 says why), and the job
definition's read-only mount of its directory and the variable that names the file."""

from __future__ import annotations

import posixpath
from typing import Any

from gpuinfra.pulumi.components.training.bootstrap import (
    CHECKPOINT_NOW_FILE,
    IMDS,
    SPOT_NOTICE_SECONDS,
    WATCH_POLL_SECONDS,
)
from gpuinfra.templating import renderer

render = renderer("finetune")

SCRIPT = "/usr/local/sbin/gpuinfra-spot-notice"
UNIT = "gpuinfra-spot-notice.service"
MARGIN_SECONDS = 15
"""Seconds before EC2's interruption time by which the checkpoint must be complete: time for the upload to S3 to
finish before the instance stops (a choice, as the training nodes' requeue margin)."""
NOTICE_DIR = posixpath.dirname(CHECKPOINT_NOW_FILE)
VOLUME = "gpuinfra-notice"


def spot_notice(
    queue: str, imds: str = IMDS, now_file: str = CHECKPOINT_NOW_FILE, poll_seconds: int = WATCH_POLL_SECONDS
) -> str:
    """The host script; `imds`, `now_file` and `poll_seconds` are only changed by tests."""
    return render(
        "spot-notice.sh.j2",
        queue=queue,
        imds=imds,
        now_file=now_file,
        poll_seconds=poll_seconds,
        notice_seconds=SPOT_NOTICE_SECONDS,
        margin_seconds=MARGIN_SECONDS,
    )


def container_notice() -> dict[str, Any]:
    """containerProperties members (Batch API RegisterJobDefinition: volumes[].host.sourcePath, mountPoints): the
    host's notice directory, read-only at the same path in the job's container."""
    return {
        "volumes": [{"name": VOLUME, "host": {"sourcePath": NOTICE_DIR}}],
        "mountPoints": [{"sourceVolume": VOLUME, "containerPath": NOTICE_DIR, "readOnly": True}],
    }


__all__ = [
    "MARGIN_SECONDS",
    "NOTICE_DIR",
    "SCRIPT",
    "UNIT",
    "VOLUME",
    "container_notice",
    "spot_notice",
]
