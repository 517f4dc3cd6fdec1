"""The trainer's JobSet on GKE (llm-train-gcp): the shared template with GKE's GPUDirect RDMA pod (the multi-network
annotations naming the pod network, the second gVNIC and the eight MRDMA NICs; the host's NVIDIA libraries and
gIB plugin), the failure policy and checkpoint contract AWS's has, Managed Lustre through GKE's CSI driver, and
the pod sized from GKE's node allocatable. Expected figures are worked by hand from GKE's documented reservations
and the catalog's a3-ultragpu-8g (224 vCPU, 2,952 GB)."""

from __future__ import annotations

import json
from typing import Any

import gpuinfra.spec  # noqa: F401  (first: importing Google's spec models before it drops them from the org's accounts)
import pytest
import yaml
from gpuinfra.clouds.gcp.plan.jobs import gke_allocatable, spot_stop
from gpuinfra.graph import Graph, Resource
from helpers import DELETE, checked, example_graph, graph_for, rules_fired

STACK = "llm-train-gcp"


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph(STACK)


def _template(graph: Graph) -> Resource:
    (config,) = [c for c in graph.of_type("kubernetes:core/v1:ConfigMap") if "jobset.yaml" in c.inputs.get("data", {})]
    return config


def _jobset(graph: Graph) -> dict[str, Any]:
    return yaml.safe_load(_template(graph).inputs["data"]["jobset.yaml"])


def _pod(jobset: dict[str, Any]) -> dict[str, Any]:
    (job,) = jobset["spec"]["replicatedJobs"]
    return job["template"]["spec"]["template"]


def test_the_gang_is_sixteen_pods_of_eight_gpus_in_the_local_queue(graph: Graph) -> None:
    jobset = _jobset(graph)
    assert jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == STACK
    (job,) = jobset["spec"]["replicatedJobs"]
    assert job["template"]["spec"]["parallelism"] == job["template"]["spec"]["completions"] == 16
    (trainer,) = _pod(jobset)["spec"]["containers"]
    assert trainer["resources"]["limits"]["nvidia.com/gpu"] == 8
    assert "--nnodes=16" in trainer["args"] and "--nproc-per-node=8" in trainer["args"]
    # GKE's RDMA NICs are pod networks, not a device resource: nothing else is requested.
    assert set(trainer["resources"]["limits"]) == {"cpu", "memory", "nvidia.com/gpu"}


def test_the_pod_asks_for_every_mrdma_nic_by_gkes_multi_network_annotations(graph: Graph) -> None:
    annotations = _pod(_jobset(graph))["metadata"]["annotations"]
    assert annotations["networking.gke.io/default-interface"] == "eth0"
    interfaces = json.loads(annotations["networking.gke.io/interfaces"])
    # Google's A3 Ultra manifests: eth0 default, eth1 gvnic-1, eth2..eth9 rdma-0..rdma-7.
    expected = [("eth0", "default"), ("eth1", "gvnic-1")] + [(f"eth{i + 2}", f"rdma-{i}") for i in range(8)]
    assert [(i["interfaceName"], i["network"]) for i in interfaces] == expected
    assert annotations["kueue.x-k8s.io/podset-preferred-topology"] == "cloud.google.com/gce-topology-subblock"


def test_the_nccl_plugin_comes_from_the_node(graph: Graph) -> None:
    spec = _pod(_jobset(graph))["spec"]
    host = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v}
    assert host == {"nvidia": "/home/kubernetes/bin/nvidia", "gib": "/home/kubernetes/bin/gib"}
    (trainer,) = spec["containers"]
    mounts = {m["name"]: (m["mountPath"], m.get("readOnly")) for m in trainer["volumeMounts"]}
    assert mounts["gib"] == ("/usr/local/gib", True) and mounts["nvidia"] == ("/usr/local/nvidia", True)
    env = {e["name"]: e.get("value") for e in trainer["env"]}
    assert env["NCCL_NET"] == "gIB"
    # The namespace's Pod Security level follows the host mounts: Restricted and Baseline refuse hostPath.
    (namespace,) = graph.of_type("kubernetes:core/v1:Namespace")
    assert namespace.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"


