"""Serving on Kubernetes: Deployment, probes sized by the cold start, PDB, autoscaler (KEDA or HPA)."""

from __future__ import annotations

import pytest
from helpers import example_graph, graph_for

from infra.graph import Graph
from infra.pulumi.components.inference.kubernetes import startup_failure_threshold


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph("chat-serve-k8s")


def test_one_kubernetes_provider_per_cluster_with_a_secret_kubeconfig(graph: Graph) -> None:
    providers = [p for p in graph.providers() if p.type == "pulumi:providers:kubernetes"]
    assert len(providers) == 2 and all(p.inputs["kubeconfig"] == "[secret]" for p in providers)
    for resource in graph.resources:
        if resource.type.startswith("kubernetes:"):
            assert graph.provider_of(resource) in providers


def test_deployment_requests_gpus_on_the_right_nodes_with_probes(graph: Graph) -> None:
    for deployment in graph.of_type("kubernetes:apps/v1:Deployment"):
        pod = deployment.inputs["spec"]["template"]["spec"]
        (server,) = pod["containers"]
        assert server["resources"]["limits"]["nvidia.com/gpu"] == "1"
        assert pod["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-L40S"}
        assert server["readinessProbe"]["httpGet"]["path"] == "/health"
        startup = server["startupProbe"]
        assert startup["periodSeconds"] * startup["failureThreshold"] >= 106  # the planned cold start
        assert server["lifecycle"]["preStop"]["exec"]["command"] == ["sleep", "30"]
        assert pod["terminationGracePeriodSeconds"] > 30
        (init,) = pod["initContainers"]
        assert any(
            a.startswith("s3://acme-model-registry") and a.endswith("/models/llama-3.1-8b-instruct/v3/")
            for a in init["args"]
        )


def test_service_pdb_and_keda_scaler(graph: Graph) -> None:
    for service in graph.of_type("kubernetes:core/v1:Service"):
        assert service.inputs["spec"]["type"] == "LoadBalancer"
        assert service.inputs["metadata"]["annotations"]["service.beta.kubernetes.io/aws-load-balancer-ssl-cert"]
    assert all(
        p.inputs["spec"]["maxUnavailable"] == 1 for p in graph.of_type("kubernetes:policy/v1:PodDisruptionBudget")
    )
    scalers = graph.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject")
    assert len(scalers) == 2
    for scaler in scalers:
        spec = scaler.inputs["spec"]
        assert spec["triggers"][0]["metadata"]["threshold"] == "4" and spec["cooldownPeriod"] == 600


def test_hpa_variant_scales_on_an_external_queue_metric() -> None:
    graph = graph_for("chat-serve-k8s", {"kubernetes.autoscaler": "hpa"})
    assert not graph.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject")
    for hpa in graph.of_type("kubernetes:autoscaling/v2:HorizontalPodAutoscaler"):
        spec = hpa.inputs["spec"]
        (metric,) = spec["metrics"]
        assert metric["external"]["metric"]["name"] == "vllm:num_requests_waiting"
        assert metric["external"]["target"] == {"type": "AverageValue", "averageValue": "4"}
        assert spec["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 600
        assert spec["behavior"]["scaleUp"]["stabilizationWindowSeconds"] == 0


def test_routing_points_latency_records_at_the_services(graph: Graph) -> None:
    records = graph.of_type("aws:route53/record:Record")
    assert sorted(r.inputs["setIdentifier"] for r in records) == ["eu-central-1", "us-east-1"]
    assert all(r.inputs["type"] == "CNAME" and r.inputs["records"][0].endswith(".elb.amazonaws.com") for r in records)


def test_startup_threshold_grows_with_the_cold_start() -> None:
    assert startup_failure_threshold(106) == 17
    assert startup_failure_threshold(600) == 66
