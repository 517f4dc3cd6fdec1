"""The example inference fleet's graph: providers, zones, listeners, health checks, capacity split,
scaling, global routing, read-only registry access; and adding a region adds only that region."""

from __future__ import annotations

import copy
import json
from collections import defaultdict

import pytest
from helpers import example_data, example_graph, graph_for

from infra.graph import Graph, Resource

SPEC = example_data("chat-serve")["config"]["gpuinfra:inference"]
REGIONS = [r["region"] for r in SPEC["regions"]]
ASG = "aws:autoscaling/group:Group"


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph("chat-serve")


def region_of(graph: Graph, resource: Resource) -> str:
    provider = graph.provider_of(resource)
    assert provider is not None, resource.urn
    return provider.inputs["region"]


def by_region(graph: Graph, type_: str) -> dict[str, list[Resource]]:
    out: dict[str, list[Resource]] = defaultdict(list)
    for r in graph.of_type(type_):
        out[region_of(graph, r)].append(r)
    return out


def test_one_provider_per_region_all_in_the_inference_account(graph: Graph) -> None:
    providers = graph.providers()
    assert sorted(p.inputs["region"] for p in providers) == sorted(REGIONS)
    for p in providers:
        assert json.loads(p.inputs["allowedAccountIds"]) == ["222222222222"]
        assert json.loads(p.inputs["assumeRoles"])[0]["roleArn"].startswith("arn:aws:iam::222222222222:role/")
        assert json.loads(p.inputs["defaultTags"])["tags"]["workload"] == "inference"
    assert all(r.provider for r in graph.custom_resources())


def test_two_or_more_zones_per_region(graph: Graph) -> None:
    subnets = by_region(graph, "aws:ec2/subnet:Subnet")
    for region in REGIONS:
        private = [s for s in subnets[region] if "-private-" in s.name]
        zones = {s.inputs["availabilityZone"] for s in private}
        assert len(zones) >= 2 and all(z.startswith(region) for z in zones)
        assert {s.inputs["availabilityZone"] for s in subnets[region] if "-public-" in s.name} == zones


def test_https_listener_with_the_regions_certificate_and_an_http_redirect(graph: Graph) -> None:
    listeners = by_region(graph, "aws:lb/listener:Listener")
    for spec_region in SPEC["regions"]:
        found = {listener.inputs["port"]: listener.inputs for listener in listeners[spec_region["region"]]}
        assert found[443]["protocol"] == "HTTPS" and found[443]["certificateArn"] == spec_region["certificate_arn"]
        assert found[443]["sslPolicy"].startswith("ELBSecurityPolicy-TLS13")
        redirect = found[80]["defaultActions"][0]
        assert redirect["type"] == "redirect" and redirect["redirect"]["protocol"] == "HTTPS"


def test_health_checks_use_the_spec_path(graph: Graph) -> None:
    for tg in graph.of_type("aws:lb/targetGroup:TargetGroup"):
        assert tg.inputs["healthCheck"]["path"] == "/health"
    for check in graph.of_type("aws:route53/healthCheck:HealthCheck"):
        assert check.inputs["resourcePath"] == "/health" and check.inputs["type"] == "HTTPS"


def test_on_demand_base_equals_min_replicas_and_spot_only_above(graph: Graph) -> None:
    groups = by_region(graph, ASG)
    for spec_region in SPEC["regions"]:
        regional = {g.name.rsplit("-", 1)[-1]: g.inputs for g in groups[spec_region["region"]]}
        base, burst = regional["base"], regional["burst"]
        assert base["minSize"] == spec_region["min_replicas"]
        assert "mixedInstancesPolicy" not in base  # plain on-demand launch template
        dist = burst["mixedInstancesPolicy"]["instancesDistribution"]
        assert burst["minSize"] == 0 and dist["onDemandBaseCapacity"] == 0
        assert dist["onDemandPercentageAboveBaseCapacity"] == 0
        assert base["maxSize"] + burst["maxSize"] == spec_region["max_replicas"]
        assert base["healthCheckType"] == burst["healthCheckType"] == "ELB"
        assert base["targetGroupArns"] == burst["targetGroupArns"]


