"""Rollouts reach every replica and the warm pool; the warm pool is the planned size and priced as built."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.cost import price_graph
from gpuinfra.graph import Graph
from gpuinfra.plan.inference import plan_inference
from helpers import example_graph, graph_for, inputs_for

ASG = "aws:autoscaling/group:Group"
LT = "aws:ec2/launchTemplate:LaunchTemplate"


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph("chat-serve")


def test_every_group_pins_the_template_version_and_refreshes(graph: Graph) -> None:
    """A refresh starts only when the group's template version changes, never for $Latest (terraform-provider-
    aws r/autoscaling_group, instance_refresh), so both groups name the template's current version."""
    groups = graph.of_type(ASG)
    assert {g.name.rsplit("-", 1)[-1] for g in groups} == {"base", "burst", "overflow"}
    for group in groups:
        spec = (
            group.inputs.get("launchTemplate")
            or group.inputs["mixedInstancesPolicy"]["launchTemplate"]["launchTemplateSpecification"]
        )
        assert spec["version"] not in ("$Latest", "$Default") and spec["version"].isdigit()
        refresh = group.inputs["instanceRefresh"]
        assert refresh["strategy"] == "Rolling"
        assert refresh["preferences"]["minHealthyPercentage"] == 100


def test_every_region_boots_the_pinned_image(graph: Graph) -> None:
    """The example's pin, resolve:ssm:/acme/serving/gpu-ami:7, read at deploy (GetParameter of name:version):
    every template names an AMI id (preview's stand-in for the value SSM returns), never the parameter."""
    images = {lt.inputs["imageId"] for lt in graph.of_type(LT)}
    assert len(images) == 1
    (image,) = images
    assert image.startswith("ami-0") and graph.after_apply[image] == "(read at deploy from SSM /acme/serving/gpu-ami:7)"


def test_a_region_can_pin_its_own_image() -> None:
    g = graph_for("chat-serve", {"regions[3].image_id": "ami-0abc1234def567890"})
    by_region = {g.provider_of(lt).inputs["region"]: lt.inputs["imageId"] for lt in g.of_type(LT)}  # type: ignore[union-attr]
    assert by_region["ap-northeast-1"] == "ami-0abc1234def567890"
    assert g.after_apply[by_region["us-east-1"]] == "(read at deploy from SSM /acme/serving/gpu-ami:7)"


def test_warm_pool_is_the_planned_size_and_priced_as_built(graph: Graph) -> None:
    inputs = inputs_for("chat-serve")
    plan = plan_inference(inputs.spec, inputs.org.org, load_catalog())  # type: ignore[arg-type]
    planned = {rp.region: (rp.min_replicas, rp.warm_pool) for rp in plan.regions}
    costs = price_graph(graph, load_catalog())
    for group in graph.of_type(ASG):
        if not group.name.endswith("-base"):
            continue
        region = graph.provider_of(group).inputs["region"]  # type: ignore[union-attr]
        minimum, warm = planned[region]
        pool = group.inputs["warmPool"]
        # PutWarmPool: the pool holds max(MinSize, MaxGroupPreparedCapacity - desired) instances.
        assert pool["minSize"] == warm and pool["maxGroupPreparedCapacity"] == minimum + warm
        # Scale-in terminates (and drains, drain.sh waits for target state Terminated) rather than returning an
        # instance to the pool past its planned size (review #37).
        assert pool["instanceReusePolicy"] == {"reuseOnScaleIn": False}
        for desired in range(minimum, group.inputs["maxSize"] + 1):
            assert max(pool["minSize"], pool["maxGroupPreparedCapacity"] - desired) == warm
        cost = next((r for r in costs.resources if r.name == group.name), None)
        assert cost is not None
        pooled = [line for line in cost.lines if line.name.startswith("Warm pool")]
        lines = [line for line in pooled if line.unit == "GB"]
        assert len(lines) == 1 and f"x {warm})" in lines[0].name
        # Stopped instances cost their root volume only: warm x volume GB at the gp3 rate, and the volume's
        # throughput above gp3's 125 MiB/s baseline (billed while the volume exists, running or not).
        lt = next(t for t in graph.of_type(LT) if graph.provider_of(t) is graph.provider_of(group))
        ebs = lt.inputs["blockDeviceMappings"][0]["ebs"]
        assert lines[0].quantity == Decimal(warm * ebs["volumeSize"])
        throughput = [line for line in pooled if line.unit != "GB"]
        assert [line.quantity for line in throughput] == [Decimal(warm * (ebs["throughput"] - 125))]


