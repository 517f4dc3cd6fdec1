"""What a fleet serves at peak with one region lost: per region, the load it takes when the largest other
region fails over to it, against its maximum; per lost region, the survivors' capacity against the demand.

Latency routing sends a failed region's clients to the healthy region nearest to them (Route 53 DG,
"Latency-based routing"; Global Accelerator sends traffic to the closest healthy endpoint group), which for a
region's whole user base is one neighbour, not a share of every survivor. Without a latency table any survivor
may be that neighbour, so each is held to its own peak plus the largest other region's (the sizing of
plan/serving.py's failover_replicas, which failover n_plus_one applies to max_replicas).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from gpuinfra.plan.memory import Plain


class RegionLoad(NamedTuple):
    region: str
    peak_rps: float
    rps_per_replica: float
    max_replicas: int


class FailoverRow(Plain):
    """One region as a survivor: the largest other region's peak lands on it."""

    region: str
    peak_rps: float
    takes_from: str
    """The largest other region (by peak): the worst single loss this region may have to absorb."""
    load_rps: float
    """Its own peak plus takes_from's."""
    needed_replicas: int
    max_replicas: int
    capacity_rps: float
    """max_replicas x the region's measured requests/s per replica."""
    short_rps: float
    """Load the region cannot serve at its maximum (0 when it can)."""

    @property
    def short_replicas(self) -> int:
        return max(0, self.needed_replicas - self.max_replicas)


class FleetLoss(Plain):
    """One region lost at peak: the survivors' capacity at their maxima against the fleet's whole peak."""

    lost: str
    demand_rps: float
    survivors_capacity_rps: float
    short_rps: float


def _replicas(rps: float, per_replica: float) -> int:
    return math.ceil(rps / per_replica - 1e-9)


def failover_rows(regions: list[RegionLoad]) -> list[FailoverRow]:
    """Each region held to its peak plus the largest other's (empty for a single region: no survivor)."""
    if len(regions) < 2:
        return []
    rows = []
    for r in regions:
        other = max((o for o in regions if o is not r), key=lambda o: o.peak_rps)
        load = r.peak_rps + other.peak_rps
        capacity = r.max_replicas * r.rps_per_replica
        rows.append(
            FailoverRow(
                region=r.region,
                peak_rps=r.peak_rps,
                takes_from=other.region,
                load_rps=load,
                needed_replicas=_replicas(load, r.rps_per_replica),
                max_replicas=r.max_replicas,
                capacity_rps=round(capacity, 3),
                short_rps=round(max(0.0, load - capacity), 3),
            )
        )
    return rows


def fleet_losses(regions: list[RegionLoad]) -> list[FleetLoss]:
    """Per lost region: whether the survivors together could hold the fleet's peak at all (a necessary
    condition, not a sufficient one: routing decides where the load lands, failover_rows bounds that)."""
    if len(regions) < 2:
        return []
    demand = sum(r.peak_rps for r in regions)
    out = []
    for lost in regions:
        capacity = sum(r.max_replicas * r.rps_per_replica for r in regions if r is not lost)
        out.append(
            FleetLoss(
                lost=lost.region,
                demand_rps=demand,
                survivors_capacity_rps=round(capacity, 3),
                short_rps=round(max(0.0, demand - capacity), 3),
            )
        )
    return out


__all__ = ["FailoverRow", "FleetLoss", "RegionLoad", "failover_rows", "fleet_losses"]
