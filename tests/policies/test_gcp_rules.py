"""Google's rules of the pack (gpuinfra.clouds.gcp.policy), each failing on a planted fault in chat-serve-gcp's
real graph and passing on the example itself; not applicable to a stack outside a Google project."""

from __future__ import annotations

import dataclasses

import pytest
from gpuinfra.graph import Graph, Resource
from gpuinfra.policy.pack import police_stack
from helpers import checked, example_graph, inputs_for

STACK = "chat-serve-gcp"
COVERS = ["separation-gcp-edges", "quota-gcp-groups-bounded", "security-gcp-armored-frontend"]
"""Policies this module fails and passes (tests/policies/test_registration.py)."""


def _run(graph: Graph, policy: str) -> list[str]:
    run = police_stack(inputs_for(STACK), checked(STACK).plan, graph)
    return [v.message for v in run.violations if v.rule == policy]


def _edit(name: str, change: dict[str, object] | None = None, drop_dependency: str | None = None) -> Graph:
    graph = example_graph(STACK)
    resources = []
    for r in graph.resources:
        if r.name == name and (change is not None or drop_dependency):
            deps = tuple(d for d in r.dependencies if not (drop_dependency and drop_dependency in d))
            r = dataclasses.replace(r, inputs={**r.inputs, **(change or {})}, dependencies=deps)
        resources.append(r)
    return dataclasses.replace(graph, resources=tuple(resources))


@pytest.mark.parametrize("policy", COVERS)
def test_the_example_passes(policy: str) -> None:
    assert _run(example_graph(STACK), policy) == []


def test_a_group_without_an_autoscaler_is_unbounded() -> None:
    graph = example_graph(STACK)
    kept = tuple(
        r for r in graph.resources if r.name != "chat-serve-gcp-us-central1-spot" or "Autoscaler" not in r.type
    )
    found = _run(dataclasses.replace(graph, resources=kept), "quota-gcp-groups-bounded")
    assert any("chat-serve-gcp-us-central1-spot has no autoscaler" in m for m in found)


def test_a_group_above_the_quota_plan_is_refused() -> None:
    scaler = next(r for r in example_graph(STACK).resources if r.type.endswith("RegionAutoscaler"))
    policy = {**scaler.inputs["autoscalingPolicy"], "maxReplicas": 50}
    found = _run(_edit(scaler.name, {"autoscalingPolicy": policy}), "quota-gcp-groups-bounded")
    assert any("more than the" in m and "the quota plan counted" in m for m in found)


def test_plain_http_and_a_backend_without_armor_are_refused() -> None:
    found = _run(_edit("chat-serve-gcp-https", {"portRange": "80"}), "security-gcp-armored-frontend")
    assert any("listens on 80" in m for m in found)
    found = _run(_edit("chat-serve-gcp-backend", drop_dependency="securityPolicy"), "security-gcp-armored-frontend")
    assert any("without a Cloud Armor security policy" in m for m in found)


def test_a_peering_to_a_training_project_is_refused() -> None:
    network = next(r for r in example_graph(STACK).resources if r.type == "gcp:compute/network:Network")
    peering = Resource(
        urn=f"urn:pulumi:{STACK}::gpuinfra::gcp:compute/networkPeering:NetworkPeering::to-train",
        type="gcp:compute/networkPeering:NetworkPeering",
        name="to-train",
        parent=network.parent,
        provider=network.provider,
        inputs={"peerNetwork": "projects/acme-train-prod/global/networks/train"},
    )
    graph = example_graph(STACK)
    found = _run(dataclasses.replace(graph, resources=(*graph.resources, peering)), "separation-gcp-edges")
    assert any("project acme-train-prod (gcp-research), a training project" in m for m in found)


def test_not_applicable_outside_a_google_project() -> None:
    run = police_stack(inputs_for("chat-serve"), checked("chat-serve").plan, example_graph("chat-serve"))
    skipped = {n.policy for n in run.not_applicable}
    assert set(COVERS) <= skipped
