"""A spot reclaim of an EKS GPU node, step by step, with the example stack's own objects: the drain EKS starts at the
interruption notice cannot evict a training pod (the PodDisruptionBudget), so the pod keeps training until EC2 shuts
the instance down 120 s later; the kubelet's graceful node shutdown (the nodeadm NodeConfig) then stops it with its
full grace period, in which the preStop hook gives the trainer the checkpoint window and torchrun its 30 s; all of it
inside the time EC2 gives a shutting-down instance.

The rules are written here from their sources, not read from the code under test:
- EKS User Guide, managed node groups, Spot: with Capacity Rebalancing, EKS drains a node when the interruption
  notice arrives (or once a rebalance replacement is Ready); a drain evicts through the eviction API.
- Kubernetes, "API-initiated eviction" / PodDisruptionBudget: an eviction is refused (429) unless the budget allows
  a disruption, i.e. healthy pods - 1 >= minAvailable.
- EC2 User Guide, "Spot Instance interruption notices": the instance is interrupted two minutes after the notice.
- KubeletConfiguration (k8s.io/kubelet config/v1beta1): shutdownGracePeriod is the total delay; regular pods get
  its first (shutdownGracePeriod - shutdownGracePeriodCriticalPods) seconds, critical pods the rest.
- awslabs/amazon-eks-ami PR #2390: EC2's "several minutes" for an instance to shut down, read as 180 s, 30 s of
  which the OS needs after the kubelet; a spot reclaim shuts the instance down the same way.
- pytorch torch/distributed/elastic/multiprocessing/api.py: torchrun kills its workers 30 s after forwarding SIGTERM.
"""

from __future__ import annotations

import base64
import email
import math
from typing import Any

import pytest
import yaml
from gpuinfra.graph import Graph
from gpuinfra.pulumi.components.training.nodeadm import node_config
from gpuinfra.pulumi.components.training.pod_stop import checkpoint_window, grace_seconds
from helpers import example_graph

NOTICE = 120
EC2_SHUTDOWN_ALLOWANCE = 180
OS_AFTER_KUBELET = 30
TORCHRUN_KILL = 30


@pytest.fixture(scope="module")
def eks() -> Graph:
    return example_graph("llm-train-eks")


def seconds(text: str) -> int:
    assert text.endswith("s") and text[:-1].isdigit(), text
    return int(text[:-1])


def kubelet_config(graph: Graph) -> dict[str, Any]:
    lt = graph.named("aws:ec2/launchTemplate:LaunchTemplate", "llm-train-eks-eks-gpu-lt").inputs
    message = email.message_from_bytes(base64.b64decode(lt["userData"]))
    (part,) = [p for p in message.walk() if p.get_content_type() == "application/node.eks.aws"]
    return dict(yaml.safe_load(part.get_payload(decode=True))["spec"]["kubelet"]["config"])


def worker_pod(graph: Graph) -> dict[str, Any]:
    (cm,) = [r for r in graph.of_type("kubernetes:core/v1:ConfigMap") if r.name.endswith("-job-template")]
    job = yaml.safe_load(cm.inputs["data"]["jobset.yaml"])["spec"]["replicatedJobs"][0]["template"]["spec"]
    return {"parallelism": job["parallelism"], **job["template"]}


def eviction_allowed(healthy: int, min_available: int) -> bool:
    return healthy - 1 >= min_available


def test_the_drain_at_the_notice_cannot_evict_a_training_pod(eks: Graph) -> None:
    """The spot group is SPOT (EKS drains it on a notice); the budget holds every pod of the gang."""
    groups = {g.name: g.inputs for g in eks.of_type("aws:eks/nodeGroup:NodeGroup")}
    assert groups["llm-train-eks-eks-gpu-spot"]["capacityType"] == "SPOT"
    (pdb,) = eks.of_type("kubernetes:policy/v1:PodDisruptionBudget")
    pod = worker_pod(eks)
    assert not eviction_allowed(healthy=pod["parallelism"], min_available=pdb.inputs["spec"]["minAvailable"])
    # One pod already lost (its node gone): still no eviction, the JobSet restarts the gang anyway.
    assert not eviction_allowed(healthy=pod["parallelism"] - 1, min_available=pdb.inputs["spec"]["minAvailable"])


def test_graceful_node_shutdown_gives_the_pod_its_whole_grace_within_what_ec2_allows(eks: Graph) -> None:
    """At T = 120 s EC2 shuts the instance down; the kubelet holds the shutdown and stops the pod: preStop (the
    checkpoint window), SIGTERM, torchrun's 30 s; critical pods after; the OS after the kubelet."""
    kubelet = kubelet_config(eks)
    total, critical = seconds(kubelet["shutdownGracePeriod"]), seconds(kubelet["shutdownGracePeriodCriticalPods"])
    pod = worker_pod(eks)["spec"]
    grace = pod["terminationGracePeriodSeconds"]
    assert min(grace, total - critical) == grace  # the kubelet does not cut the pod's grace short
    (trainer,) = [c for c in pod["containers"] if c["name"] == "trainer"]
    hook = trainer["lifecycle"]["preStop"]["exec"]["command"][2]
    window = int(hook.rsplit("sleep ", 1)[1])
    # llm-train-eks' plan: 1,120 GB at 250 MB/s/TiB x 48,000 GiB = 11.7 GB/s -> 96 s, capped at 75 s.
    assert window == min(75, math.ceil(1120 / (250e-3 * 48000 / 1024)))
    assert window + TORCHRUN_KILL <= grace  # the checkpoint window and torchrun's shutdown fit the grace
    # The timeline from the notice: the pod trains on to T = 120, then the node's shutdown.
    pod_done = NOTICE + window + TORCHRUN_KILL
    node_done = NOTICE + total + OS_AFTER_KUBELET
    assert pod_done <= NOTICE + grace <= node_done <= NOTICE + EC2_SHUTDOWN_ALLOWANCE


def test_the_largest_checkpoint_window_still_fits_the_node_shutdown() -> None:
    """A checkpoint that takes an hour to write gets the capped window; the node's shutdown stays within 150 s."""
    grace = grace_seconds(checkpoint_window(3600.0))
    config = node_config(0, grace)
    assert config is not None
    kubelet = config["spec"]["kubelet"]["config"]
    assert seconds(kubelet["shutdownGracePeriod"]) + OS_AFTER_KUBELET <= EC2_SHUTDOWN_ALLOWANCE
    assert seconds(kubelet["shutdownGracePeriod"]) - seconds(kubelet["shutdownGracePeriodCriticalPods"]) >= grace
    with pytest.raises(AssertionError, match="overruns the node's shutdown"):
        node_config(0, grace + 1)
