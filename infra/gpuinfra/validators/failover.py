"""Failover: a fleet that cannot serve its peak with one region lost says by how much."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.plan import InferencePlan
from gpuinfra.spec import InferenceSpec
from gpuinfra.validators.base import Failure, Level, rule


@rule(Level.ERROR, suppressible=True)
def failover_short(spec: InferenceSpec, plan: InferencePlan) -> Iterator[Failure]:
    """A region's maximum cannot take its own peak plus the largest other region's (the load latency routing
    sends it when that region fails). An error, since the fleet then fails at peak exactly when it is needed;
    suppress it to accept the risk knowingly."""
    index = {r.region: i for i, r in enumerate(spec.regions)}
    for row in plan.failover:
        if row.short_rps <= 0:
            continue
        yield Failure(
            f"{row.region}: with {row.takes_from} lost at peak it takes {row.load_rps:g} requests/s "
            f"({row.needed_replicas} replicas) but its maximum of {row.max_replicas} serves {row.capacity_rps:g}: "
            f"short by {row.short_rps:g} requests/s ({row.short_replicas} replicas)",
            ("regions", index[row.region], "max_replicas"),
            f"write `failover: n_plus_one` (raises max_replicas to {row.needed_replicas}), or `max_replicas: "
            f"{row.needed_replicas}` in the region's entry, or suppress failover-short to accept serving less with a "
            "region lost",
        )


@rule(Level.WARNING)
def failover_single_region(spec: InferenceSpec, plan: InferencePlan) -> Iterator[Failure]:
    """A fleet of one region has nowhere to fail over to: losing the region is losing the fleet, and the failover
    setting (and its table in the report) has no survivor to size, so it would otherwise change nothing silently."""
    if len(spec.regions) != 1:
        return
    region = spec.regions[0].region
    yield Failure(
        f"{region} is the fleet's only region: losing it stops the fleet, and failover {spec.failover} has no other "
        "region to send its load to (no failover table, no capacity added)",
        ("regions",),
        "add a second entry to regions (`failover: n_plus_one` then sizes each to take the other's peak), or "
        "write `suppress: [failover-single-region]` to accept a regional outage as the fleet's",
    )


__all__ = ["failover_short", "failover_single_region"]
