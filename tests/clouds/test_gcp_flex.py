"""Flex-start on GKE through Kueue's ProvisioningRequest (llm-train-gcp with `flex_start`): GKE's queued provisioning
on the GPU pool, and Kueue's ProvisioningRequestConfig and AdmissionCheck on the ClusterQueue, held to Kueue's CRDs at
the chart pin (v0.19.2: ../shared/upstream and tests/fixtures/upstream). The combinations Google refuses stay refused
by name. The run duration is the spec's `max_run_hours` in seconds, computed here: 72 h = 259,200 s."""

from __future__ import annotations

from typing import Any

import gpuinfra.spec  # noqa: F401  (first: importing Google's spec models before it drops them from the org's accounts)
import jsonschema
import pytest
from gpuinfra.graph import Graph, Resource
from helpers import checked, example_graph, graph_for, rules_fired
from preflight.upstream import crd_errors, crd_schema

STACK = "llm-train-gcp"
FLEX = {"compute.capacity": {"flex_start": True, "max_run_hours": 72}, "compute.node_count": 4}
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2"


@pytest.fixture(scope="module")
def flex() -> Graph:
    return graph_for(STACK, FLEX)


def _one(graph: Graph, kind: str) -> Resource:
    (resource,) = graph.of_type(f"{KUEUE}:{kind}")
    return resource


def test_the_gpu_pool_takes_only_provisioning_requests(flex: Graph) -> None:
    (pool,) = [p for p in flex.of_type("gcp:container/nodePool:NodePool") if p.inputs["name"] == "gpu"]
    assert pool.inputs["queuedProvisioning"] == {"enabled": True}
    assert pool.inputs["nodeConfig"]["flexStart"] is True
    assert pool.inputs["autoscaling"]["totalMinNodeCount"] == 0 and pool.inputs["initialNodeCount"] == 0
    # Cluster Toolkit examples/gke-dws-flex-start: auto_repair and auto_upgrade false on such a pool.
    assert pool.inputs["management"] == {"autoRepair": False, "autoUpgrade": False}


def test_the_queue_admits_only_after_queued_provisioning_has_the_nodes(flex: Graph) -> None:
    config, check, queue = (_one(flex, k) for k in ("ProvisioningRequestConfig", "AdmissionCheck", "ClusterQueue"))
    assert config.inputs["spec"] == {
        "provisioningClassName": "queued-provisioning.gke.io",
        "managedResources": ["nvidia.com/gpu"],
        "parameters": {"maxRunDurationSeconds": "259200"},  # 72 h
    }
    assert check.inputs["spec"]["controllerName"] == "kueue.x-k8s.io/provisioning-request"
    assert check.inputs["spec"]["parameters"] == {
        "apiGroup": "kueue.x-k8s.io",
        "kind": "ProvisioningRequestConfig",
        "name": config.inputs["metadata"]["name"],
    }
    strategy = queue.inputs["spec"]["admissionChecksStrategy"]
    assert strategy == {"admissionChecks": [{"name": check.inputs["metadata"]["name"]}]}
    # Kueue adds the flavor's tolerations to the pods it admits: GKE taints queued-provisioning nodes.
    tolerations = _one(flex, "ResourceFlavor").inputs["spec"]["tolerations"]
    assert {"key": "cloud.google.com/gke-queued", "operator": "Equal", "value": "true", "effect": "NoSchedule"} in (
        tolerations
    )


def test_the_objects_fit_kueues_crds_at_the_pin(flex: Graph) -> None:
    kinds = ("ProvisioningRequestConfig", "AdmissionCheck", "ClusterQueue", "ResourceFlavor")
    assert {k: crd_errors(_one(flex, k)) for k in kinds} == {k: [] for k in kinds}
    # The CRDs judge: v1beta2's ClusterQueue has no plain admissionChecks list (Google's v1beta1 examples use one),
    # and a ProvisioningRequestConfig's parameters are strings.
    queue = _one(flex, "ClusterQueue")
    schema = crd_schema("kueue.x-k8s.io", "v1beta2", "ClusterQueue")
    v1beta1_style = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", **queue.inputs}
    v1beta1_style["spec"] = {**queue.inputs["spec"], "admissionChecks": ["x"]}
    assert any("admissionChecks" in e.message for e in jsonschema.Draft7Validator(schema).iter_errors(v1beta1_style))
    config = _one(flex, "ProvisioningRequestConfig")
    numeric: dict[str, Any] = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ProvisioningRequestConfig"}
    numeric |= {**config.inputs, "spec": {**config.inputs["spec"], "parameters": {"maxRunDurationSeconds": 259200}}}
    schema = crd_schema("kueue.x-k8s.io", "v1beta2", "ProvisioningRequestConfig")
    assert any("is not of type 'string'" in e.message for e in jsonschema.Draft7Validator(schema).iter_errors(numeric))


def test_on_a_reservation_there_is_no_admission_check() -> None:
    graph = example_graph(STACK)
    assert graph.of_type(f"{KUEUE}:AdmissionCheck") == graph.of_type(f"{KUEUE}:ProvisioningRequestConfig") == []
    (queue,) = graph.of_type(f"{KUEUE}:ClusterQueue")
    assert "admissionChecksStrategy" not in queue.inputs["spec"]
    (pool,) = [p for p in graph.of_type("gcp:container/nodePool:NodePool") if p.inputs["name"] == "gpu"]
    assert "queuedProvisioning" not in pool.inputs and pool.inputs["management"]["autoRepair"] is True


@pytest.mark.parametrize(
    ("capacity", "rule"),
    [
        ({"flex_start": True, "max_run_hours": 72, "spot": True}, "gcp-spot-with-flex-start"),
        ({"flex_start": True, "max_run_hours": 72, "reservation": "acme-h"}, "gcp-flex-start-with-reservation"),
        ({"flex_start": True}, "gcp-flex-start-duration"),
        ({"flex_start": True, "max_run_hours": 169}, "gcp-flex-start-duration"),
    ],
)
def test_the_combinations_google_refuses_stay_refused_by_name(capacity: dict[str, Any], rule: str) -> None:
    assert rule in rules_fired(checked(STACK, {"compute.capacity": capacity, "compute.node_count": 4}))
