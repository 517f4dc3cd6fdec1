"""Google's pack rules on a training cluster, each failing on a planted fault in llm-train-gcp's real graph and
passing on the example itself: the node pools' bounds (quota-gcp-node-pools-bounded) and the cluster's networks
as edges (separation-gcp-edges)."""

from __future__ import annotations

import dataclasses

import gpuinfra.spec  # noqa: F401  (first: importing Google's spec models before it drops them from the org's accounts)
import pytest
from gpuinfra.graph import Graph
from gpuinfra.policy.pack import police_stack
from helpers import checked, example_graph, inputs_for

STACK = "llm-train-gcp"
COVERS = ["quota-gcp-node-pools-bounded"]
"""Policies this module fails and passes (tests/policies/test_registration.py)."""


def _run(graph: Graph, policy: str) -> list[str]:
    run = police_stack(inputs_for(STACK), checked(STACK).plan, graph)
    return [v.message for v in run.violations if v.rule == policy]


def _edit(name: str, change: dict[str, object], drop: tuple[str, ...] = ()) -> Graph:
    graph = example_graph(STACK)
    resources = []
    for r in graph.resources:
        if r.name == name:
            inputs = {k: v for k, v in {**r.inputs, **change}.items() if k not in drop}
            r = dataclasses.replace(r, inputs=inputs)
        resources.append(r)
    return dataclasses.replace(graph, resources=tuple(resources))


@pytest.mark.parametrize("policy", [*COVERS, "separation-gcp-edges"])
def test_the_example_passes(policy: str) -> None:
    assert _run(example_graph(STACK), policy) == []


def test_a_pool_without_a_count_or_maximum_is_unbounded() -> None:
    found = _run(_edit("llm-train-gcp-gpu", {}, drop=("nodeCount",)), "quota-gcp-node-pools-bounded")
    assert any("llm-train-gcp-gpu names neither a node count nor an autoscaler maximum" in m for m in found)


def test_a_pool_past_the_plan_is_refused() -> None:
    """16 nodes x 8 H200 = 128 GPUs planned; a pool of 20 launches 160."""
    found = _run(_edit("llm-train-gcp-gpu", {"nodeCount": 20}), "quota-gcp-node-pools-bounded")
    assert found == ["the node pools launch up to 160 GPUs, more than the 128 the plan counted"]


def test_a_node_network_in_a_serving_project_is_an_edge() -> None:
    pool = next(r for r in example_graph(STACK).resources if r.name == "llm-train-gcp-gpu")
    nics = [{"network": "projects/acme-serve-prod/global/networks/serve", "subnetwork": "x"}]
    config = {**pool.inputs["networkConfig"], "additionalNodeNetworkConfigs": nics}
    found = _run(_edit(pool.name, {"networkConfig": config}), "separation-gcp-edges")
    assert any("a network in project acme-serve-prod (gcp-chat), a inference project" in m for m in found)


def test_a_filestore_network_in_a_serving_project_is_an_edge() -> None:
    """/home's Filestore instance names its network by name (the stack's own); a path into another project is an
    edge, judged as the node pools' networks are."""
    home = next(r for r in example_graph(STACK).resources if r.name == "llm-train-gcp-home")
    networks = [{**home.inputs["networks"][0], "network": "projects/acme-serve-prod/global/networks/serve"}]
    found = _run(_edit(home.name, {"networks": networks}), "separation-gcp-edges")
    assert any("a network in project acme-serve-prod (gcp-chat), a inference project" in m for m in found)
