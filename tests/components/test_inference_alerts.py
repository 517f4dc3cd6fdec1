"""Inference alarms that page (review expert-inference-2 M1): with the account's `alerts` in the organization file
(the example ml-inference has an on-call address), each fleet region gets an SNS topic that address subscribes, and
every paging alarm of the region (the SLO alarms; the no-healthy-replica alarm Route 53 fails over on) notifies that
topic on ALARM and OK, with actions enabled. Alarms that act on something else (the scaling loop's, which drive
Auto Scaling policies; the rollout guard, which an instance refresh reads) do not page. Without alerts there is no
topic and no alarm has an action (and the warning alarms-page-no-one says so: tests/validators/test_serving.py).

Then a simulated alarm reaches the topic: the generated topic policy is judged by the project's access evaluator for
CloudWatch publishing from the account (and refused for another account), and in moto the generated alarm (its
PutMetricAlarm request, as preflight translates it) is created, set to ALARM, and its action published to the topic,
whose subscriptions are the generated ones. moto's CloudWatch records alarm states but does not carry out actions,
so the test performs CloudWatch's one step itself: publish to each action of an alarm in ALARM with actions
enabled (CloudWatch UG, "Alarm actions")."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from gpuinfra.clouds.aws.preflight.requests.services import metric_alarm
from gpuinfra.graph import Graph, Resource
from gpuinfra.preflight.access.decide import Policies, Principal, Request, evaluate
from gpuinfra.preflight.access.statements import parse
from helpers import DELETE, example_data, example_graph, graph_for, org_data
from moto import mock_aws

ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
TOPIC = "aws:sns/topic:Topic"
POLICY = "aws:sns/topicPolicy:TopicPolicy"
SUBSCRIPTION = "aws:sns/topicSubscription:TopicSubscription"
ACCOUNT = "222222222222"  # ml-inference in stacks/org.yaml
ONCALL = org_data()["accounts"]["ml-inference"]["alerts"]["email"]
SLO_KEYS = ("5xx-share", "response-time-p90", "response-time-p99", "unhealthy-replica")
"""The example sets no TTFT or inter-token target: those two SLO alarms do not exist (test_inference_slo)."""


def regions(stack: str) -> list[str]:
    return [r["region"] for r in example_data(stack)["config"]["gpuinfra:inference"]["regions"]]


def topic_arn(graph: Graph, prefix: str) -> str:
    """The region's topic ARN as the program wired it: the Resource of the topic's policy (the topic's arn output)."""
    (policy,) = [p for p in graph.of_type(POLICY) if p.name == f"{prefix}-alerts-topic-policy"]
    (statement,) = json.loads(policy.inputs["policy"])["Statement"]
    return str(statement["Resource"])


def pages(graph: Graph, alarm: Resource, prefix: str) -> bool:
    topic = graph.named(TOPIC, f"{prefix}-alerts-topic")
    arn = topic_arn(graph, prefix)
    i = alarm.inputs
    return (
        topic.urn in alarm.dependencies
        and i.get("actionsEnabled") is True
        and i.get("alarmActions") == [arn]
        and i.get("okActions") == [arn]
    )


@pytest.fixture(scope="module")
def ec2() -> Graph:
    return example_graph("chat-serve")


def test_each_region_has_a_topic_its_on_call_subscribes(ec2: Graph) -> None:
    assert ONCALL == ["serving-oncall@acme.example"]
    topics = sorted(t.name for t in ec2.of_type(TOPIC))
    assert topics == sorted(f"chat-serve-{r}-alerts-topic" for r in regions("chat-serve"))
    subs = ec2.of_type(SUBSCRIPTION)
    assert len(subs) == len(topics)
    for sub in subs:
        assert (sub.inputs["protocol"], sub.inputs["endpoint"]) == ("email", ONCALL[0])
        region = sub.name.removeprefix("chat-serve-").removesuffix("-alerts-email-0")
        assert ec2.named(TOPIC, f"chat-serve-{region}-alerts-topic").urn in sub.dependencies
        assert f":sns:{region}:{ACCOUNT}:" in topic_arn(ec2, f"chat-serve-{region}")  # the alarms' own region


def test_every_slo_alarm_pages_its_region_s_topic_and_no_other_alarm_does(ec2: Graph) -> None:
    paging = set()
    for region in regions("chat-serve"):
        prefix = f"chat-serve-{region}"
        for key in SLO_KEYS:
            alarm = next(a for a in ec2.of_type(ALARM) if a.inputs.get("name") == f"{prefix}-{key}")
            assert pages(ec2, alarm, prefix), alarm.name
            paging.add(alarm.urn)
    assert len(paging) == 4 * len(regions("chat-serve"))
    for alarm in ec2.of_type(ALARM):
        if alarm.urn in paging:
            continue
        actions = alarm.inputs.get("alarmActions") or []
        assert not [a for a in actions if ":sns:" in a], alarm.name  # scaling and rollout alarms act, not page
    scaling = [a for a in ec2.of_type(ALARM) if a.name.endswith("-replicas-base-out")]
    assert scaling and all(":autoscaling:" in a.inputs["alarmActions"][0] for a in scaling)


def test_the_internal_kubernetes_fleet_pages_on_a_region_without_healthy_replicas() -> None:
    graph = example_graph("chat-serve-k8s")
    for region in regions("chat-serve-k8s"):
        prefix = f"chat-k8s-{region}"
        alarm = graph.named(ALARM, f"{prefix}-no-healthy-replica")
        assert pages(graph, alarm, prefix)
        unhealthy = next(a for a in graph.of_type(ALARM) if a.inputs.get("name") == f"{prefix}-unhealthy-replica")
        assert pages(graph, unhealthy, prefix)
        assert unhealthy.inputs["namespace"] == "AWS/NetworkELB"


def test_an_internal_ec2_fleet_pages_on_no_healthy_replica_too() -> None:
    graph = graph_for("chat-serve", {"load_balancer.type": "nlb", "access.waf": None, "access.scheme": "internal"})
    alarm = graph.named(ALARM, "chat-serve-us-east-1-endpoint-no-healthy-replica")
    assert pages(graph, alarm, "chat-serve-us-east-1")


def test_without_alerts_no_topic_and_no_alarm_action() -> None:
    graph = graph_for("chat-serve", org={"accounts.ml-inference.alerts": DELETE})
    assert graph.of_type(TOPIC) == [] and graph.of_type(SUBSCRIPTION) == []
    for alarm in graph.of_type(ALARM):
        assert not [a for a in alarm.inputs.get("alarmActions") or [] if ":sns:" in a], alarm.name


def decide(policy: str, topic: str, source_account: str) -> str:
    request = Request(
        Principal("cloudwatch.amazonaws.com"), "sns:Publish", topic, ACCOUNT, {"aws:SourceAccount": source_account}
    )
    return evaluate(request, Policies(resource=parse(json.loads(policy), "topic policy"))).outcome


def test_the_topic_policy_lets_this_account_s_cloudwatch_publish_and_no_other(ec2: Graph) -> None:
    policy = ec2.named(POLICY, "chat-serve-us-east-1-alerts-topic-policy").inputs["policy"]
    topic = topic_arn(ec2, "chat-serve-us-east-1")
    assert decide(policy, topic, ACCOUNT) == "allow"
    assert decide(policy, topic, "999999999999") == "deny"  # a confused deputy in another account


def dispatch(cloudwatch: Any, sns: Any) -> int:
    """CloudWatch's step moto leaves out: each alarm in ALARM with actions enabled publishes its state change to each
    alarm action (the message fields of CloudWatch's SNS notification)."""
    sent = 0
    for alarm in cloudwatch.describe_alarms(StateValue="ALARM")["MetricAlarms"]:
        if not alarm["ActionsEnabled"]:
            continue
        message = {
            "AlarmName": alarm["AlarmName"],
            "NewStateValue": alarm["StateValue"],
            "NewStateReason": alarm["StateReason"],
            "AWSAccountId": ACCOUNT,
        }
        for action in alarm["AlarmActions"]:
            sns.publish(TopicArn=action, Subject=f'ALARM: "{alarm["AlarmName"]}"', Message=json.dumps(message))
            sent += 1
    return sent


@mock_aws
def test_a_simulated_alarm_reaches_the_on_call(ec2: Graph) -> None:
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.sns.models import sns_backends

    region, prefix = "eu-central-1", "chat-serve-eu-central-1"
    sns = boto3.client("sns", region_name=region)
    cloudwatch = boto3.client("cloudwatch", region_name=region)
    real = sns.create_topic(Name=f"{prefix}-alerts")["TopicArn"]
    wired = topic_arn(ec2, prefix)  # the engine's stand-in ARN: replaced by the real one, as at apply
    policy = ec2.named(POLICY, f"{prefix}-alerts-topic-policy").inputs["policy"].replace(wired, real)
    sns.set_topic_attributes(TopicArn=real, AttributeName="Policy", AttributeValue=policy)
    for sub in ec2.of_type(SUBSCRIPTION):
        if sub.name.startswith(f"{prefix}-"):
            sns.subscribe(TopicArn=real, Protocol=sub.inputs["protocol"], Endpoint=sub.inputs["endpoint"])
    alarm = next(a for a in ec2.of_type(ALARM) if a.inputs.get("name") == f"{prefix}-5xx-share")
    (call,) = metric_alarm(alarm)
    request = json.loads(json.dumps(call.params).replace(wired, real))
    assert request["AlarmActions"] == [real] and request["ActionsEnabled"] is True
    cloudwatch.put_metric_alarm(**request)
    quiet = next(a for a in ec2.of_type(ALARM) if a.name == f"{prefix}-rollout-unhealthy")
    (quiet_call,) = metric_alarm(quiet)
    cloudwatch.put_metric_alarm(**quiet_call.params)
    for name in (f"{prefix}-5xx-share", quiet_call.params["AlarmName"]):
        cloudwatch.set_alarm_state(AlarmName=name, StateValue="ALARM", StateReason="simulated: 5 minutes above 1%")

    assert dispatch(cloudwatch, sns) == 1  # the rollout guard has no action: it stops a refresh, it does not page
    topic = sns_backends[DEFAULT_ACCOUNT_ID][region].topics[real]
    ((_, message, subject, *_),) = topic.sent_notifications
    assert json.loads(message)["AlarmName"] == f"{prefix}-5xx-share" and subject.startswith("ALARM")
    subscribed = sns.list_subscriptions_by_topic(TopicArn=real)["Subscriptions"]
    assert [(s["Protocol"], s["Endpoint"]) for s in subscribed] == [("email", ONCALL[0])]


def test_preflight_judges_the_topic_its_policy_and_subscriptions(ec2: Graph) -> None:
    """CreateTopic, SetTopicAttributes and Subscribe against botocore's SNS model: the generated ones pass (judged,
    not PF-UNCHECKED), a policy that names no topic is refused."""
    from dataclasses import replace

    from gpuinfra.catalog import load_catalog
    from gpuinfra.preflight import preflight

    sns_types = (TOPIC, POLICY, SUBSCRIPTION)
    assert [f for f in preflight(ec2, load_catalog()) if f.type in sns_types] == []
    policy = ec2.named(POLICY, "chat-serve-us-east-1-alerts-topic-policy")
    orphan = {k: v for k, v in policy.inputs.items() if k != "arn"}
    broken = replace(ec2, resources=tuple(replace(r, inputs=orphan) if r is policy else r for r in ec2.resources))
    found = [(f.rule, f.path) for f in preflight(broken, load_catalog()) if f.type in sns_types]
    assert found == [("PF-AWS-API", "TopicArn")], found
