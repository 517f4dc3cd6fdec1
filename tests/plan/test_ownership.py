"""Owning versus renting, computed by hand."""

from __future__ import annotations

from decimal import Decimal

import pytest
from gpuinfra.plan.ownership import break_even_month, ownership_plan
from gpuinfra.plan.tokens import cost_per_million_tokens


def test_monthly_cost_of_ownership_and_break_even_by_hand() -> None:
    plan = ownership_plan(
        nodes=2,
        capex_per_node=Decimal(100_000),
        life_years=5,
        nameplate_it_kw=20.0,
        draw_fraction=1.0,
        pue=1.5,
        usd_per_kwh=Decimal("0.10"),
        colocation_usd_per_kw_month=Decimal(100),
        support_usd_per_node_year=Decimal(12_000),
        aws_instance_type="p5.48xlarge",
        aws_region="us-east-1",
        rent_hourly_per_node={"on-demand": Decimal(50), "spot": Decimal(4)},
        sources=[],
    )
    # Straight-line amortization: 200,000 / 60 months. Power: 20 kW x 1.5 PUE x 730 h x $0.10 = 2,190.
    # Colocation on nameplate IT kW: 20 x 100. Support: 2 x 12,000 / 12. Running: 2,190 + 2,000 + 2,000.
    assert plan.amortization_monthly_usd == Decimal("3333.33")
    assert plan.power_monthly_usd == Decimal("2190.00")
    assert plan.colocation_monthly_usd == Decimal("2000.00")
    assert plan.support_monthly_usd == Decimal("2000.00")
    assert plan.running_monthly_usd == Decimal("6190.00")
    assert plan.total_monthly_usd == Decimal("9523.33")
    on_demand, spot = plan.rentals
    # Renting: 2 x $50 x 730 h = 73,000 a month; owning catches up after 200,000 / (73,000 - 6,190) = 2.99 months.
    assert on_demand.monthly_usd == Decimal("73000.00")
    assert on_demand.break_even_month == 3
    # Spot at 2 x $4 x 730 = 5,840 a month is below the running cost: owning never breaks even.
    assert spot.monthly_usd == Decimal("5840.00") and spot.break_even_month is None


def test_break_even_unknown_rent_is_unknown() -> None:
    assert break_even_month(Decimal(1), Decimal(0), None) is None


def test_cost_per_million_tokens_by_hand() -> None:
    # A $36/h replica at 1,000 tokens/s makes 3.6 M tokens an hour: $10 per million.
    assert cost_per_million_tokens(1000, Decimal(36)) == pytest.approx(Decimal(10))
    # p5.48xlarge at $55.04/h (catalog, us-east-1) and 2,500 tokens/s: 55.04 / 9 = $6.1156 per million.
    assert cost_per_million_tokens(2500, Decimal("55.04")) == pytest.approx(Decimal("55.04") / 9)
    assert cost_per_million_tokens(0, Decimal(36)) is None
