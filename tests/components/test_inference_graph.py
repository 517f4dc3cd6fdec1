"""The example inference fleet's graph: providers, zones, listeners, health checks, capacity split,
scaling, global routing, read-only registry access; and adding a region adds only that region."""

from __future__ import annotations

import copy
import json
from collections import defaultdict

import pytest
from gpuinfra.graph import Graph, Resource
from gpuinfra.templating import unpacked
from helpers import checked, example_data, example_graph, graph_for

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
    # Besides AWS, only random's (it holds no account or region: it generates the API keys' values).
    assert {p.type for p in graph.providers()} == {"pulumi:providers:aws", "pulumi:providers:random"}
    providers = [p for p in graph.providers() if p.type == "pulumi:providers:aws"]
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
        # The spec's maximum, raised by failover n_plus_one (the default; tests/plan/test_failover.py).
        planned = next(r for r in checked("chat-serve").plan.regions if r.region == spec_region["region"])
        assert planned.max_replicas >= spec_region["max_replicas"]
        assert base["maxSize"] + burst["maxSize"] == planned.max_replicas
        assert base["healthCheckType"] == burst["healthCheckType"] == "ELB"
        assert base["targetGroupArns"] == burst["targetGroupArns"]


def test_base_group_has_a_warm_pool_and_instance_refresh(graph: Graph) -> None:
    for base in (g for g in graph.of_type(ASG) if g.name.endswith("-base")):
        assert base.inputs["warmPool"]["poolState"] == "Stopped" and base.inputs["warmPool"]["minSize"] >= 1
        assert base.inputs["instanceRefresh"]["strategy"] == "Rolling"
        assert base.inputs["healthCheckGracePeriod"] > base.inputs["defaultInstanceWarmup"]


def test_one_region_loop_and_a_burst_group_at_zero_scales_on_the_region_signal(graph: Graph) -> None:
    alarms = by_region(graph, "aws:cloudwatch/metricAlarm:MetricAlarm")
    policies = by_region(graph, "aws:autoscaling/policy:Policy")
    groups = {g.inputs["name"]: g for g in graph.of_type(ASG)}
    for region in REGIONS:
        burst_name = f"chat-serve-{region}-burst"
        assert groups[burst_name].inputs["minSize"] == 0
        assert not [p for p in policies[region] if p.inputs["policyType"] == "TargetTrackingScaling"]
        burst_out = next(a for a in alarms[region] if a.name.endswith("-burst-out"))
        queries = burst_out.inputs["metricQueries"]
        metrics = [q["metric"] for q in queries if q.get("metric")]
        # The load comes from the fleet's region-level metric, never from the burst group's own instances.
        load = next(m for m in metrics if m["namespace"] == "gpuinfra/Inference")
        assert load["dimensions"] == {"Fleet": "chat-serve"} and load["stat"] == "Sum"
        for m in metrics:
            if m["namespace"] == "gpuinfra/Inference":
                assert "AutoScalingGroupName" not in m["dimensions"]
        in_service = {
            m["dimensions"]["AutoScalingGroupName"] for m in metrics if m["metricName"] == "GroupInServiceInstances"
        }
        # The combined count of every group (base, spot burst, on-demand overflow).
        assert in_service == {f"chat-serve-{region}-base", burst_name, f"chat-serve-{region}-overflow"}
        per_replica = next(q for q in queries if q["id"] == "perreplica")
        assert per_replica["expression"] == "load / (FILL(base, 0) + FILL(burst, 0) + FILL(overflow, 0))"
        signal = next(q for q in queries if q.get("returnData"))
        # Base full, then capped to the burst's headroom (tests/components/test_bounded_replicas.py).
        assert signal["expression"].startswith("IF(basedesired >= basemax, IF(headroom >= 4, perreplica, ")
        assert burst_out.inputs["treatMissingData"] == "notBreaching"
        assert burst_out.inputs["threshold"] == SPEC["autoscaling"]["target_queue_depth_per_replica"]
        # Its action is a step policy on the burst group whose smallest step adds a replica from zero.
        assert len(burst_out.inputs["alarmActions"]) == 1
        step = next(p for p in policies[region] if p.name.endswith("-burst-scale-out"))
        assert step.inputs["policyType"] == "StepScaling" and step.inputs["adjustmentType"] == "ChangeInCapacity"
        assert min(a["scalingAdjustment"] for a in step.inputs["stepAdjustments"]) == 1
        for group in (groups[burst_name], groups[f"chat-serve-{region}-base"]):
            assert {"GroupInServiceInstances", "GroupDesiredCapacity", "GroupMaxSize"} <= set(
                group.inputs["enabledMetrics"]
            )


