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
    images = {lt.inputs["imageId"] for lt in graph.of_type(LT)}
    assert images == {"resolve:ssm:/acme/serving/gpu-ami:7"}  # the example's pin, no `latest`


def test_a_region_can_pin_its_own_image() -> None:
    g = graph_for("chat-serve", {"regions[3].image_id": "ami-0abc1234def567890"})
    by_region = {g.provider_of(lt).inputs["region"]: lt.inputs["imageId"] for lt in g.of_type(LT)}  # type: ignore[union-attr]
    assert by_region["ap-northeast-1"] == "ami-0abc1234def567890"
    assert by_region["us-east-1"] == "resolve:ssm:/acme/serving/gpu-ami:7"


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
    from gpuinfra.review.replacements import load_rules

    catalog = load_catalog()
    head = graph_for("chat-serve", change)
    sides = [{g.stack: Snapshot(g.stack, g, price_graph(g, catalog), (), {})} for g in (graph, head)]
    changed = {r.name: r for r in diff_sides(*sides, load_rules()).stacks[0].resources}
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
