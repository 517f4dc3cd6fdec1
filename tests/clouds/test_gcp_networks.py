"""The objects a GKE trainer pod needs before it can start on A3 Ultra (llm-train-gcp): a GKE `Network` and its
`GKENetworkParamSet` for every network the pod's `networking.gke.io/interfaces` annotation names, each pointing at
the VPC and subnet the stack's fabric creates for that NIC, held to GKE's networking CRDs
(GoogleCloudPlatform/gke-networking-api at 34c617f, tests/fixtures/upstream); and Google's nccl-rdma-installer
DaemonSet, held to its manifest at the pinned commit."""

from __future__ import annotations

import json
from typing import Any

import gpuinfra.spec  # noqa: F401  (first: importing Google's spec models before it drops them from the org's accounts)
import jsonschema
import pytest
import yaml
from gpuinfra.graph import Graph, Resource
from helpers import example_graph
from preflight.upstream import FIXTURES, crd_errors, crd_schema

STACK = "llm-train-gcp"
PARAMS = "kubernetes:networking.gke.io/v1:GKENetworkParamSet"
NETWORK = "kubernetes:networking.gke.io/v1:Network"


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph(STACK)


def _by_name(graph: Graph, kind: str) -> dict[str, Resource]:
    return {r.inputs["metadata"]["name"]: r for r in graph.of_type(kind)}


def _interfaces(graph: Graph) -> list[str]:
    (config,) = [c for c in graph.of_type("kubernetes:core/v1:ConfigMap") if "jobset.yaml" in c.inputs.get("data", {})]
    jobset = yaml.safe_load(config.inputs["data"]["jobset.yaml"])
    (job,) = jobset["spec"]["replicatedJobs"]
    annotations = job["template"]["spec"]["template"]["metadata"]["annotations"]
    return [i["network"] for i in json.loads(annotations["networking.gke.io/interfaces"])]


def test_every_network_the_pod_names_exists_with_its_param_set(graph: Graph) -> None:
    named = _interfaces(graph)
    # GKE's pod network is its own; the other nine are the second gVNIC and the eight MRDMA NICs.
    assert named[0] == "default"
    networks, params = _by_name(graph, NETWORK), _by_name(graph, PARAMS)
    assert sorted(networks) == sorted(named[1:]) == sorted(params)
    assert len(networks) == 9
    for name, network in networks.items():
        assert network.inputs["spec"] == {
            "type": "Device",
            "parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": name},
        }


def test_each_param_set_names_the_fabrics_vpc_and_subnet_and_the_nics_mode(graph: Graph) -> None:
    params = {name: r.inputs["spec"] for name, r in _by_name(graph, PARAMS).items()}
    # The names the fabric gives its VPCs and subnets (the Google resources of the same graph).
    subnets = {r.inputs["name"]: r for r in graph.of_type("gcp:compute/subnetwork:Subnetwork")}
    vpcs = {r.inputs["name"] for r in graph.of_type("gcp:compute/network:Network")}
    assert params["gvnic-1"] == {
        "vpc": "llm-train-gcp-net-1",
        "vpcSubnet": "llm-train-gcp-sub-1",
        "deviceMode": "NetDevice",
    }
    for i in range(8):
        assert params[f"rdma-{i}"] == {
            "vpc": "llm-train-gcp-rdma",
            "vpcSubnet": f"llm-train-gcp-rdma-{i}",
            "deviceMode": "RDMA",
        }
    for spec in params.values():
        assert spec["vpc"] in vpcs and spec["vpcSubnet"] in subnets


def test_the_objects_fit_gkes_networking_crds(graph: Graph) -> None:
    resources = graph.of_type(PARAMS) + graph.of_type(NETWORK)
    assert {r.name: crd_errors(r) for r in resources if crd_errors(r)} == {}
    # The CRDs judge: a misspelt field and a mode GKE does not know are refused.
    schema = crd_schema("networking.gke.io", "v1", "GKENetworkParamSet")
    bad = {"apiVersion": "networking.gke.io/v1", "kind": "GKENetworkParamSet", "metadata": {"name": "rdma-0"}}
    errors = list(jsonschema.Draft7Validator(schema).iter_errors({**bad, "spec": {"vpc": "a", "vpcSubnets": "b"}}))
    assert any("vpcSubnets" in e.message for e in errors)
    errors = list(jsonschema.Draft7Validator(schema).iter_errors({**bad, "spec": {"deviceMode": "Rdma"}}))
    assert any("'Rdma' is not one of" in e.message for e in errors)


def _installer(graph: Graph) -> Resource:
    (daemonset,) = [
        d
        for d in graph.of_type("kubernetes:apps/v1:DaemonSet")
        if d.inputs["metadata"]["name"] == "nccl-rdma-installer"
    ]
    return daemonset


def _upstream_installer() -> dict[str, Any]:
    path = FIXTURES / "container-engine-accelerators-992db81" / "nccl-rdma-installer.yaml"
    return dict(yaml.safe_load(path.read_text()))


def test_the_rdma_installer_is_googles_at_the_pin_on_this_clusters_gpus(graph: Graph) -> None:
    daemonset = _installer(graph)
    ours, theirs = daemonset.inputs, _upstream_installer()
    assert ours["metadata"]["name"] == theirs["metadata"]["name"] == "nccl-rdma-installer"
    assert ours["metadata"]["namespace"] == theirs["metadata"]["namespace"] == "kube-system"
    pod, upstream_pod = ours["spec"]["template"]["spec"], theirs["spec"]["template"]["spec"]
    # Everything but the node affinity is Google's, field for field.
    rest = {k: v for k, v in pod.items() if k != "affinity"}
    assert rest == {k: v for k, v in upstream_pod.items() if k != "affinity"}
    assert ours["spec"]["selector"] == theirs["spec"]["selector"]
    assert ours["spec"]["template"]["metadata"]["labels"] == theirs["spec"]["template"]["metadata"]["labels"]
    # Google's lists both A3 Ultra's and A4's accelerators; ours, the cluster's own (a3-ultragpu-8g: H200).
    (term,) = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    (expression,) = term["matchExpressions"]
    assert expression == {"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": ["nvidia-h200-141gb"]}
    (upstream_term,) = upstream_pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert "nvidia-h200-141gb" in upstream_term["matchExpressions"][0]["values"]


def test_the_installer_puts_the_plugin_where_the_trainer_mounts_it(graph: Graph) -> None:
    daemonset = _installer(graph)
    host = {v["hostPath"]["path"] for v in daemonset.inputs["spec"]["template"]["spec"]["volumes"]}
    (config,) = [c for c in graph.of_type("kubernetes:core/v1:ConfigMap") if "jobset.yaml" in c.inputs.get("data", {})]
    jobset = yaml.safe_load(config.inputs["data"]["jobset.yaml"])
    trainer = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    mounted = {v["hostPath"]["path"] for v in trainer["volumes"] if "hostPath" in v}
    # The trainer mounts the node's /home/kubernetes/bin/gib and the driver directory whose lib64 gets gIB's NCCL.
    assert "/home/kubernetes/bin/gib" in host & mounted
    assert any(p.startswith("/home/kubernetes/bin/nvidia") for p in host) and "/home/kubernetes/bin/nvidia" in mounted


def test_the_fixture_crds_are_the_pinned_files() -> None:
    sources = (FIXTURES / "SOURCES.md").read_text()
    for folder in ("gke-networking-api-34c617f", "kueue-v0.19.2", "container-engine-accelerators-992db81"):
        assert f"`{folder}/" in sources and (FIXTURES / folder).is_dir()