ROLLING_CHANGES = [
    {"model.weights_prefix": "llama-3.1-8b-instruct-fp8/v4/"},  # a new model version
    {"server_image_digest": "sha256:" + "1" * 64},  # a new server image
    {"image_id": "resolve:ssm:/acme/serving/gpu-ami:8"},  # a new AMI
]


@pytest.mark.parametrize("change", ROLLING_CHANGES, ids=lambda c: next(iter(c)))
def test_a_model_or_image_change_shows_in_the_diff_as_a_roll_of_every_region(graph: Graph, change: dict) -> None:  # type: ignore[type-arg]
    """The change is a new launch template version in every region, and every group pinned to it rolls: the
    diff says `refresh` (the group's launch template is `refresh` in the replacement table, terraform-provider-
    aws r/autoscaling_group: a refresh starts when launch_template changes)."""
    from gpuinfra.cost import price_graph
    from gpuinfra.review.diff import Snapshot, diff_sides
    from gpuinfra.review.effects import replacements

    catalog = load_catalog()
    head = graph_for("chat-serve", change)
    sides = [{g.stack: Snapshot(g.stack, g, price_graph(g, catalog), (), {})} for g in (graph, head)]
    changed = {r.name: r for r in diff_sides(*sides, replacements()).stacks[0].resources}
    groups = [g.name for g in graph.of_type(ASG)]
    assert len(groups) == 12  # base, burst and overflow in four regions
    for name in groups:
        effects = {c.effect for c in changed[name].changes}
        assert effects == {"refresh"}, (name, effects)
    templates = {t.name for t in graph.of_type(LT)}
    assert templates <= set(changed) and len(templates) == 4


def test_an_unchanged_spec_rolls_nothing(graph: Graph) -> None:
    again = graph_for("chat-serve", {})
    versions = {
        g.name: json.dumps(g.inputs.get("launchTemplate") or g.inputs["mixedInstancesPolicy"])
        for g in graph.of_type(ASG)
    }
    assert versions == {
        g.name: json.dumps(g.inputs.get("launchTemplate") or g.inputs["mixedInstancesPolicy"])
        for g in again.of_type(ASG)
    }


ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
AMI = "ami-0abc1234def567890"


def _refresh(group) -> dict:  # type: ignore[no-untyped-def,type-arg]
    return group.inputs["instanceRefresh"]["preferences"]


def _region(graph: Graph, resource) -> str:  # type: ignore[no-untyped-def]
    return graph.provider_of(resource).inputs["region"]  # type: ignore[union-attr,no-any-return]


def test_every_group_rolls_a_canary_first_then_soaks_before_the_rest(graph: Graph) -> None:
    """Checkpoints [10, 100] (ascending, unique, the last 100: RefreshPreferences.CheckpointPercentages); the
    soak at the canary is the region's planned cold start plus the longest window of the alarms that stop it: the
    5xx-share SLO alarm's five one-minute periods (spec default slo.evaluation_minutes: 5; chat-serve sets none),
    longer than the unhealthy-host rollout alarm's three."""
    inputs = inputs_for("chat-serve")
    plan = plan_inference(inputs.spec, inputs.org.org, load_catalog())  # type: ignore[arg-type]
    cold = {rp.region: rp.cold_start_seconds for rp in plan.regions}
    for group in graph.of_type(ASG):
        preferences = _refresh(group)
        assert preferences["checkpointPercentages"] == [10, 100]
        assert preferences["checkpointDelay"] == str(int(cold[_region(graph, group)]) + 5 * 60)


