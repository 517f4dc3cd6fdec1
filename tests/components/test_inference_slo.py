"""The serving regions' service-level alarms in the example fleet's graph: the load balancer's 5xx share,
response time p90/p99 against the latency target, unhealthy replicas; vLLM's time to first token and
inter-token latency when the spec gives targets. Who they page: tests/components/test_inference_alerts.py."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gpuinfra.graph import Graph, Resource
from helpers import DELETE, example_data, example_graph, graph_for

ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
SPEC = example_data("chat-serve")["config"]["gpuinfra:inference"]
REGIONS = [r["region"] for r in SPEC["regions"]]
NO_ALERTS = {"accounts.ml-inference.alerts": DELETE}


def slo_alarms(graph: Graph) -> dict[str, Resource]:
    """The SLO alarms by name (`<fleet>-<region>-<key>`), without the scaling loop's and endpoint's alarms."""
    keys = ("5xx-share", "response-time-p90", "response-time-p99", "unhealthy-replica", "ttft", "inter-token")
    out = {}
    for r in graph.of_type(ALARM):
        name = r.inputs.get("name") or ""
        if any(name.endswith(f"-{k}") for k in keys):
            out[name] = r
    return out


def loads(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph("chat-serve")


def test_every_alb_region_alarms_on_errors_latency_and_unhealthy_replicas(graph: Graph) -> None:
    alarms = slo_alarms(graph)
    expected = {
        f"chat-serve-{region}-{key}"
        for region in REGIONS
        for key in ("5xx-share", "response-time-p90", "response-time-p99", "unhealthy-replica")
    }
    # The example gives no TTFT or inter-token target: those metrics are published, not alarmed.
    assert set(alarms) == expected


def test_the_5xx_share_is_target_errors_over_requests(graph: Graph) -> None:
    share = slo_alarms(graph)["chat-serve-us-east-1-5xx-share"].inputs
    queries = {q["id"]: q for q in loads(share["metricQueries"])}
    assert queries["errors"]["metric"]["metricName"] == "HTTPCode_Target_5XX_Count"
    assert queries["requests"]["metric"]["metricName"] == "RequestCount"
    assert {queries[q]["metric"]["stat"] for q in ("errors", "requests")} == {"Sum"}
    assert queries["share"]["expression"] == "100 * FILL(errors, 0) / requests"
    assert queries["share"]["returnData"] is True
    assert share["threshold"] == 1.0  # slo.error_rate_percent's default
    assert share["treatMissingData"] == "notBreaching"  # no requests is no error


def test_response_time_percentiles_against_the_latency_target(graph: Graph) -> None:
    alarms = slo_alarms(graph)
    for p in ("p90", "p99"):
        inputs = alarms[f"chat-serve-eu-central-1-response-time-{p}"].inputs
        assert inputs["metricName"] == "TargetResponseTime"
        assert inputs["namespace"] == "AWS/ApplicationELB"
        assert inputs["extendedStatistic"] == p
        assert inputs["threshold"] == SPEC["requests"]["latency_target_seconds"] == 20
        assert inputs["evaluationPeriods"] == inputs["datapointsToAlarm"] == 5
        assert inputs["period"] == 60


def test_without_alerts_the_alarms_have_no_actions() -> None:
    for inputs in (a.inputs for a in slo_alarms(graph_for("chat-serve", org=NO_ALERTS)).values()):
        assert not inputs.get("alarmActions") and not inputs.get("okActions")
        assert inputs.get("actionsEnabled") is False


def test_targets_add_server_alarms() -> None:
    graph = graph_for(
        "chat-serve",
        {
            "slo": {
                "time_to_first_token_seconds": 2.0,
                "inter_token_latency_seconds": 0.08,
                "error_rate_percent": 0.5,
                "evaluation_minutes": 3,
            }
        },
    )
    alarms = slo_alarms(graph)
    assert len(alarms) == 6 * len(REGIONS)
    ttft = alarms["chat-serve-us-east-1-ttft"].inputs
    assert (ttft["namespace"], ttft["metricName"], ttft["statistic"]) == (
        "gpuinfra/Inference",
        "TimeToFirstToken",
        "Average",
    )
    assert loads(ttft["dimensions"]) == {"Fleet": "chat-serve"}
    assert ttft["threshold"] == 2.0 and ttft["evaluationPeriods"] == 3
    assert alarms["chat-serve-us-east-1-inter-token"].inputs["metricName"] == "InterTokenLatency"
    assert alarms["chat-serve-us-east-1-inter-token"].inputs["threshold"] == 0.08
    assert alarms["chat-serve-us-east-1-5xx-share"].inputs["threshold"] == 0.5


def test_an_nlb_region_alarms_on_unhealthy_replicas_only() -> None:
    graph = graph_for("chat-serve", {"load_balancer.type": "nlb", "access.waf": None, "access.scheme": "internal"})
    alarms = slo_alarms(graph)
    assert set(alarms) == {f"chat-serve-{region}-unhealthy-replica" for region in REGIONS}
    assert {a.inputs["namespace"] for a in alarms.values()} == {"AWS/NetworkELB"}


def test_the_cost_prices_each_alarm_metric_at_the_catalog_rate(graph: Graph) -> None:
    """cloudwatch/alarm_standard is $0.10 an alarm metric a month (catalog services.yaml, source cw-alarm-price):
    the 5xx share watches two metrics ($0.20), the others one ($0.10): $0.50 per ALB region. The
    region-fallback flag is the catalog's us-east-1 rate applied to the other regions."""
    from decimal import Decimal

    from gpuinfra.catalog import load_catalog
    from gpuinfra.cost.pricing import price_graph

    priced = {r.name: r for r in price_graph(graph, load_catalog()).resources}
    monthly = {
        key: sum((line.monthly or Decimal(0)) for line in priced[f"chat-serve-us-east-1-{key}"].lines)
        for key in ("5xx-share", "response-time-p90", "response-time-p99", "unhealthy-replica")
    }
    assert monthly == {
        "5xx-share": Decimal("0.20"),
        "response-time-p90": Decimal("0.10"),
        "response-time-p99": Decimal("0.10"),
        "unhealthy-replica": Decimal("0.10"),
    }