def test_base_group_has_a_warm_pool_and_instance_refresh(graph: Graph) -> None:
    for base in (g for g in graph.of_type(ASG) if g.name.endswith("-base")):
        assert base.inputs["warmPool"]["poolState"] == "Stopped" and base.inputs["warmPool"]["minSize"] >= 1
        assert base.inputs["instanceRefresh"]["strategy"] == "Rolling"
        assert base.inputs["healthCheckGracePeriod"] > base.inputs["defaultInstanceWarmup"]


def test_a_queue_depth_scaling_policy_per_group_and_slower_scale_in(graph: Graph) -> None:
    policies = by_region(graph, "aws:autoscaling/policy:Policy")
    for region in REGIONS:
        tracking = [p for p in policies[region] if p.inputs["policyType"] == "TargetTrackingScaling"]
        assert len(tracking) == 2
        for p in tracking:
            config = p.inputs["targetTrackingConfiguration"]
            assert config["customizedMetricSpecification"]["metricName"] == "QueueDepth"
            assert config["targetValue"] == SPEC["autoscaling"]["target_queue_depth_per_replica"]
            assert config["disableScaleIn"] is True
        scale_in = [p for p in policies[region] if p.inputs["policyType"] == "SimpleScaling"]
        assert all(p.inputs["cooldown"] == SPEC["autoscaling"]["scale_in_cooldown_seconds"] for p in scale_in)
    assert len(graph.of_type("aws:autoscaling/schedule:Schedule")) == len(REGIONS)


def test_a_latency_record_and_health_check_per_region(graph: Graph) -> None:
    records = graph.of_type("aws:route53/record:Record")
    assert sorted(r.inputs["setIdentifier"] for r in records) == sorted(REGIONS)
    for record in records:
        assert record.inputs["latencyRoutingPolicies"] == [{"region": record.inputs["setIdentifier"]}]
        assert record.inputs["aliases"][0]["evaluateTargetHealth"] is True and record.inputs["healthCheckId"]


def test_replicas_read_only_their_regions_registry_replica(graph: Graph) -> None:
    for policy in graph.of_type("aws:iam/rolePolicy:RolePolicy"):
        region = region_of(graph, policy)
        bucket = "acme-model-registry" if region == "us-east-1" else f"acme-model-registry-{region}"
        statements = json.loads(policy.inputs["policy"])["Statement"]
        s3_actions = {a for s in statements for a in s["Action"] if a.startswith("s3:")}
        assert s3_actions == {"s3:GetObject", "s3:ListBucket"}
        objects = next(s for s in statements if s["Action"] == ["s3:GetObject"])
        assert objects["Resource"] == [f"arn:aws:s3:::{bucket}/models/*"]


def test_global_accelerator_variant_has_an_endpoint_group_per_region() -> None:
    graph = graph_for(
        "chat-serve", {"global_routing": {"type": "global_accelerator", "domain_name": "chat.acme.example"}}
    )
    groups = graph.of_type("aws:globalaccelerator/endpointGroup:EndpointGroup")
    assert sorted(g.inputs["endpointGroupRegion"] for g in groups) == sorted(REGIONS)
    assert not graph.of_type("aws:route53/record:Record")
    accelerator = graph.one("aws:globalaccelerator/accelerator:Accelerator")
    assert region_of(graph, accelerator) == "us-west-2"  # the Global Accelerator API's home


def test_adding_a_region_adds_exactly_that_regions_resources(graph: Graph) -> None:
    regions = copy.deepcopy(SPEC["regions"])
    regions.append(
        {
            "region": "us-east-2",
            "min_replicas": 1,
            "max_replicas": 4,
            "peak_rps": 5,
            "certificate_arn": "arn:aws:acm:us-east-2:222222222222:certificate/0a1b2c3d-use2",
        }
    )
    org = {
        "registry.replica_regions": ["us-west-2", "eu-central-1", "ap-northeast-1", "us-east-2"],
        "accounts.ml-inference.quotas.us-east-2": {"L-DB2E81BA": 64, "L-3819A6DF": 64},
    }
    bigger = graph_for("chat-serve", {"regions": regions}, org)
    before = {r.key: r for r in graph.resources}
    after = {r.key: r for r in bigger.resources}
    assert set(before) <= set(after), "nothing may disappear"
    added = [after[k] for k in set(after) - set(before)]
    assert added and all("us-east-2" in r.name for r in added), sorted(
        r.name for r in added if "us-east-2" not in r.name
    )
    changed = [k for k in before if before[k].inputs != after[k].inputs]
    assert changed == []
