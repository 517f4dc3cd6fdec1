"""Splitting capacity into on-demand and spot the way an Auto Scaling group does.

AWS: above the on-demand base, `OnDemandPercentageAboveBaseCapacity` decides the mix and a fractional
on-demand count rounds up "in favor of On-Demand". The planner, the cost model and the quota policy
all count with this one function.
"""

from __future__ import annotations

import math


def on_demand_percentage(spot_share: float) -> int:
    """Percent of capacity above the base that is on-demand, for a share that may be spot."""
    return round(100 * (1.0 - spot_share))


def split_capacity(total: int, on_demand_base: int, on_demand_pct_above_base: int) -> tuple[int, int]:
    """(on-demand, spot) instance counts of a group running `total` instances."""
    base = min(on_demand_base, total)
    above = total - base
    on_demand_above = math.ceil(above * on_demand_pct_above_base / 100 - 1e-9)
    return base + on_demand_above, above - on_demand_above


__all__ = ["on_demand_percentage", "split_capacity"]
