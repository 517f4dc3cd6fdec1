"""Serving plan: instance auto-choice, replicas from demand, warm pools from the cold start."""

from __future__ import annotations

from helpers import checked

from infra.plan import InferencePlan
from infra.plan.serving import warm_pool_size


def plan_of(**spec: object) -> InferencePlan:
    plan = checked("chat-serve", spec=spec).plan  # type: ignore[arg-type]
    assert isinstance(plan, InferencePlan)
    return plan


def test_auto_picks_the_cheapest_fitting_l4_type() -> None:
    plan = plan_of()
    assert plan.choice.chosen == "g6.xlarge"
    prices = [c.usd_per_hour_total for c in plan.choice.candidates if c.fits and c.usd_per_hour_total is not None]
    assert prices == sorted(prices)


def test_auto_without_gpu_filter_weighs_every_family_over_all_regions() -> None:
    plan = plan_of(**{"instance.gpu": None})
    by_type = {c.instance_type: c for c in plan.choice.candidates}
    assert by_type["inf2.xlarge"].fits
    # Inferentia2 is cheaper in us-east-1 alone, but summed over the fleet's regions g6.xlarge wins.
    assert by_type["inf2.xlarge"].usd_per_hour_total > by_type["g6.xlarge"].usd_per_hour_total
    assert plan.choice.chosen == "g6.xlarge"


def test_auto_in_one_region_picks_inferentia() -> None:
    only_use1 = {
        "regions": [
            {
                "region": "us-east-1",
                "min_replicas": 1,
                "max_replicas": 2,
                "peak_rps": 1,
                "certificate_arn": "arn:aws:acm:us-east-1:222222222222:certificate/x",
            }
        ]
    }
    assert plan_of(**{"instance.gpu": None, **only_use1}).choice.chosen == "inf2.xlarge"


def test_auto_moves_up_when_the_model_grows() -> None:
    plan = plan_of(**{"model.max_concurrent_sequences": 16, "instance.gpu": None})
    assert plan.choice.chosen not in ("g6.xlarge", "inf2.xlarge")
    chosen = next(c for c in plan.choice.candidates if c.instance_type == plan.choice.chosen)
    assert chosen.fits and chosen.usable_bytes >= plan.memory.needed_bytes


def test_region_override_and_demand() -> None:
    regions = {r.region: r for r in plan_of().regions}
    assert regions["ap-northeast-1"].instance_type == "g6e.xlarge"
    assert regions["us-east-1"].demand_replicas == 10  # 24 rps / 2.5 per replica
    assert regions["us-east-1"].planned_replicas == 10
    assert regions["us-east-1"].on_demand_base == 2


def test_warm_pool_covers_growth_during_one_cold_start() -> None:
    # 100 rps peak, trough 10: +90 rps over 60 min = 0.025 rps/s; 600 s cold start -> 15 rps -> 6 replicas.
    assert warm_pool_size("auto", 100, 2.5, 600, 60, burst=20) == 6
    assert warm_pool_size("auto", 100, 2.5, 600, 60, burst=4) == 4
    assert warm_pool_size("off", 100, 2.5, 600, 60, burst=20) == 0
    assert warm_pool_size(3, 100, 2.5, 600, 60, burst=2) == 2
