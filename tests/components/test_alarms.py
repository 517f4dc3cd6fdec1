"""Alarms that reach someone: with the account's `alerts` set (the example organization sets it for ml-training;
here also made production, with another on-call address), each AWS training and fine-tuning example gets an SNS
topic the alerts subscribe to, a topic policy that lets CloudWatch and EventBridge of this account publish, and the
alarms the review asked for (finding T11), each acting on the topic; without alerts, none (they would reach no one).
Thresholds are recomputed here from their definitions."""

from __future__ import annotations

import json
from functools import cache

import pytest
from gpuinfra.graph import Graph
from helpers import DELETE, example_graph, graph_for

ALERTS = {"accounts.ml-training.production": True, "accounts.ml-training.alerts": {"email": ["ml-oncall@example.com"]}}
ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"


@cache
def with_alerts(stack: str) -> Graph:
    return graph_for(stack, org=ALERTS)


TOPIC = "aws:sns/topic:Topic"
SUBSCRIPTION = "aws:sns/topicSubscription:TopicSubscription"


def alarms(graph: Graph) -> dict[str, dict]:
    return {r.name.removeprefix(f"{graph.stack}-alarms-"): r.inputs for r in graph.of_type(ALARM)}


def acts_on_the_topic(graph: Graph, name: str) -> bool:
    (topic,) = graph.of_type(TOPIC)
    alarm = graph.named(ALARM, f"{graph.stack}-alarms-{name}")
    inputs = alarm.inputs
    return (
        topic.urn in alarm.dependencies
        and len(inputs["alarmActions"]) == 1
        and inputs["alarmActions"] == inputs["okActions"]
    )


@pytest.mark.parametrize("stack", ["llm-train", "llm-train-eks", "llm-finetune"])
def test_the_topic_reaches_the_account_s_on_call(stack: str) -> None:
    graph = with_alerts(stack)
    (topic,) = graph.of_type(TOPIC)
    (sub,) = graph.of_type(SUBSCRIPTION)
    assert (sub.inputs["protocol"], sub.inputs["endpoint"]) == ("email", "ml-oncall@example.com")
    assert topic.urn in sub.dependencies
    (policy,) = graph.of_type("aws:sns/topicPolicy:TopicPolicy")
    (statement,) = json.loads(policy.inputs["policy"])["Statement"]
    assert statement["Principal"]["Service"] == ["cloudwatch.amazonaws.com", "events.amazonaws.com"]
    assert statement["Condition"] == {"StringEquals": {"aws:SourceAccount": "111111111111"}}


def test_the_pcs_stack_alarms_on_capacity_nodes_gpus_and_the_pruner() -> None:
    graph = with_alerts("llm-train")
    found = alarms(graph)
    assert set(found) == {"lustre-free", "unavailable-nodes", "gpu-errors", "pruner"}
    for name in found:
        assert acts_on_the_topic(graph, name), name
    lustre = found["lustre-free"]
    # 57,600 GiB (the example's file system) x 1024^3 bytes x 0.2
    assert lustre["threshold"] == 57_600 * 1024**3 * 0.2 == 12_369_505_812_480
    assert (lustre["namespace"], lustre["metricName"]) == ("AWS/FSx", "FreeDataStorageCapacity")
    nodes = found["unavailable-nodes"]
    assert (nodes["metricName"], nodes["comparisonOperator"], nodes["threshold"]) == (
        "UnavailableNodes",
        "GreaterThanThreshold",
        0,
    )
    assert nodes["period"] * nodes["evaluationPeriods"] == 1800 and nodes["treatMissingData"] == "breaching"
    assert found["pruner"]["treatMissingData"] == "breaching"  # a pruner that stops publishing alarms


def test_the_eks_stack_alarms_on_lustre_capacity() -> None:
    assert set(alarms(with_alerts("llm-train-eks"))) == {"lustre-free"}


def test_a_failed_batch_job_reaches_the_topic() -> None:
    graph = with_alerts("llm-finetune")
    (rule,) = graph.of_type("aws:cloudwatch/eventRule:EventRule")
    pattern = json.loads(rule.inputs["eventPattern"])
    assert pattern["source"] == ["aws.batch"] and pattern["detail"]["status"] == ["FAILED"]
    (queue,) = graph.of_type("aws:batch/jobQueue:JobQueue")
    assert queue.urn in rule.dependencies
    (target,) = graph.of_type("aws:cloudwatch/eventTarget:EventTarget")
    (topic,) = graph.of_type(TOPIC)
    assert topic.urn in target.dependencies


def test_a_production_account_without_alerts_is_refused() -> None:
    from gpuinfra.spec.org import Account

    with pytest.raises(ValueError, match="production account without alerts") as info:
        Account.model_validate(
            {
                "id": "111111111111",
                "role_arn": "arn:aws:iam::111111111111:role/deploy",
                "purpose": "training",
                "monthly_budget_usd": 1,
                "production": True,
            }
        )
    assert "alerts" in str(info.value)


@pytest.mark.parametrize("stack", ["llm-train", "llm-finetune"])
def test_without_alerts_there_is_no_topic_and_no_alarm(stack: str) -> None:
    graph = graph_for(stack, org={"accounts.ml-training.alerts": DELETE})
    assert graph.of_type(TOPIC) == [] and not [a for a in graph.of_type(ALARM) if "-alarms-" in a.name]


@pytest.mark.parametrize("stack", ["llm-train", "llm-train-eks", "llm-finetune"])
def test_the_example_organization_s_alarms_are_live(stack: str) -> None:
    """stacks/org.yaml gives the training account its on-call address: every alarm of the unmutated examples acts
    on the stack's topic, and the topic has that address as its one subscriber."""
    graph = example_graph(stack)
    (topic,) = graph.of_type(TOPIC)
    (sub,) = graph.of_type(SUBSCRIPTION)
    assert sub.inputs["endpoint"] == "ml-oncall@acme.example" and topic.urn in sub.dependencies
    names = alarms(graph)
    for name in names:
        assert acts_on_the_topic(graph, name), name
    # PCS: capacity, nodes, GPUs, pruner; EKS: capacity; fine-tuning: failed jobs, through EventBridge.
    targets = [t for t in graph.of_type("aws:cloudwatch/eventTarget:EventTarget") if topic.urn in t.dependencies]
    assert len(names) + len(targets) == {"llm-train": 4, "llm-train-eks": 1, "llm-finetune": 1}[stack]
