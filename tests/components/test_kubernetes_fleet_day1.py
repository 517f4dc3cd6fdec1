"""The Kubernetes fleet on its first day: KEDA reads the Prometheus the organization declares (and holds a fallback
when it stops answering), and Pulumi waits for a first rollout as long as the cold-start plan says it takes."""

from __future__ import annotations

from typing import Any

import pytest
from gpuinfra.plan import InferencePlan
from gpuinfra.pulumi.components.inference import kubernetes as kubernetes_module
from gpuinfra.pulumi.components.inference.kubernetes import rollout_timeouts
from helpers import checked, example_graph, graph_for

SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"


def test_keda_reads_the_declared_prometheus_not_a_default_that_matches_nothing() -> None:
    """The Prometheus Operator creates a governing Service `prometheus-operated` (port 9090) for every Prometheus in
    its namespace (stacks/org.yaml: monitoring), whatever the Helm release is called; `prometheus.monitoring:9090`,
    the old default, is created by neither the operator nor kube-prometheus-stack."""
    scalers = {s.name: s.inputs["spec"] for s in example_graph("chat-serve-k8s").of_type(SCALED_OBJECT)}
    assert {name: s["triggers"][0]["metadata"]["serverAddress"] for name, s in scalers.items()} == {
        "chat-k8s-us-east-1-scaler": "http://prometheus-operated.monitoring.svc:9090",
        "chat-k8s-eu-central-1-scaler": "http://prometheus-operated.monitoring.svc:9090",
    }
    # A cluster whose Prometheus runs elsewhere is read there; an explicit prometheus_url still wins.
    moved = graph_for(
        "chat-serve-k8s", org={"clusters.serve-eu-central-1.components.prometheus_operator.namespace": "obs"}
    )
    addresses = {
        s.name: s.inputs["spec"]["triggers"][0]["metadata"]["serverAddress"] for s in moved.of_type(SCALED_OBJECT)
    }
    assert addresses["chat-k8s-eu-central-1-scaler"] == "http://prometheus-operated.obs.svc:9090"
    assert addresses["chat-k8s-us-east-1-scaler"] == "http://prometheus-operated.monitoring.svc:9090"
    explicit = graph_for("chat-serve-k8s", {"kubernetes.prometheus_url": "http://thanos-query.obs.svc:10902"})
    assert {s.inputs["spec"]["triggers"][0]["metadata"]["serverAddress"] for s in explicit.of_type(SCALED_OBJECT)} == {
        "http://thanos-query.obs.svc:10902"
    }


def test_a_cluster_without_a_declared_prometheus_is_refused() -> None:
    """No declared Prometheus, no address to derive: the organization file is refused where the cluster's
    components leave it out (the CLI reports it as an ill-typed file, exit 2)."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=r"clusters\.serve-us-east-1\.components\.prometheus_operator"):
        checked("chat-serve-k8s", org={"clusters.serve-us-east-1.components.prometheus_operator": None})


def test_keda_holds_the_planned_peak_when_prometheus_stops_answering() -> None:
    """KEDA's fallback (ScaledObject spec.fallback) after 3 failed queries: the replicas the region's peak needs.
    chat-serve-k8s: us-east-1 peak 30 requests/s at 2 a replica = 15; eu-central-1 14 / 2 = 7."""
    plan = checked("chat-serve-k8s").plan
    assert isinstance(plan, InferencePlan)
    scalers = {s.name: s.inputs["spec"] for s in example_graph("chat-serve-k8s").of_type(SCALED_OBJECT)}
    assert scalers["chat-k8s-us-east-1-scaler"]["fallback"] == {"failureThreshold": 3, "replicas": 15}
    assert scalers["chat-k8s-eu-central-1-scaler"]["fallback"] == {"failureThreshold": 3, "replicas": 7}


def test_rollout_timeouts_by_hand() -> None:
    """A 600 s planned cold start: 300 s of scheduling plus twice 600 = 1,500 s for the first pod; an update of 22
    replicas, one at a time (maxSurge 1): 22 x 1,500 = 33,000 s. Pulumi's default would fail both after 600 s."""
    t = rollout_timeouts(600, 22)
    assert (t.create, t.update) == ("1500s", "33000s")
    # A replica region: the first pod may first wait for the release to replicate (RTC's 900 s) and the kubelet's
    # back-off (300 s): 1,200 s more, once.
    t = rollout_timeouts(600, 22, 1200)
    assert (t.create, t.update) == ("2700s", "34200s")


def test_the_deployment_is_registered_with_the_plan_s_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    real = kubernetes_module.k8s.apps.v1.Deployment

    def record(name: str, *args: Any, **kwargs: Any) -> Any:
        seen[name] = kwargs["opts"].custom_timeouts
        return real(name, *args, **kwargs)

    monkeypatch.setattr(kubernetes_module.k8s.apps.v1, "Deployment", record)
    graph_for("chat-serve-k8s", {"cold_start.weights_load_seconds": 400})  # a measured cold start: 400 s
    plan = checked("chat-serve-k8s", spec={"cold_start.weights_load_seconds": 400}).plan
    assert isinstance(plan, InferencePlan)
    # us-east-1 is the registry's home region; eu-central-1 reads a replica: RTC's 900 s + the back-off's 300 s.
    wait = {"us-east-1": 0, "eu-central-1": 900 + 300}
    assert sorted(wait) == sorted(rp.region for rp in plan.regions)
    for rp in plan.regions:
        timeouts = seen[f"chat-k8s-{rp.region}-server"]
        assert rp.cold_start_seconds == 400
        assert timeouts.create == f"{wait[rp.region] + 300 + 2 * 400}s"
        assert timeouts.update == f"{wait[rp.region] + (300 + 2 * 400) * rp.max_replicas}s"
