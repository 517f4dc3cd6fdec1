"""The registry's replication alarms page (review expert-inference-2 P5 and M1): an object that failed to replicate,
or one later than Replication Time Control's 15 minutes, holds every canary of that replica region (its prefetch
waits for the release's manifest), so the alarms notify the registry account's `alerts` (stacks/org.yaml names an
on-call for ml-registry) through a topic in the registry's home region, where S3 publishes the replication metrics
of the source bucket (S3 UG, "Monitoring progress with replication metrics") and where a CloudWatch alarm's SNS
action must be. Without alerts: no topic and no actions (registry-alarms-page-no-one warns:
tests/validators/test_registry.py)."""

from __future__ import annotations

import json

from gpuinfra.graph import Graph
from helpers import DELETE, example_graph, graph_for, org_data

ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
TOPIC = "aws:sns/topic:Topic"
POLICY = "aws:sns/topicPolicy:TopicPolicy"
SUBSCRIPTION = "aws:sns/topicSubscription:TopicSubscription"
ORG = org_data()
HOME = ORG["registry"]["region"]
REPLICAS = ORG["registry"]["replica_regions"]
ONCALL = ORG["accounts"]["ml-registry"]["alerts"]["email"]


def _replication_alarms(graph: Graph) -> list:  # type: ignore[type-arg]
    return [a for a in graph.of_type(ALARM) if a.inputs.get("namespace") == "AWS/S3"]


def _region(graph: Graph, resource) -> str:  # type: ignore[no-untyped-def]
    return graph.provider_of(resource).inputs["region"]  # type: ignore[union-attr,no-any-return]


def test_every_replication_alarm_pages_the_registry_s_on_call_in_the_home_region() -> None:
    graph = example_graph("model-registry")
    (topic,) = graph.of_type(TOPIC)
    assert topic.name == "model-registry-alerts-topic" and _region(graph, topic) == HOME
    (policy,) = graph.of_type(POLICY)
    (statement,) = json.loads(policy.inputs["policy"])["Statement"]
    arn = statement["Resource"]
    assert f":sns:{HOME}:{ORG['accounts']['ml-registry']['id']}:" in arn
    (sub,) = graph.of_type(SUBSCRIPTION)
    assert ONCALL == ["ml-platform-oncall@acme.example"]
    assert (sub.inputs["protocol"], sub.inputs["endpoint"]) == ("email", ONCALL[0])
    alarms = _replication_alarms(graph)
    assert len(alarms) == 2 * len(REPLICAS)  # failed and late, per replica region
    for alarm in alarms:
        assert _region(graph, alarm) == HOME, alarm.name
        assert topic.urn in alarm.dependencies
        assert alarm.inputs["actionsEnabled"] is True
        assert alarm.inputs["alarmActions"] == [arn] and alarm.inputs["okActions"] == [arn]


def test_without_alerts_no_topic_and_the_alarms_have_no_actions() -> None:
    graph = graph_for("model-registry", org={"accounts.ml-registry.alerts": DELETE})
    assert graph.of_type(TOPIC) == [] and graph.of_type(SUBSCRIPTION) == []
    alarms = _replication_alarms(graph)
    assert len(alarms) == 2 * len(REPLICAS)
    for alarm in alarms:
        assert alarm.inputs.get("actionsEnabled") is False
        assert not alarm.inputs.get("alarmActions") and not alarm.inputs.get("okActions")