def test_a_disruption_restarts_the_gang_without_spending_the_budget(graph: Graph) -> None:
    spec = _jobset(graph)["spec"]
    (rule,) = spec["failurePolicy"]["rules"]
    assert rule["action"] == "RestartJobSetAndIgnoreMaxRestarts"
    assert rule["onJobFailureReasons"] == ["PodFailurePolicy"]
    (job,) = spec["replicatedJobs"]
    (pod_rule,) = job["template"]["spec"]["podFailurePolicy"]["rules"]
    assert pod_rule == {"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}
    assert spec["failurePolicy"]["maxRestarts"] >= 1


def test_checkpoints_go_to_lustre_through_gkes_csi_driver(graph: Graph) -> None:
    pod = _pod(_jobset(graph))["spec"]
    (lustre,) = [v for v in pod["volumes"] if v["name"] == "lustre"]
    claim = lustre["persistentVolumeClaim"]["claimName"]
    # the Lustre claim and volume (the other pair is /home's, test_gcp_filestore.py)
    (pvc,) = [c for c in graph.of_type("kubernetes:core/v1:PersistentVolumeClaim") if c.name.endswith("-lustre-pvc")]
    (pv,) = [v for v in graph.of_type("kubernetes:core/v1:PersistentVolume") if v.name.endswith("-lustre-pv")]
    assert pvc.inputs["metadata"]["name"] == claim and pvc.inputs["metadata"]["namespace"] == "training"
    csi = pv.inputs["spec"]["csi"]
    assert csi["driver"] == "lustre.csi.storage.gke.io"
    assert csi["volumeHandle"] == "acme-train-prod/us-central1-b/llm-train-gcp-lustre"
    assert csi["volumeAttributes"]["filesystem"] == "train"
    assert pv.inputs["spec"]["capacity"]["storage"] == "36000Gi"
    (trainer,) = pod["containers"]
    env = {e["name"]: e.get("value") for e in trainer["env"]}
    assert env["GPUINFRA_CHECKPOINT_ROOT"] == "/lustre/checkpoints"
    assert env["GPUINFRA_CHECKPOINT_NOW_FILE"] == "/run/gpuinfra/checkpoint-now"
    assert "/run/gpuinfra/checkpoint-now" in trainer["lifecycle"]["preStop"]["exec"]["command"][2]


def test_the_pod_is_sized_from_gkes_node_allocatable() -> None:
    # CPU: 6% of core 1, 1% of core 2, 0.5% of cores 3-4, 0.25% of the other 220 = 0.06+0.01+0.01+0.55 = 0.63 cores.
    # Memory: 25% of 4 + 20% of 4 + 10% of 8 + 6% of 112 + 2% of 2,824 GiB = 1+0.8+0.8+6.72+56.48 = 65.8 GiB,
    # and the 100 MiB eviction threshold.
    assert gke_allocatable(224, 2952) == (224_000 - 630, int(2952 * 1024 - 65.8 * 1024) - 100)
    # A small node: 4 vCPU, 16 GiB: 0.06+0.01+0.01 = 0.08 cores; 1+0.8+0.8 = 2.6 GiB.
    assert gke_allocatable(4, 16) == (4000 - 80, int(16 * 1024 - 2.6 * 1024) - 100)


def test_without_a_job_section_no_template_is_rendered() -> None:
    graph = graph_for(STACK, {"job": DELETE})
    assert [c for c in graph.of_type("kubernetes:core/v1:ConfigMap") if "jobset.yaml" in c.inputs.get("data", {})] == []
    (namespace,) = graph.of_type("kubernetes:core/v1:Namespace")
    assert namespace.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def test_on_spot_the_stop_fits_googles_30_second_notice() -> None:
    # 30 s notice - GKE's 15 s for critical system pods = 15 s for the trainer; less the 5 s signal margin, a 10 s
    # checkpoint window. llm-train-gcp's checkpoint takes longer (the plan's write time, 64 s on the reservation's
    # stop), so the window is the budget's 10 s, and the deadline the hook writes is 10 s away.
    graph = graph_for(STACK, {"compute.capacity": {"spot": True}, "compute.node_count": 4})  # within the quota
    jobset = _jobset(graph)
    assert jobset["metadata"]["labels"]["gpuinfra.io/capacity"] == "spot"
    spec = _pod(jobset)["spec"]
    assert spec["terminationGracePeriodSeconds"] == 15
    (trainer,) = spec["containers"]
    hook = trainer["lifecycle"]["preStop"]["exec"]["command"][2]
    assert "+ 10 ))" in hook and hook.endswith("sleep 10")


def test_on_reserved_nodes_the_stop_keeps_torchruns_shutdown(graph: Graph) -> None:
    # Not Spot: the window is the checkpoint's write time (64 s) and the grace adds torchrun's 30 s and the 15 s
    # requeue margin (pod_stop.grace_seconds): 109 s.
    spec = _pod(_jobset(graph))["spec"]
    assert spec["terminationGracePeriodSeconds"] == 64 + 30 + 15


@pytest.mark.parametrize(("write", "window"), [(None, 10), (3.2, 4), (64.0, 10), (0.1, 1)])
def test_the_spot_window_is_the_write_time_within_the_trainers_share(write: float | None, window: int) -> None:
    assert spot_stop(write, 30) == (window, 15)


def test_a_notice_too_short_for_any_window_is_refused() -> None:
    with pytest.raises(ValueError, match="no checkpoint window"):
        spot_stop(10.0, 20)


def test_a_checkpoint_inside_the_notice_but_past_the_trainers_window_is_warned() -> None:
    # 1,120 GB at 56 GB/s: 20 s, inside the 30 s notice but past the trainer's 10 s window (15 s share - 5 s).
    spot = {"compute.capacity": {"spot": True}, "compute.node_count": 4, "checkpointing.write_bandwidth_gb_s": 56}
    result = checked(STACK, spot)
    assert result.plan.checkpoint is not None and round(result.plan.checkpoint.write_seconds) == 20
    assert "gcp-checkpoint-past-spot-notice" in rules_fired(result)
    # 1,120 GB at 140 GB/s: 8 s, inside the window: no warning.
    assert "gcp-checkpoint-past-spot-notice" not in rules_fired(
        checked(STACK, {**spot, "checkpointing.write_bandwidth_gb_s": 140})
    )


def test_no_voluntary_eviction_breaks_the_gang(graph: Graph) -> None:
    (budget,) = graph.of_type("kubernetes:policy/v1:PodDisruptionBudget")
    assert budget.inputs["spec"]["minAvailable"] == 16
    assert budget.inputs["spec"]["selector"] == {"matchLabels": {"gpuinfra.io/workload": "training"}}
    assert budget.inputs["metadata"]["namespace"] == "training"
