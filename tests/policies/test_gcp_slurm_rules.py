"""Google's pack rule for the managed Slurm path, failing on planted faults in llm-train-gcp-slurm's real graph and
passing on the example: a Cluster Director cluster launches no more GPUs than the plan counted, of machine types the
catalog knows; its one network is judged as an edge like the node pools' networks."""

from __future__ import annotations

import copy
import dataclasses

import gpuinfra.spec  # noqa: F401  (first: importing Google's spec models before it drops them from the org's accounts)
import pytest
from gpuinfra.graph import Graph
from gpuinfra.policy.pack import police_stack
from helpers import checked, example_graph, inputs_for

STACK = "llm-train-gcp-slurm"
CLUSTER = "llm-train-gcp-slurm-slurm"
COVERS = ["quota-gcp-slurm-bounded"]
"""Policies this module fails and passes (tests/policies/test_registration.py)."""


def _run(graph: Graph, policy: str) -> list[str]:
    run = police_stack(inputs_for(STACK), checked(STACK).plan, graph)
    return [v.message for v in run.violations if v.rule == policy]


def _edit(path: tuple[object, ...], value: object) -> Graph:
    graph = example_graph(STACK)
    resources = []
    for r in graph.resources:
        if r.name == CLUSTER:
            inputs = copy.deepcopy(r.inputs)
            node = inputs
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
            r = dataclasses.replace(r, inputs=inputs)
        resources.append(r)
    return dataclasses.replace(graph, resources=tuple(resources))


NODESET = ("orchestrator", "slurm", "nodeSets", 0)


@pytest.mark.parametrize("policy", [*COVERS, "separation-gcp-edges"])
def test_the_example_passes(policy: str) -> None:
    assert _run(example_graph(STACK), policy) == []


def test_a_nodeset_past_the_plan_is_refused() -> None:
    """2 nodes x 8 H200 = 16 GPUs planned; 2 static and up to 3 dynamic nodes launch 40."""
    found = _run(_edit((*NODESET, "maxDynamicNodeCount"), "3"), "quota-gcp-slurm-bounded")
    assert found == ["the Slurm nodesets launch up to 40 GPUs, more than the 16 the plan counted"]


def test_a_machine_the_catalog_does_not_know_is_refused_not_counted_as_none() -> None:
    config = ("computeResources", 0, "config", "newSpotInstances", "machineType")
    found = _run(_edit(config, "a2-ultragpu-8g"), "quota-gcp-slurm-bounded")
    assert found == [f"{CLUSTER} runs nodes of a2-ultragpu-8g, whose GPUs the catalog does not know"]


def test_a_network_in_a_serving_project_is_an_edge() -> None:
    network = ("networkResources", 0, "config", "existingNetwork", "network")
    found = _run(_edit(network, "projects/acme-serve-prod/global/networks/serve"), "separation-gcp-edges")
    assert any("a network in project acme-serve-prod (gcp-chat), a inference project" in m for m in found)