def test_the_regions_unhealthy_host_alarm_stops_each_of_its_groups_refresh(graph: Graph) -> None:
    alarms = {_region(graph, a): a for a in graph.of_type(ALARM) if a.name.endswith("-rollout-unhealthy")}
    assert len(alarms) == 4
    target_groups = {_region(graph, t): t for t in graph.of_type("aws:lb/targetGroup:TargetGroup")}
    for region, alarm in alarms.items():
        i = alarm.inputs
        assert (i["namespace"], i["metricName"], i["statistic"]) == (
            "AWS/ApplicationELB",
            "UnHealthyHostCount",
            "Maximum",
        )
        assert (i["threshold"], i["comparisonOperator"]) == (1, "GreaterThanOrEqualToThreshold")
        assert i["dimensions"]["TargetGroup"].startswith(f"targetgroup/{target_groups[region].name}")
    for group in graph.of_type(ASG):
        region = _region(graph, group)
        unhealthy, errors = _refresh(group)["alarmSpecification"]["alarms"]
        assert unhealthy.startswith(alarms[region].name + "-")  # the autonamed alarm of its region
        # and the region's 5xx-share SLO alarm (named, not autonamed: slo.alarm_name): a canary that passes its
        # health checks but answers with errors stops the refresh too
        assert errors == f"chat-serve-{region}-5xx-share"


def test_auto_rollback_everywhere_the_template_names_an_ami() -> None:
    """RollbackInstanceRefresh: no rollback to a template whose ImageId is a Systems Manager parameter. The example's
    pinned parameter version is resolved to its AMI id at deploy, so every region rolls back, as a region with its
    own AMI id does."""
    g = graph_for("chat-serve", {"regions[3].image_id": AMI})
    by_region: dict[str, set[object]] = {}
    for group in g.of_type(ASG):
        by_region.setdefault(_region(g, group), set()).add(_refresh(group).get("autoRollback"))
    assert by_region == {r: {True} for r in ("us-east-1", "us-west-2", "eu-central-1", "ap-northeast-1")}


def test_the_refresh_requests_fit_the_botocore_model_and_carry_the_desired_configuration() -> None:
    """The StartInstanceRefresh request each group's provider sends (preflight's translation of
    terraform-provider-aws group.go), judged by botocore's autoscaling model; with AutoRollback it names the
    group's template version as DesiredConfiguration, which AWS requires ("The AutoRollback parameter cannot
    be set to true when the DesiredConfiguration parameter is empty")."""
    from gpuinfra.clouds.aws.preflight.botocore_check import validate
    from gpuinfra.clouds.aws.preflight.requests.autoscaling import group as translate

    g = graph_for("chat-serve", {"regions[3].image_id": AMI})
    for group in g.of_type(ASG):
        (refresh,) = [c for c in translate(group) if c.operation == "StartInstanceRefresh"]
        assert validate("autoscaling", "StartInstanceRefresh", refresh.params) == [], group.name
        preferences = refresh.params["Preferences"]
        assert preferences["CheckpointPercentages"] == [10, 100] and isinstance(preferences["CheckpointDelay"], int)
        if preferences.get("AutoRollback"):
            desired = refresh.params["DesiredConfiguration"]
            spec = (
                desired.get("LaunchTemplate")
                or desired["MixedInstancesPolicy"]["LaunchTemplate"]["LaunchTemplateSpecification"]
            )
            assert spec["Version"].isdigit()
        else:
            assert "DesiredConfiguration" not in refresh.params


def test_a_checkpoint_delay_past_the_api_maximum_is_refused_by_the_model() -> None:
    """The validation above can fail: CheckpointDelay's maximum is 172800 s in the botocore model."""
    from gpuinfra.clouds.aws.preflight.botocore_check import validate

    request = {
        "AutoScalingGroupName": "g",
        "Preferences": {"CheckpointPercentages": [10, 100], "CheckpointDelay": 172801},
    }
    (problem,) = validate("autoscaling", "StartInstanceRefresh", request)
    assert problem.path == ".Preferences.CheckpointDelay" and "172800" in problem.message
