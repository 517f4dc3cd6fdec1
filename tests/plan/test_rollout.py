"""When AWS can roll a refresh back, and how long the canary soaks (plan/rollout.py)."""

from __future__ import annotations

import pytest
from gpuinfra.plan.rollout import CHECKPOINTS, checkpoint_delay, rollback_blocker


@pytest.mark.parametrize(
    ("image", "version", "blocked"),
    [
        ("ami-0abc1234def567890", "7", False),
        ("ami-0abc1234def567890", None, False),
        # RollbackInstanceRefresh: "uses an AWS Systems Manager parameter instead of an AMI ID for the ImageId":
        # an unpinned parameter stays one; a pinned version is resolved to its AMI id at deploy (launch_image)
        ("resolve:ssm:/acme/serving/gpu-ami", "7", True),
        ("resolve:ssm:/acme/serving/gpu-ami:latest", "7", True),
        ("resolve:ssm:/acme/serving/gpu-ami:7", "7", False),
        # ... and "uses the launch template's $Latest or $Default version"
        ("ami-0abc1234def567890", "$Latest", True),
        ("ami-0abc1234def567890", "$Default", True),
    ],
)
def test_rollback_is_blocked_by_an_ssm_image_or_a_floating_version(
    image: str, version: str | None, blocked: bool
) -> None:
    assert (rollback_blocker(image, version) is not None) is blocked


def test_the_canary_soaks_a_cold_start_and_the_alarm_window_within_the_api_maximum() -> None:
    assert checkpoint_delay(470.6) == 470 + 180  # three one-minute alarm periods
    assert checkpoint_delay(10**6) == 172800  # RefreshPreferences.CheckpointDelay maximum
    # ascending, unique, the last 100 (RefreshPreferences.CheckpointPercentages)
    assert list(CHECKPOINTS) == sorted(set(CHECKPOINTS)) and CHECKPOINTS[-1] == 100