def test_grace_covers_the_cold_start_and_hooks_hold_the_warm_pool(graph: Graph) -> None:
    from gpuinfra.catalog import load_catalog
    from gpuinfra.plan import InferencePlan
    from helpers import checked

    plan = checked("chat-serve").plan
    assert isinstance(plan, InferencePlan)
    cold = {r.region: r.cold_start_seconds for r in plan.regions}
    for group in graph.of_type(ASG):
        region = region_of(graph, group)
        assert group.inputs["healthCheckGracePeriod"] >= cold[region]
        hooks = {h["lifecycleTransition"]: h for h in group.inputs["initialLifecycleHooks"]}
        launch = hooks["autoscaling:EC2_INSTANCE_LAUNCHING"]
        assert launch["heartbeatTimeout"] >= cold[region] and launch["defaultResult"] == "ABANDON"
        assert hooks["autoscaling:EC2_INSTANCE_TERMINATING"]["defaultResult"] == "CONTINUE"
        if group.inputs.get("warmPool"):
            assert group.inputs["name"].endswith("-base")
        refresh = group.inputs.get("instanceRefresh")
        if refresh:
            assert refresh["preferences"]["maxHealthyPercentage"] == 200
            assert refresh["preferences"]["minHealthyPercentage"] == 100
    assert load_catalog().serving_figure("engine_init_seconds").value > 0


def test_spot_burst_is_diversified_only_where_the_type_is_auto(graph: Graph) -> None:
    """instance.type auto: the burst group may use other types that serve as fast; a region that names its
    type (ap-northeast-1: g6e.xlarge) launches only that type, on spot too."""
    pinned = {r["region"]: r["instance_type"] for r in SPEC["regions"] if r.get("instance_type")}
    for group in graph.of_type(ASG):
        policy = group.inputs.get("mixedInstancesPolicy")
        if policy:
            types = [o["instanceType"] for o in policy["launchTemplate"]["overrides"]]
            region = region_of(graph, group)
            if region in pinned:
                assert types == [pinned[region]]
            else:
                assert len(types) >= 2
            assert policy["instancesDistribution"]["spotAllocationStrategy"] == "price-capacity-optimized"


def test_every_internet_facing_region_has_waf_and_an_api_key(graph: Graph) -> None:
    lbs = by_region(graph, "aws:lb/loadBalancer:LoadBalancer")
    acls = by_region(graph, "aws:wafv2/webAcl:WebAcl")
    associations = by_region(graph, "aws:wafv2/webAclAssociation:WebAclAssociation")
    secrets = by_region(graph, "aws:secretsmanager/secret:Secret")
    for region in REGIONS:
        (lb,) = lbs[region]
        assert lb.inputs["internal"] is False
        (acl,) = acls[region]
        rules = {r["name"]: r for r in acl.inputs["rules"]}
        assert rules["rate-per-ip"]["statement"]["rateBasedStatement"]["aggregateKeyType"] == "IP"
        assert "AWSManagedRulesCommonRuleSet" in rules and "AWSManagedRulesKnownBadInputsRuleSet" in rules
        (association,) = associations[region]
        assert lb.urn in graph.dependencies_of(association) or association.inputs["resourceArn"]
        # The API key's secret (the image cache's registry credential is the other one).
        names = {s.inputs["name"] for s in secrets[region]}
        # No registry credential: the server image comes from the fleet's own repository (image_source ecr_mirror).
        assert names == {f"chat-serve/{region}/api-key"}
    for lt in graph.of_type("aws:ec2/launchTemplate:LaunchTemplate"):
        import base64

        text = unpacked(base64.b64decode(lt.inputs["userData"]).decode())
        assert "secretsmanager get-secret-value" in text and "-e VLLM_API_KEY" in text


