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
