"""On-demand/spot split as an Auto Scaling group computes it, and quota needs per code."""

from __future__ import annotations

import pytest
from gpuinfra.plan import InferencePlan, TrainingPlan
from gpuinfra.plan.capacity import on_demand_percentage, split_capacity
from helpers import checked


@pytest.mark.parametrize(
    ("total", "base", "pct", "expected"),
    [(12, 2, 50, (7, 5)), (8, 2, 50, (5, 3)), (16, 4, 0, (4, 12)), (5, 1, 34, (3, 2)), (3, 5, 0, (3, 0))],
)
def test_split_rounds_in_favor_of_on_demand(total: int, base: int, pct: int, expected: tuple[int, int]) -> None:
    assert split_capacity(total, base, pct) == expected


def test_percentage_from_share() -> None:
    assert on_demand_percentage(0.5) == 50
    assert on_demand_percentage(0.0) == 100


def test_training_quota_needs_split_on_demand_and_spot() -> None:
    plan = checked("llm-train").plan
    assert isinstance(plan, TrainingPlan)
    needs = {(q.code, q.purchase): q.own for q in plan.quotas}  # the stack's own (tests/plan/test_account_quotas.py)
    assert needs == {
        ("L-417A185B", "on_demand"): 16 * 192,  # the gang, on its On-Demand Capacity Reservation
        ("L-C4BD4855", "spot"): 2 * 192,  # compute.elastic: at most 2 spot nodes
        ("L-1216C47A", "on_demand"): 8,
    }


def test_inference_quota_needs_per_region() -> None:
    plan = checked("chat-serve", spec={"failover": "none"}).plan  # the spec maximum (failover sizing: test_failover.py)
    assert isinstance(plan, InferencePlan)
    use1 = {q.code: q.own for q in plan.quotas if q.region == "us-east-1"}
    # max 18, base 2, half the burst of 16 may be spot: 10 on-demand g6.xlarge (4 vCPUs) plus the on-demand
    # overflow group that stands in for the 8 spot ones when spot is short (8 x 4 = 32): 72; 8 spot, counted at
    # the largest of the burst group's overrides (g6.2xlarge / g6e.2xlarge, 8 vCPUs), as the quota policy does.
    assert use1 == {"L-DB2E81BA": 40 + 32, "L-3819A6DF": 64}