def test_deregistration_waits_for_the_longest_generation(graph: Graph) -> None:
    for tg in graph.of_type("aws:lb/targetGroup:TargetGroup"):
        # 8,192 tokens at 30.7 steps/s (L4) or more (L40S): minutes, not the old 60 s.
        assert tg.inputs["deregistrationDelay"] > 60


def test_a_latency_record_and_health_check_per_region(graph: Graph) -> None:
    records = graph.of_type("aws:route53/record:Record")
    assert sorted(r.inputs["setIdentifier"] for r in records) == sorted(REGIONS)
    for record in records:
        assert record.inputs["latencyRoutingPolicies"] == [{"region": record.inputs["setIdentifier"]}]
        assert record.inputs["aliases"][0]["evaluateTargetHealth"] is True and record.inputs["healthCheckId"]


def test_replicas_read_only_their_regions_registry_replica(graph: Graph) -> None:
    replica_policies = [p for p in graph.of_type("aws:iam/rolePolicy:RolePolicy") if not p.name.endswith("-flow-logs")]
    assert len(replica_policies) == len(REGIONS)
    for policy in replica_policies:
        region = region_of(graph, policy)
        bucket = "acme-model-registry" if region == "us-east-1" else f"acme-model-registry-{region}"
        statements = json.loads(policy.inputs["policy"])["Statement"]
        s3_actions = {a for s in statements for a in s["Action"] if a.startswith("s3:")}
        assert s3_actions == {"s3:GetObject", "s3:ListBucket"}
        objects = next(s for s in statements if s["Action"] == ["s3:GetObject"])
        assert objects["Resource"] == [f"arn:aws:s3:::{bucket}/models/*"]
        # The key's ARN lives in the registry stack: the role may decrypt only through S3 and only for its own
        # bucket's objects (the encryption context S3 passes is the bucket ARN with a Bucket Key; review #23).
        key = next(s for s in statements if s["Sid"] == "WeightsKey")
        assert key["Action"] == ["kms:Decrypt"]
        assert key["Condition"]["StringEquals"] == {"kms:ViaService": f"s3.{region}.amazonaws.com"}
        assert key["Condition"]["StringLike"] == {
            "kms:EncryptionContext:aws:s3:arn": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]
        }


def test_global_accelerator_variant_has_an_endpoint_group_per_region() -> None:
    routing = {"type": "global_accelerator", "domain_name": "chat.acme.example", "hosted_zone_id": "Z0ACME1234567"}
    graph = graph_for("chat-serve", {"global_routing": routing})
    groups = graph.of_type("aws:globalaccelerator/endpointGroup:EndpointGroup")
    assert sorted(g.inputs["endpointGroupRegion"] for g in groups) == sorted(REGIONS)
    # Each endpoint is the region's ALB, whose target health Global Accelerator follows: health check settings on
    # the group would be ignored for it (GA DG, "Endpoint groups for standard accelerators"), so none are set, and
    # the ALB's target group checks the spec's health path.
    albs = {lb.urn: lb for lb in graph.of_type("aws:lb/loadBalancer:LoadBalancer")}
    for group in groups:
        assert not [k for k in group.inputs if k.startswith("healthCheck")], group.inputs
        (endpoint,) = group.inputs["endpointConfigurations"]
        assert any(lb.urn in group.dependencies for lb in albs.values()), group.name
        assert endpoint["weight"] == 100 and endpoint["clientIpPreservationEnabled"] is True
    for tg in graph.of_type("aws:lb/targetGroup:TargetGroup"):
        assert tg.inputs["healthCheck"]["path"] == "/health"
    # One record: the domain (the certificates' name) as an alias of the accelerator, no latency records.
    (record,) = graph.of_type("aws:route53/record:Record")
    assert record.inputs["name"] == "chat.acme.example" and record.inputs["type"] == "A"
    assert record.inputs["zoneId"] == "Z0ACME1234567"
    # Route 53 DG, "Routing traffic to an AWS Global Accelerator": the accelerator's alias hosted zone.
    assert record.inputs["aliases"][0]["zoneId"] == "Z2BJ6XQ5FK7U4H"
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
        # Its failover maximum (its peak plus us-east-1's 24) at full size, on demand and on spot.
        "accounts.ml-inference.quotas.us-east-2": {"L-DB2E81BA": 200, "L-3819A6DF": 200},
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
