"""Serving on Kubernetes: Deployment, probes sized by the cold start, PDB, autoscaler (KEDA or HPA)."""

from __future__ import annotations

import pytest
from gpuinfra.graph import Graph
from gpuinfra.pulumi.components.inference.kubernetes import startup_failure_threshold
from helpers import example_graph, graph_for


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
        assert startup["periodSeconds"] * startup["failureThreshold"] >= 202  # the planned cold start (g6e.xlarge)
        # The autoscaler owns the replica count: a Deployment with spec.replicas resets it on every apply.
        assert "replicas" not in deployment.inputs["spec"]
        # g6e.xlarge: 4 vCPUs, 32 GiB -> 3 CPUs and 24 GiB requested, memory limited to the request.
        requests = {k: v for k, v in server["resources"]["requests"].items() if k != "ephemeral-storage"}
        assert requests == {"nvidia.com/gpu": "1", "cpu": "3", "memory": "24Gi"}
        assert server["resources"]["limits"]["memory"] == "24Gi"
        for container in [server, *pod["initContainers"]]:
            context = container["securityContext"]
            assert context["runAsNonRoot"] is True and context["allowPrivilegeEscalation"] is False
            assert (
                context["capabilities"] == {"drop": ["ALL"]} and context["seccompProfile"]["type"] == "RuntimeDefault"
            )
            # Issue 47: a read-only root with /tmp on an emptyDir, a UID no node account has (AL2023's ec2-user
            # is 1000; checkov CKV_K8S_40 asks for 10,000 or more).
            assert context["readOnlyRootFilesystem"] is True and context["runAsUser"] >= 10000
            assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
        assert {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}} in pod["volumes"]
        assert pod["automountServiceAccountToken"] is False  # nothing in the pod calls the Kubernetes API
        env = {e["name"]: e for e in server["env"]}
        assert env["VLLM_API_KEY"]["valueFrom"]["secretKeyRef"] == {"name": "chat-k8s-api-key", "key": "api-key"}
        # preStop drains in-flight generations before SIGTERM (test_kubernetes_drain runs it).
        assert server["lifecycle"]["preStop"]["exec"]["command"][:2] == ["python3", "-c"]
        assert pod["terminationGracePeriodSeconds"] > 30
        # Sync, then verify against the manifest (test_kubernetes_weights runs the verify script), in that order.
        sync, verify = pod["initContainers"]
        assert [sync["name"], verify["name"]] == ["weights", "verify"]
        assert any(
            a.startswith("s3://acme-model-registry") and a.endswith("/models/llama-3.1-8b-instruct/v3/")
            for a in sync["args"]
        )
        assert verify["image"] == server["image"] and verify["command"][:2] == ["bash", "-c"]
        assert {"name": "weights", "mountPath": "/weights", "readOnly": True} in verify["volumeMounts"]


def test_service_pdb_and_keda_scaler(graph: Graph) -> None:
    for service in graph.of_type("kubernetes:core/v1:Service"):
        assert service.inputs["spec"]["type"] == "LoadBalancer"
        annotations = service.inputs["metadata"]["annotations"]
        assert annotations["service.beta.kubernetes.io/aws-load-balancer-ssl-cert"]
        # The health-check path counts only with an HTTP check (AWS Load Balancer Controller annotations).
        assert annotations["service.beta.kubernetes.io/aws-load-balancer-healthcheck-protocol"] == "HTTP"
        assert annotations["service.beta.kubernetes.io/aws-load-balancer-healthcheck-path"] == "/health"
        assert annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"] == "internal"
    assert all(
        p.inputs["spec"]["maxUnavailable"] == 1 for p in graph.of_type("kubernetes:policy/v1:PodDisruptionBudget")
    )
    scalers = graph.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject")
    assert len(scalers) == 2
    for scaler in scalers:
        spec = scaler.inputs["spec"]
        assert spec["triggers"][0]["metadata"]["threshold"] == "12" and spec["cooldownPeriod"] == 600


