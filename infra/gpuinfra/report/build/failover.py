"""The failover table: what each region serves at peak with the largest other region failed over to it."""

from __future__ import annotations

from gpuinfra.plan import InferencePlan
from gpuinfra.report.format import number
from gpuinfra.report.model import Section


def _rps(value: float) -> str:
    return number(value, 1)


def failover_section(plan: InferencePlan) -> Section | None:
    """None for a single-region fleet (nothing to fail over to)."""
    if not plan.failover:
        return None
    return Section(
        title="Failover: one region lost at peak",
        columns=["region", "peak rps", "takes over", "load rps", "needs", "max", "capacity rps", "short rps"],
        rows=[
            [
                r.region,
                _rps(r.peak_rps),
                r.takes_from,
                _rps(r.load_rps),
                str(r.needed_replicas),
                str(r.max_replicas),
                _rps(r.capacity_rps),
                _rps(r.short_rps) if r.short_rps else "-",
            ]
            for r in plan.failover
        ],
        notes=[
            "takes over: the largest other region, whose clients latency routing sends to their nearest healthy "
            "region, any survivor may be it; capacity = max x the measured requests/s per replica",
            *(
                f"{loss.lost} lost: the survivors serve {_rps(loss.survivors_capacity_rps)} of the fleet's "
                f"{_rps(loss.demand_rps)} requests/s at their maxima"
                + (f" (short by {_rps(loss.short_rps)})" if loss.short_rps else "")
                for loss in plan.fleet_losses
            ),
        ],
    )


__all__ = ["failover_section"]
