"""Failover for the Kubernetes fleet: Route 53 follows a CloudWatch alarm on the healthy hosts of the NLB the AWS
Load Balancer Controller makes from each region's Service (the stack names it and tags its target group, then
reads both back); the requests AWS gets are judged against botocore's own Route 53 and CloudWatch models.

Sources: Route 53 API reference, CreateHealthCheck ("Private Hosted Zones": health checkers are outside the
VPC; HealthCheckConfig AlarmIdentifier); ELB NLB user guide, CloudWatch metrics (HealthyHostCount in
AWS/NetworkELB, per LoadBalancer and TargetGroup); kubernetes-sigs/aws-load-balancer-controller
docs/guide/service/annotations.md (aws-load-balancer-name, at most 32 characters; additional-resource-tags)."""

from __future__ import annotations

from dataclasses import replace

import botocore.session
import pytest
from botocore.validate import ParamValidator
from gpuinfra.catalog import load_catalog
from gpuinfra.graph import Graph, Resource
from gpuinfra.preflight import preflight
from gpuinfra.pulumi.components.inference.service_lb import load_balancer_name
from helpers import example_graph

REGIONS = ("us-east-1", "eu-central-1")
ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
CHECK = "aws:route53/healthCheck:HealthCheck"
RECORD = "aws:route53/record:Record"
SERVICE = "kubernetes:core/v1:Service"
LB = "service.beta.kubernetes.io/aws-load-balancer-"


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph("chat-serve-k8s")


def region_of(graph: Graph, resource: Resource) -> str:
    provider = graph.provider_of(resource)
    assert provider is not None
    return str(provider.inputs["region"])


def by_region(graph: Graph, type_: str) -> dict[str, Resource]:
    """Route 53's health checks, or the alarms they follow (no-healthy-replica; the SLO alarm beside it pages only),
    by region."""
    resources = [r for r in graph.of_type(type_) if type_ != ALARM or r.name.endswith("-no-healthy-replica")]
    found = {
        region_of(graph, r) if type_ == ALARM else r.name.split("-routing-")[-1].removesuffix("-health"): r
        for r in resources
    }
    assert len(found) == len(resources)
    return found


def test_each_service_names_its_load_balancer_and_tags_its_target_group(graph: Graph) -> None:
    for service in graph.of_type(SERVICE):
        annotations = service.inputs["metadata"]["annotations"]
        assert annotations[LB + "name"] == "chat-k8s"
        assert annotations[LB + "additional-resource-tags"] == "gpuinfra:endpoint=chat-k8s"
        assert annotations[LB + "scheme"] == "internal"


def test_an_alarm_on_the_healthy_hosts_of_each_regions_nlb(graph: Graph) -> None:
    alarms = by_region(graph, ALARM)
    assert set(alarms) == set(REGIONS)
    for region, alarm in alarms.items():
        i = alarm.inputs
        assert (i["namespace"], i["metricName"], i["statistic"]) == ("AWS/NetworkELB", "HealthyHostCount", "Minimum")
        assert i["comparisonOperator"] == "LessThanThreshold" and i["threshold"] == 1
        assert i["treatMissingData"] == "breaching"  # no data from the NLB: no healthy replica
        # The dimensions are the ARN suffixes of the NLB read back by name and of its tagged target group.
        assert i["dimensions"]["LoadBalancer"].startswith("net/chat-k8s/")
        assert i["dimensions"]["TargetGroup"].startswith("targetgroup/")
        assert "read at deploy" in graph.after_apply[i["dimensions"]["LoadBalancer"]]
        # Read after the Service exists (the controller writes its hostname once the NLB is deployed).
        (service,) = graph.dependencies_of(alarm, SERVICE)
        assert service.name == f"chat-k8s-{region}-service"


def test_route53_fails_over_on_the_alarms_not_on_a_probe(graph: Graph) -> None:
    alarms = by_region(graph, ALARM)
    checks = by_region(graph, CHECK)
    assert set(checks) == set(REGIONS)
    for region, check in checks.items():
        i = check.inputs
        assert i["type"] == "CLOUDWATCH_METRIC" and "fqdn" not in i and "ipAddress" not in i
        assert i["cloudwatchAlarmRegion"] == region
        assert graph.dependencies_of(check, ALARM) == [alarms[region]]
        assert i["insufficientDataHealthStatus"] == "Unhealthy"
    for record in graph.of_type(RECORD):
        region = record.inputs["setIdentifier"]
        assert graph.dependencies_of(record, CHECK) == [checks[region]]
        (alias,) = record.inputs["aliases"]
        assert record.inputs["type"] == "A" and alias["evaluateTargetHealth"] is True
        assert alias["name"].startswith("chat-k8s-") and f".elb.{region}." in alias["name"]


