"""A node group update or a site's node drain never evicts a running training pod: a PodDisruptionBudget over the
JobSet's pods with minAvailable = the gang's size (EKS User Guide, "Understand each phase of node updates": the
upgrade phase evicts through the eviction API, which honours PodDisruptionBudgets, and fails with
PodEvictionFailure after 15 minutes instead of killing the pod)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import example_graph
from ruamel.yaml import YAML


def _job_pod(stack: str) -> dict[str, Any]:
    graph = example_graph(stack)
    (cm,) = [r for r in graph.of_type("kubernetes:core/v1:ConfigMap") if r.name.endswith("-job-template")]
    jobset = YAML(typ="safe", pure=True).load(cm.inputs["data"]["jobset.yaml"])
    return jobset["spec"]["replicatedJobs"][0]["template"]["spec"]


@pytest.mark.parametrize(("stack", "nodes"), [("llm-train-eks", 16), ("llm-train-onprem", 32)])  # compute.node_count
def test_the_budget_covers_every_pod_of_the_gang(stack: str, nodes: int) -> None:
    graph = example_graph(stack)
    (pdb,) = graph.of_type("kubernetes:policy/v1:PodDisruptionBudget")
    job = _job_pod(stack)
    labels = job["template"]["metadata"]["labels"]
    selector = pdb.inputs["spec"]["selector"]["matchLabels"]
    assert selector.items() <= labels.items()  # it selects the trainer pods
    assert pdb.inputs["spec"]["minAvailable"] == job["parallelism"] == nodes
    assert pdb.inputs["metadata"]["namespace"] == "training"
