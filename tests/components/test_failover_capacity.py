"""A region lost at peak, through the planner and the generated scaling settings: every survivor scales to the
load latency routing sends it and stays within its maximum (tests/scaling_sim.py drives the region's groups,
alarms and step policies minute by minute, reading them from the resource graph).

The load each survivor is held to is the planner's (plan/failover.py): its own peak plus the whole peak of the
lost region, since latency routing sends a failed region's clients to their nearest healthy region and any
survivor may be it. Hand figures for chat-serve (1.5 requests/s a replica; peaks 24, 14, 12, 6):
- us-east-1 lost: us-west-2 takes 14 + 24 = 38 (26 replicas), eu-central-1 12 + 24 = 36 (24), ap-northeast-1
  6 + 24 = 30 (20);
- us-west-2 lost: us-east-1 takes 24 + 14 = 38 (26).
Without failover sizing (failover: none) us-west-2 stops at its 12 and serves 18 of its 38 requests/s: the
review's finding, reproduced by the same model.
"""

from __future__ import annotations

import math

import pytest
from gpuinfra.graph import Graph
from gpuinfra.plan import InferencePlan
from helpers import checked, example_graph, graph_for
from scaling_sim import RegionSim

FLEET = "chat-serve"
TARGET = 18
RPS = 1.5
PEAKS = {"us-east-1": 24, "us-west-2": 14, "eu-central-1": 12, "ap-northeast-1": 6}
LOST_AT = 120


def lose(graph: Graph, plan: InferencePlan, survivor: str, lost: str) -> RegionSim:
    """The survivor ramps to its own peak over an hour, holds it, and at minute LOST_AT takes the lost region's
    peak too, for four hours."""
    rp = next(r for r in plan.regions if r.region == survivor)
    sim = RegionSim(
        graph, FLEET, survivor, math.ceil(rp.cold_start_seconds / 60), math.ceil(rp.drain_seconds / 60), RPS, TARGET
    )
    own, extra = PEAKS[survivor], PEAKS[lost]

    def demand(m: int) -> float:
        if m < 60:
            return own / 6 + (own - own / 6) * m / 60
        return own if m < LOST_AT else own + extra

    sim.run(LOST_AT + 240, demand)
    return sim


CASES = [
    ("us-east-1", "us-west-2", 26),
    ("us-east-1", "eu-central-1", 24),
    ("us-east-1", "ap-northeast-1", 20),
    ("us-west-2", "us-east-1", 26),
]


@pytest.mark.parametrize(("lost", "survivor", "replicas"), CASES)
def test_every_survivor_serves_the_lost_region_within_its_maximum(lost: str, survivor: str, replicas: int) -> None:
    result = checked(FLEET)
    plan = result.plan
    assert isinstance(plan, InferencePlan)
    row = next(r for r in plan.failover if r.region == survivor)
    assert (row.load_rps, row.needed_replicas) == (PEAKS[survivor] + PEAKS[lost], replicas)
    sim = lose(example_graph(FLEET), plan, survivor, lost)
    rp = next(r for r in plan.regions if r.region == survivor)
    assert max(r["running"] for r in sim.log) <= rp.max_replicas
    settled = [r for r in sim.log if r["minute"] >= LOST_AT + 60]
    # Serving it: enough replicas in service that each carries no more than the target in flight.
    for r in settled:
        assert r["in_service"] * RPS >= r["demand"] - 1e-9, r
        assert r["demand"] * TARGET / RPS / r["in_service"] <= TARGET
    assert settled[-1]["in_service"] >= replicas


def test_without_failover_sizing_the_survivor_saturates_below_the_load() -> None:
    spec = {"failover": "none", "suppress": ["rollout-without-rollback", "failover-short"]}
    result = checked(FLEET, spec=spec)
    plan = result.plan
    assert isinstance(plan, InferencePlan)
    west = next(r for r in plan.regions if r.region == "us-west-2")
    assert west.max_replicas == 12
    sim = lose(graph_for(FLEET, spec), plan, "us-west-2", "us-east-1")
    settled = [r for r in sim.log if r["minute"] >= LOST_AT + 60]
    assert max(r["in_service"] for r in settled) == 12
    assert all(r["in_service"] * RPS == 18 < r["demand"] == 38 for r in settled)