def test_botocores_models_accept_the_alarm_and_the_health_check(graph: Graph) -> None:
    """The requests built by hand from the inputs (PutMetricAlarm, CreateHealthCheck), checked by botocore's
    validator and enums: independent of preflight's own translation."""
    session = botocore.session.get_session()
    cloudwatch, route53 = session.get_service_model("cloudwatch"), session.get_service_model("route53")
    validator = ParamValidator()
    for alarm in graph.of_type(ALARM):
        i = alarm.inputs
        request = {
            "AlarmName": alarm.name,
            "Namespace": i["namespace"],
            "MetricName": i["metricName"],
            "Dimensions": [{"Name": k, "Value": v} for k, v in i["dimensions"].items()],
            "Statistic": i["statistic"],
            "Period": i["period"],
            "EvaluationPeriods": i["evaluationPeriods"],
            "DatapointsToAlarm": i["datapointsToAlarm"],
            "Threshold": float(i["threshold"]),
            "ComparisonOperator": i["comparisonOperator"],
            "TreatMissingData": i["treatMissingData"],
        }
        report = validator.validate(request, cloudwatch.operation_model("PutMetricAlarm").input_shape)
        assert not report.has_errors(), report.generate_report()
        assert i["comparisonOperator"] in cloudwatch.shape_for("ComparisonOperator").enum
        assert i["statistic"] in cloudwatch.shape_for("Statistic").enum
    for check in graph.of_type(CHECK):
        i = check.inputs
        config = {
            "Type": i["type"],
            "AlarmIdentifier": {"Region": i["cloudwatchAlarmRegion"], "Name": i["cloudwatchAlarmName"]},
            "InsufficientDataHealthStatus": i["insufficientDataHealthStatus"],
        }
        request = {"CallerReference": "chat-k8s", "HealthCheckConfig": config}
        report = validator.validate(request, route53.operation_model("CreateHealthCheck").input_shape)
        assert not report.has_errors(), report.generate_report()
        assert i["type"] in route53.shape_for("HealthCheckType").enum
        assert i["cloudwatchAlarmRegion"] in route53.shape_for("CloudWatchRegion").enum
        assert i["insufficientDataHealthStatus"] in route53.shape_for("InsufficientDataHealthStatus").enum


def test_preflight_judges_them_and_finds_nothing(graph: Graph) -> None:
    findings = preflight(graph, load_catalog())
    judged = {r.urn for t in (ALARM, CHECK, RECORD) for r in graph.of_type(t)}
    assert not [f for f in findings if f.urn in judged], [(f.rule, f.name, f.message) for f in findings]
    assert not [f for f in findings if f.blocking]


def test_an_alias_to_no_load_balancer_service_is_still_caught(graph: Graph) -> None:
    """PF-X-TARGET lets an alias follow a LoadBalancer Service (its NLB is the controller's), nothing else."""
    record = graph.of_type(RECORD)[0]
    orphan = replace(record, dependencies=tuple(d for d in record.dependencies if ":Service::" not in d))
    cut = Graph.of(graph.stack, graph.project, [orphan if r.urn == record.urn else r for r in graph.resources])
    hits = [f for f in preflight(cut, load_catalog()) if f.rule == "PF-X-TARGET" and f.urn == record.urn]
    assert hits and hits[0].path == "aliases[0].name"
    (service,) = graph.dependencies_of(record, SERVICE)
    cluster_ip = replace(service, inputs={**service.inputs, "spec": {**service.inputs["spec"], "type": "ClusterIP"}})
    swapped = Graph.of(graph.stack, graph.project, [cluster_ip if r.urn == service.urn else r for r in graph.resources])
    assert [f for f in preflight(swapped, load_catalog()) if f.rule == "PF-X-TARGET" and f.urn == record.urn]


@pytest.mark.parametrize(
    ("fleet", "expected"),
    [
        ("chat-k8s", "chat-k8s"),
        ("a" * 32, "a" * 32),
        # ELB refuses names beginning with "internal-" (CreateLoadBalancer Name); 32 characters at most.
        ("internal-chat", "lb-internal-chat"),
        ("internal-" + "b" * 23, "lb-internal-" + "b" * 20),
    ],
)
def test_load_balancer_names_are_ones_elb_accepts(fleet: str, expected: str) -> None:
    assert load_balancer_name(fleet) == expected
    assert len(expected) <= 32 and not expected.startswith("internal-")
