"""A region never runs more than max_replicas, through a spot shortage and the return of spot: the generated
groups and alarms driven minute by minute (tests/scaling_sim.py models CloudWatch and EC2 Auto Scaling as AWS
documents them, reading every setting from the resource graph).

The review's case: spot short, the on-demand overflow group launched the spot share; spot returned and nothing
lowered the burst group's pending count, so base + spot + overflow ran (11 where max_replicas was 8). Here the
overflow only takes slots the burst group gives up, and the burst group scales only into its headroom.
"""

from __future__ import annotations

import copy
import math
from dataclasses import replace

import pytest
from gpuinfra.graph import Graph
from gpuinfra.plan import InferencePlan
from helpers import checked, example_graph
from scaling_sim import RegionSim

FLEET = "chat-serve"
TARGET = 18  # autoscaling.target_queue_depth_per_replica in the example
RPS = 1.5  # throughput_rps_per_replica in the example (every region)


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph(FLEET)


@pytest.fixture(scope="module")
def plan() -> InferencePlan:
    result = checked(FLEET).plan
    assert isinstance(result, InferencePlan)
    return result


def sim_of(graph: Graph, plan: InferencePlan, region: str) -> RegionSim:
    rp = next(r for r in plan.regions if r.region == region)
    return RegionSim(
        graph, FLEET, region, math.ceil(rp.cold_start_seconds / 60), math.ceil(rp.drain_seconds / 60), RPS, TARGET
    )


def shortage_and_return(sim: RegionSim, peak_rps: float) -> None:
    """Ramp to the peak over an hour with spot; spot gone at minute 90 (its replicas interrupted), back at 240;
    the peak holds until 400, then the trough (a sixth of the peak) until 600."""

    def demand(m: int) -> float:
        if m < 60:
            return peak_rps / 6 + (peak_rps - peak_rps / 6) * m / 60
        return peak_rps if m < 400 else peak_rps / 6

    sim.run(600, demand, lambda m: not (90 <= m < 240))


@pytest.mark.parametrize("region", ["us-east-1", "us-west-2", "eu-central-1", "ap-northeast-1"])
def test_spot_shortage_and_return_never_run_more_than_max_replicas(
    graph: Graph, plan: InferencePlan, region: str
) -> None:
    rp = next(r for r in plan.regions if r.region == region)
    sim = sim_of(graph, plan, region)
    groups = sim.groups
    base, burst, overflow = (groups[f"{FLEET}-{region}-{k}"] for k in ("base", "burst", "overflow"))
    assert base.max_size + burst.max_size == rp.max_replicas  # the on-demand and spot parts
    assert burst.spot and not base.spot and not overflow.spot
    # The region at the failover peak: its maximum's worth of load (max x 1.5 requests/s).
    peak = rp.max_replicas * RPS
    shortage_and_return(sim, peak)
    log = sim.log
    assert max(row["running"] for row in log) <= rp.max_replicas, max(log, key=lambda r: r["running"])
    # ... and it still serves: the overflow replaced every interrupted spot replica before spot came back,
    short = [row for row in log if 150 <= row["minute"] < 240]
    assert all(row["in_service"] == rp.max_replicas for row in short)
    assert short[-1]["overflow"] == (burst.max_size, burst.max_size) and short[-1]["burst"] == (0, 0)
    # spot's return changed nothing while the load stayed (no replica above the maximum, none lost),
    back = [row for row in log if 240 <= row["minute"] < 400]
    assert all(row["running"] == row["in_service"] == rp.max_replicas for row in back)
    # and at the trough the on-demand overflow left before any base replica (the base keeps its floor).
    first_base_drop = next(row["minute"] for row in log if row["minute"] > 400 and row["base"][0] < base.max_size)
    overflow_empty = next(row["minute"] for row in log if row["minute"] > 400 and row["overflow"][0] == 0)
    assert overflow_empty <= first_base_drop
    assert log[-1]["overflow"] == (0, 0) and log[-1]["burst"] == (0, 0)
    assert log[-1]["base"][0] >= rp.min_replicas


def test_the_model_counts_the_review_s_overrun_when_the_burst_keeps_its_slots(
    graph: Graph, plan: InferencePlan
) -> None:
    """The same run with the transfer's burst -1 taken out of the spot-short alarm (the overflow then adds to the
    burst's unfulfilled slots, as before): the model counts base + spot + overflow above the maximum, so the
    test above can fail."""
    region = "us-east-1"
    alarms = {a.name: a for a in graph.of_type("aws:cloudwatch/metricAlarm:MetricAlarm")}
    short = alarms[f"{FLEET}-{region}-replicas-spot-short"]
    inputs = copy.deepcopy(short.inputs)
    inputs["alarmActions"] = [a for a in inputs["alarmActions"] if "burst-give" not in a]
    assert len(inputs["alarmActions"]) == 1
    mutant = Graph.of(
        graph.stack, graph.project, [replace(r, inputs=inputs) if r.urn == short.urn else r for r in graph.resources]
    )
    sim = sim_of(mutant, plan, region)
    rp = plan.regions[0]
    shortage_and_return(sim, rp.max_replicas * RPS)
    worst = max(row["running"] for row in sim.log)
    # base 14 + burst 12 back on spot + overflow 12 = 38 where max_replicas is 26.
    assert worst == 38 and rp.max_replicas == 26


def test_every_alarm_is_within_cloudwatch_s_limits(graph: Graph) -> None:
    """A metric math alarm reads at most 10 metrics and 10 expressions (CloudWatch user guide, alarm limits;
    PutMetricAlarm, Metrics) and an expression is at most 2,048 characters (botocore cloudwatch model,
    MetricDataQuery.Expression)."""
    import botocore.session

    limit = botocore.session.get_session().get_service_model("cloudwatch").shape_for("MetricDataQuery")
    longest = limit.members["Expression"].metadata["max"]
    assert longest == 2048
    for alarm in graph.of_type("aws:cloudwatch/metricAlarm:MetricAlarm"):
        queries = alarm.inputs.get("metricQueries") or []
        assert sum(1 for q in queries if q.get("metric")) <= 10, alarm.name
        assert sum(1 for q in queries if q.get("expression")) <= 10, alarm.name
        assert all(len(q.get("expression") or "") <= longest for q in queries), alarm.name
