"""Fine-tuning on the existing training cluster: a Kueue LocalQueue on the training ClusterQueue and a suspended
Job template (Kueue docs, "Run a Kubernetes Job"), and no AWS resources."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from gpuinfra.graph import Graph
from helpers import ROOT, example_data, gpuinfra, graph_for

KUBE = "gpuinfra:kube-dc-east"
SECRET = {"secure": "v1:UExBQ0VIT0xERVI=:UExBQ0VIT0xERVItLWt1YmVjb25maWctZGMtZWFzdA=="}
KUEUE = {
    "kubeconfig_key": KUBE,
    "cluster_queue": "llm-train-dc",
    "namespace": "research",
    "checkpoint_uri": "s3://acme-finetune-checkpoints/checkpoints/",
}
SPEC = example_data("llm-finetune")["config"]["gpuinfra:finetune"]


@pytest.fixture(scope="module")
def graph() -> Graph:
    return graph_for("llm-finetune", {"kueue": KUEUE}, config={KUBE: SECRET})


def test_local_queue_feeds_the_training_cluster_queue(graph: Graph) -> None:
    (queue,) = [r for r in graph.resources if r.inputs.get("kind") == "LocalQueue"]
    assert queue.inputs["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    assert queue.inputs["spec"] == {"clusterQueue": "llm-train-dc"}
    assert queue.inputs["metadata"]["namespace"] == "research"
    assert not [r for r in graph.resources if r.type.startswith("aws:")]


def test_job_template_is_suspended_queued_and_asks_for_the_gpu(graph: Graph) -> None:
    (config_map,) = graph.of_type("kubernetes:core/v1:ConfigMap")
    job = yaml.safe_load(config_map.inputs["data"]["job.yaml"])
    assert job["kind"] == "Job" and job["metadata"]["generateName"] == "llm-finetune-"  # kubectl create
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "finetune"
    assert job["spec"]["suspend"] is True
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["image"] == SPEC["image"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 1}  # p5.4xlarge: 1 H100
    # The training cluster's GPU nodes carry the device plugin's resource as a NoSchedule taint (EKS user guide,
    # GPU node groups); without this toleration the admitted pod would stay Pending.
    tolerations = job["spec"]["template"]["spec"]["tolerations"]
    assert tolerations == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["GPUINFRA_CHECKPOINT_ROOT"] == KUEUE["checkpoint_uri"]
    assert env["GPUINFRA_CHECKPOINT_SIGNAL"] == "TERM"


def test_a_missing_kubeconfig_key_is_an_input_error() -> None:
    from gpuinfra.errors import InputError

    with pytest.raises(InputError, match="kube-dc-east"):
        graph_for("llm-finetune", {"kueue": KUEUE})


def test_the_pack_refuses_an_inference_cluster(tmp_path: Path) -> None:
    """separation-kubernetes: the kueue key must be a training cluster's (a finetune stack is training's)."""
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    stack = tmp_path / "stacks" / "Pulumi.llm-finetune.yaml"
    data = yaml.safe_load(stack.read_text())
    key = "gpuinfra:kube-us-east-1"  # serve-us-east-1: purpose inference (stacks/org.yaml)
    data["config"][key] = SECRET
    data["config"]["gpuinfra:finetune"]["kueue"] = {**KUEUE, "kubeconfig_key": key}
    stack.write_text(yaml.safe_dump(data))
    result = gpuinfra("preview", "stacks/Pulumi.llm-finetune.yaml", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "separation-kubernetes" in result.stdout and "serve-us-east-1" in result.stdout


def test_a_named_resource_overrides_the_catalogs() -> None:
    """A site whose device plugin advertises another name (e.g. a MIG or time-sliced resource) names it."""
    shared = "nvidia.com/gpu.shared"
    graph = graph_for("llm-finetune", {"kueue": {**KUEUE, "gpu_resource": shared}}, config={KUBE: SECRET})
    (config_map,) = graph.of_type("kubernetes:core/v1:ConfigMap")
    pod = yaml.safe_load(config_map.inputs["data"]["job.yaml"])["spec"]["template"]["spec"]
    assert pod["containers"][0]["resources"]["limits"] == {shared: 1}
    assert [t["key"] for t in pod["tolerations"]] == [shared]
