"""Owning versus renting: the monthly cost of owned nodes (capital amortized straight-line over their life,
power at facility kW, colocation per contracted IT kW, support) against the same nodes rented on AWS, and the
month from which owning has cost less in total (capital paid up front, then each month's running cost)."""

from __future__ import annotations

import math
from decimal import Decimal

from gpuinfra.plan.checkpoint import HOURS_PER_MONTH
from gpuinfra.plan.memory import Plain

CENT = Decimal("0.01")


class Rental(Plain):
    """The same cluster rented: its monthly cost and the month owning breaks even against it."""

    purchase: str
    monthly_usd: Decimal | None
    break_even_month: int | None
    """First month by whose end owning has cost less in total; None when renting never costs more per month
    than running the owned nodes, or the rate is unknown."""


class OwnershipPlan(Plain):
    nodes: int
    capex_usd: Decimal
    life_years: float
    amortization_monthly_usd: Decimal
    it_kw: float
    """Nameplate IT power of the nodes (the rack plan's figure) times the stated average draw."""
    facility_kw: float
    """IT kW times the site's PUE."""
    power_monthly_usd: Decimal
    colocation_monthly_usd: Decimal
    support_monthly_usd: Decimal
    running_monthly_usd: Decimal
    """Power, colocation and support: what owning costs each month once the nodes are paid for."""
    total_monthly_usd: Decimal
    """Running cost plus amortization: the monthly cost of ownership."""
    aws_instance_type: str | None
    aws_region: str
    rentals: list[Rental]
    sources: list[str] = []


def break_even_month(capex: Decimal, running_monthly: Decimal, rent_monthly: Decimal | None) -> int | None:
    """Smallest m with capex + running x m <= rent x m."""
    if rent_monthly is None or rent_monthly <= running_monthly:
        return None
    return math.ceil(capex / (rent_monthly - running_monthly))


def ownership_plan(
    nodes: int,
    capex_per_node: Decimal,
    life_years: float,
    nameplate_it_kw: float,
    draw_fraction: float,
    pue: float,
    usd_per_kwh: Decimal,
    colocation_usd_per_kw_month: Decimal,
    support_usd_per_node_year: Decimal,
    aws_instance_type: str | None,
    aws_region: str,
    rent_hourly_per_node: dict[str, Decimal | None],
    sources: list[str],
) -> OwnershipPlan:
    capex = capex_per_node * nodes
    amortization = capex / Decimal(repr(life_years * 12))
    it_kw = nameplate_it_kw * draw_fraction
    facility_kw = it_kw * pue
    power = Decimal(repr(facility_kw)) * Decimal(repr(HOURS_PER_MONTH)) * usd_per_kwh
    colocation = Decimal(repr(nameplate_it_kw)) * colocation_usd_per_kw_month
    support = support_usd_per_node_year * nodes / 12
    running = power + colocation + support
    rentals = []
    for purchase, hourly in rent_hourly_per_node.items():
        monthly = None if hourly is None else (hourly * nodes * Decimal(repr(HOURS_PER_MONTH))).quantize(CENT)
        rentals.append(
            Rental(purchase=purchase, monthly_usd=monthly, break_even_month=break_even_month(capex, running, monthly))
        )
    return OwnershipPlan(
        nodes=nodes,
        capex_usd=capex.quantize(CENT),
        life_years=life_years,
        amortization_monthly_usd=amortization.quantize(CENT),
        it_kw=it_kw,
        facility_kw=facility_kw,
        power_monthly_usd=power.quantize(CENT),
        colocation_monthly_usd=colocation.quantize(CENT),
        support_monthly_usd=support.quantize(CENT),
        running_monthly_usd=running.quantize(CENT),
        total_monthly_usd=(running + amortization).quantize(CENT),
        aws_instance_type=aws_instance_type,
        aws_region=aws_region,
        rentals=rentals,
        sources=sources,
    )


__all__ = ["OwnershipPlan", "Rental", "break_even_month", "ownership_plan"]