def test_the_keda_query_reads_the_labels_the_pod_monitor_produces(graph: Graph) -> None:
    monitors = graph.of_type("kubernetes:monitoring.coreos.com/v1:PodMonitor")
    scalers = graph.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject")
    assert len(monitors) == len(scalers) == 2
    for monitor, scaler in zip(monitors, scalers, strict=True):
        spec = monitor.inputs["spec"]
        # kube-prometheus-stack's Prometheus selects PodMonitors by the label release=<release>: the cluster's
        # declared release (stacks/org.yaml: prometheus).
        assert monitor.inputs["metadata"]["labels"]["release"] == "prometheus"
        assert spec["selector"]["matchLabels"] == {"app.kubernetes.io/name": "chat-k8s"}
        assert spec["podMetricsEndpoints"][0] == {"port": "http", "path": "/metrics", "interval": "15s"}
        # podTargetLabels copies the pod label onto every series, sanitized to app_kubernetes_io_name;
        # the Prometheus Operator adds `namespace` to every scraped series.
        assert spec["podTargetLabels"] == ["app.kubernetes.io/name"]
        query = scaler.inputs["spec"]["triggers"][0]["metadata"]["query"]
        selector = '{namespace="chat",app_kubernetes_io_name="chat-k8s"}'
        assert query == f"sum(vllm:num_requests_waiting{selector}) + sum(vllm:num_requests_running{selector})"


