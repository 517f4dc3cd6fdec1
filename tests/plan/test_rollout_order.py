"""The rollout order (issue 49, "a rollout order in the plan"; review expert-inference-2 P5): a new release's canary
starts in the registry's home region at once and in each replica region only after Replication Time Control's
15 minutes (900 s, S3 UG "Meeting compliance requirements with S3 Replication Time Control") at most.

Hand figures for chat-serve (stacks/org.yaml: registry acme-model-registry, home us-east-1, replicas us-west-2,
eu-central-1, ap-northeast-1), from each region's planned cold start c (an input here, not the figure under test):
- us-east-1: order 1, wait 0, first ready ceil(c), soak int(c) + 300 (the 5xx-share alarm's 5 one-minute periods,
  longer than the rollout alarm's 3), rest from ceil(c) + int(c) + 300.
- the others: order 2, wait 900, first ready 900 + ceil(c), same soak.
chat-serve-k8s (home us-east-1, replica eu-central-1): a pod at a time, no soak, and a replica region's new pod may
wait out the kubelet's back-off cap (300 s, Kubernetes docs "Pod Lifecycle") after the manifest arrives."""

from __future__ import annotations

import math

from gpuinfra.catalog import load_catalog
from gpuinfra.graph import Graph
from gpuinfra.plan import InferencePlan
from gpuinfra.report.build.stack import inference_summary
from helpers import checked, example_graph


def _plan(stack: str, **spec: object) -> InferencePlan:
    result = checked(stack, spec=dict(spec) or None)
    assert isinstance(result.plan, InferencePlan)
    return result.plan


def test_the_home_region_rolls_first_and_each_replica_after_its_copy_by_hand() -> None:
    plan = _plan("chat-serve")
    cold = {rp.region: rp.cold_start_seconds for rp in plan.regions}
    got = {
        s.region: (s.order, s.weights_bucket, s.manifest_wait_seconds, s.first_ready_seconds, s.soak_seconds)
        for s in plan.rollout
    }
    expected = {"us-east-1": (1, "acme-model-registry", 0)} | {
        r: (2, f"acme-model-registry-{r}", 900) for r in ("us-west-2", "eu-central-1", "ap-northeast-1")
    }
    assert got == {r: (*head, head[2] + math.ceil(cold[r]), int(cold[r]) + 300) for r, head in expected.items()}
    east = plan.rollout[0]
    assert east.region == "us-east-1"
    assert east.rest_from_seconds == math.ceil(cold["us-east-1"]) + int(cold["us-east-1"]) + 300


def test_the_table_s_soak_is_the_generated_refresh_s_checkpoint_delay() -> None:
    """One fact, two readers: the plan's soak and the CheckpointDelay every group of the region's refresh gets."""
    graph: Graph = example_graph("chat-serve")
    soak = {s.region: s.soak_seconds for s in _plan("chat-serve").rollout}
    groups = graph.of_type("aws:autoscaling/group:Group")
    assert len(groups) == 12  # base, burst and overflow in four regions
    for group in groups:
        region = graph.provider_of(group).inputs["region"]  # type: ignore[union-attr]
        assert group.inputs["instanceRefresh"]["preferences"]["checkpointDelay"] == str(soak[region]), group.name


def test_a_longer_slo_window_lengthens_the_soak() -> None:
    plan = _plan("chat-serve", **{"slo.evaluation_minutes": 10})
    cold = {rp.region: rp.cold_start_seconds for rp in plan.regions}
    assert {s.region: s.soak_seconds for s in plan.rollout} == {r: int(c) + 600 for r, c in cold.items()}


def test_kubernetes_pods_roll_one_at_a_time_after_the_copy_and_the_back_off() -> None:
    plan = _plan("chat-serve-k8s")
    cold = {rp.region: rp.cold_start_seconds for rp in plan.regions}
    got = {s.region: (s.order, s.manifest_wait_seconds, s.first_ready_seconds, s.soak_seconds) for s in plan.rollout}
    assert got == {
        "us-east-1": (1, 0, math.ceil(cold["us-east-1"]), 0),
        "eu-central-1": (2, 900, 900 + 300 + math.ceil(cold["eu-central-1"]), 0),
    }
    assert all(s.first_step == "1 new pod (maxSurge 1)" for s in plan.rollout)
    assert {s.region: s.held_seconds for s in plan.rollout} == {"us-east-1": 0, "eu-central-1": 1200}


def test_the_preview_carries_the_table() -> None:
    section = next(
        s
        for s in inference_summary(_plan("chat-serve"), load_catalog().engine("vllm"))
        if s.title.startswith("Rollout")
    )
    assert [row[:4] for row in section.rows] == [
        ["1", "us-east-1", "acme-model-registry", "-"],
        ["2", "us-west-2", "acme-model-registry-us-west-2", "900 s"],
        ["2", "eu-central-1", "acme-model-registry-eu-central-1", "900 s"],
        ["2", "ap-northeast-1", "acme-model-registry-ap-northeast-1", "900 s"],
    ]
