"""The rollout table: where a new release's canary can start in each region, the registry's home region first."""

from __future__ import annotations

from gpuinfra.plan import InferencePlan
from gpuinfra.report.format import number
from gpuinfra.report.model import Section


def _seconds(value: int) -> str:
    return f"{number(value, 0)} s" if value else "-"


def rollout_section(plan: InferencePlan) -> Section | None:
    """None without a registry (the validators refuse such a fleet)."""
    if not plan.rollout:
        return None
    return Section(
        title="Rollout of a new release, at most after the promote",
        columns=["order", "region", "weights from", "manifest wait", "first step", "first ready", "soak", "rest from"],
        rows=[
            [
                str(s.order),
                s.region,
                s.weights_bucket,
                _seconds(s.manifest_wait_seconds),
                s.first_step,
                _seconds(s.first_ready_seconds),
                _seconds(s.soak_seconds),
                _seconds(s.rest_from_seconds),
            ]
            for s in plan.rollout
        ],
        notes=[
            "1: the registry's home region, whose bucket holds a release once promote.sh writes its manifest; "
            "2: the replica regions, side by side: Replication Time Control copies 99.99% of objects within 15 "
            "minutes, and a region's first new replica waits until the manifest is in its own bucket",
            *(
                [
                    "soak: the canary's CheckpointDelay (a cold start plus the window of the alarms that stop the "
                    "refresh); a stopped refresh leaves the region's other replicas on the old release"
                ]
                if any(s.soak_seconds for s in plan.rollout)
                else []
            ),
        ],
    )


__all__ = ["rollout_section"]