def test_network_policy_admits_only_the_server_port(graph: Graph) -> None:
    """Per region: a default deny for the namespace (every pod, both directions, no rule), and the servers'
    policy, which lets in the server port only, from the NLB's subnets (ip targets over TCP: the NLB does not
    preserve client IPs, pods see its private addresses) and from the monitoring namespace (Prometheus scrapes);
    not from every pod. Subnets as stacks/org.yaml declares them per cluster."""
    policies = graph.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
    deny = [p for p in policies if p.inputs["metadata"]["name"] == "default-deny"]
    servers = [p for p in policies if p.inputs["metadata"]["name"] != "default-deny"]
    assert len(deny) == len(servers) == 2
    for policy in deny:
        assert policy.inputs["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    for policy in servers:
        spec = policy.inputs["spec"]
        assert spec["policyTypes"] == ["Ingress", "Egress"]
    subnets = {
        "us-east-1": ["10.80.96.0/24", "10.80.97.0/24", "10.80.98.0/24"],
        "eu-central-1": ["10.81.96.0/24", "10.81.97.0/24", "10.81.98.0/24"],
    }
    for policy in servers:
        spec = policy.inputs["spec"]
        region = next(r for r in subnets if r in policy.name)
        port = [{"protocol": "TCP", "port": 8000}]
        assert spec["ingress"] == [
            {"from": [{"ipBlock": {"cidr": c}} for c in subnets[region]], "ports": port},
            {
                "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}],
                "ports": port,
            },
        ]
        # Every rule names its sources: a rule without `from` admits every source (NetworkPolicy semantics).
        assert all(rule.get("from") for rule in spec["ingress"])


def test_images_are_pinned_by_digest_when_the_spec_gives_one() -> None:
    digest = "sha256:" + "ab" * 32
    graph = graph_for("chat-serve-k8s", {"server_image_digest": digest, "image_source": "direct"})
    for deployment in graph.of_type("kubernetes:apps/v1:Deployment"):
        (server,) = deployment.inputs["spec"]["template"]["spec"]["containers"]
        assert server["image"] == f"vllm/vllm-openai@{digest}"  # the mirror: tests/components/test_image_mirror.py


def test_hpa_variant_scales_on_an_external_queue_metric() -> None:
    graph = graph_for(
        "chat-serve-k8s", {"kubernetes.autoscaler": "hpa", "kubernetes.external_metrics_adapter": "prometheus-adapter"}
    )
    assert not graph.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject")
    for hpa in graph.of_type("kubernetes:autoscaling/v2:HorizontalPodAutoscaler"):
        spec = hpa.inputs["spec"]
        (metric,) = spec["metrics"]
        assert metric["external"]["metric"]["name"] == "vllm_requests_in_flight"
        assert metric["external"]["target"] == {"type": "AverageValue", "averageValue": "12"}
        assert spec["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 600
        assert spec["behavior"]["scaleUp"]["stabilizationWindowSeconds"] == 0


def test_routing_points_latency_records_at_the_services(graph: Graph) -> None:
    """Alias records to each Service's NLB (read back by the name the Service gives it): test_kubernetes_failover."""
    records = graph.of_type("aws:route53/record:Record")
    assert sorted(r.inputs["setIdentifier"] for r in records) == ["eu-central-1", "us-east-1"]
    for record in records:
        region = record.inputs["setIdentifier"]
        assert record.inputs["type"] == "A"
        assert record.inputs["aliases"][0]["name"].endswith(f".elb.{region}.amazonaws.com")
        assert [d.name for d in graph.dependencies_of(record, "kubernetes:core/v1:Service")] == [
            f"chat-k8s-{region}-service"
        ]


def test_startup_threshold_grows_with_the_cold_start() -> None:
    assert startup_failure_threshold(106) == 17
    assert startup_failure_threshold(600) == 66


def test_the_namespace_asks_for_the_load_balancer_readiness_gate(graph: Graph) -> None:
    """AWS Load Balancer Controller docs, "Pod readiness gate": the controller injects the gate into pods of a
    namespace labelled elbv2.k8s.aws/pod-readiness-gate-inject=enabled, for ip targets only."""
    for namespace in graph.of_type("kubernetes:core/v1:Namespace"):
        assert namespace.inputs["metadata"]["labels"]["elbv2.k8s.aws/pod-readiness-gate-inject"] == "enabled"
    for service in graph.of_type("kubernetes:core/v1:Service"):
        annotations = service.inputs["metadata"]["annotations"]
        assert annotations["service.beta.kubernetes.io/aws-load-balancer-nlb-target-type"] == "ip"


def test_the_pod_monitor_takes_each_clusters_release_label() -> None:
    graph = graph_for("chat-serve-k8s", org={"clusters.serve-us-east-1.components.prometheus_operator.release": "kps"})
    releases = {
        m.name: m.inputs["metadata"]["labels"]["release"]
        for m in graph.of_type("kubernetes:monitoring.coreos.com/v1:PodMonitor")
    }
    assert releases == {"chat-k8s-us-east-1-metrics": "kps", "chat-k8s-eu-central-1-metrics": "prometheus"}


def test_the_role_reaches_the_pods_as_each_cluster_hands_out_roles(graph: Graph) -> None:
    """IRSA (the example clusters): the service account's role-arn annotation, no association. EKS Pod Identity:
    an association of cluster, namespace and service account with the role (EKS CreatePodIdentityAssociation), in
    the fleet's account, and no annotation."""
    role = "arn:aws:iam::222222222222:role/chat-k8s-weights-reader"
    for account in graph.of_type("kubernetes:core/v1:ServiceAccount"):
        assert account.inputs["metadata"]["annotations"] == {"eks.amazonaws.com/role-arn": role}
    assert graph.of_type("aws:eks/podIdentityAssociation:PodIdentityAssociation") == []
    east = "clusters.serve-us-east-1.components.workload_identity"
    pods = graph_for("chat-serve-k8s", org={east: {"kind": "pod_identity", "eks_cluster_name": "serve-use1"}})
    (association,) = pods.of_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
    inputs = association.inputs
    assert (inputs["clusterName"], inputs["namespace"], inputs["serviceAccount"], inputs["roleArn"]) == (
        "serve-use1",
        "chat",
        "chat-k8s",
        role,
    )
    provider = pods.provider_of(association)
    assert provider is not None and provider.inputs["region"] == "us-east-1"
    assert "222222222222" in provider.inputs["allowedAccountIds"]  # the fleet account (a JSON list in provider inputs)
    annotations = {
        a.name: a.inputs["metadata"].get("annotations") for a in pods.of_type("kubernetes:core/v1:ServiceAccount")
    }
    assert annotations == {
        "chat-k8s-us-east-1-sa": {},
        "chat-k8s-eu-central-1-sa": {"eks.amazonaws.com/role-arn": role},
    }
