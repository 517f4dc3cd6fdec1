"""Checkpoint interval: Young's √(2·C·M), Daly's refinement, and the cluster MTBI."""

from __future__ import annotations

import math

import pytest
from gpuinfra.plan.checkpoint import checkpoint_plan, mean_time_between_interruptions, waste_fraction


def test_mtbi_sums_node_failures_and_spot_reclaims() -> None:
    # 16 nodes at 5,000 h MTBF: 0.0032/h; 12 spot nodes at 20%/month: 12 x 0.2 / 730 per hour.
    expected = 1 / (16 / 5000 + 12 * 0.2 / 730)
    assert mean_time_between_interruptions(16, 12, 5000, 0.2) == pytest.approx(expected)


def test_young_interval_by_hand() -> None:
    plan = checkpoint_plan(1120, 11.71875, 16, 12, 5000, 0.2, interval_minutes=150)
    c = 1120 / 11.71875
    m = mean_time_between_interruptions(16, 12, 5000, 0.2) * 3600
    assert plan.write_seconds == pytest.approx(c)
    assert plan.young_interval_minutes == pytest.approx(math.sqrt(2 * c * m) / 60)
    assert plan.daly_interval_minutes == pytest.approx((math.sqrt(2 * c * m) - c) / 60)
    assert plan.max_interval_minutes == pytest.approx(2 * plan.young_interval_minutes)


def test_optimum_minimizes_waste() -> None:
    plan = checkpoint_plan(1000, 10, 100, 0, 5000, 0, interval_minutes=60)
    c, m = plan.write_seconds, plan.mtbi_hours * 3600
    best = plan.young_interval_minutes * 60
    assert waste_fraction(best, c, m) < waste_fraction(best * 0.8, c, m)
    assert waste_fraction(best, c, m) < waste_fraction(best * 1.2, c, m)
    assert plan.optimal_waste_fraction == pytest.approx(2 * c / best)  # C/T* = T*/(2M) at the optimum


def test_no_interruptions_means_infinite_interval() -> None:
    assert math.isinf(mean_time_between_interruptions(0, 0, 5000, 0.1))


def test_planned_checkpoint_defaults_and_notes() -> None:
    """The one checkpoint step both clouds' planners take (AWS's Checkpointing, Google's GcpCheckpointing):
    size from the training state, bandwidth from Lustre's throughput, a note naming what is missing."""
    from gpuinfra.clouds.gcp.spec.training import GcpCheckpointing
    from gpuinfra.plan.checkpoint import planned_checkpoint
    from gpuinfra.spec.training import Checkpointing

    assert planned_checkpoint(None, 1e12, 1000.0, 4, 0, 5000, 0.1) == (None, "no checkpointing configured")
    gcs = GcpCheckpointing(target="gcs", interval_minutes=30)
    assert planned_checkpoint(gcs, 1e12, 1000.0, 4, 0, 5000, 0.1) == (
        None,
        "checkpoint write bandwidth unknown: set checkpointing.write_bandwidth_gb_s",
    )
    # 1,120 GB of state at Lustre's 11,718.75 MB/s: the hand figures of test_young_interval_by_hand.
    for ckpt in (GcpCheckpointing(interval_minutes=150), Checkpointing(interval_minutes=150)):
        plan, note = planned_checkpoint(ckpt, 1120e9, 11718.75, 16, 12, 5000, 0.2)
        assert note is None and plan is not None
        assert plan.write_seconds == pytest.approx(1120 / 11.71875)
    # A given size is GiB: 10 GiB = 10.737418240 GB, at a given 2 GB/s.
    sized = Checkpointing(interval_minutes=60, size_gib=10, write_bandwidth_gb_s=2)
    plan, _ = planned_checkpoint(sized, 1e15, None, 1, 0, 5000, 0.0)
    assert plan is not None and plan.size_gb == pytest.approx(10.73741824)
    assert plan.write_seconds == pytest.approx(10.73741824 / 2)
