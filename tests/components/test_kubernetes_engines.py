"""SGLang on Kubernetes: the Deployment runs SGLang's command on its image, the PodMonitor scrapes its metrics path,
KEDA counts its queue series, and the preStop drain (run here against a stand-in that speaks SGLang's names only)
waits for its requests; TensorRT-LLM's preStop reads its own path and names."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from gpuinfra.catalog import load_catalog
from gpuinfra.catalog.engines import Engine
from gpuinfra.graph import Graph
from gpuinfra.pulumi.components.inference.external_metric import external_rule
from gpuinfra.pulumi.components.inference.pod_drain import drain_command
from helpers import ROOT, graph_for
from ruamel.yaml import YAML

SGLANG = load_catalog().engine("sglang")
TENSORRT_LLM = load_catalog().engine("tensorrt-llm")
SGLANG_FLEET = {
    "engine": "sglang",
    "server_image": SGLANG.image,
    "server_image_digest": SGLANG.image_digest,
    "access": {"scheme": "internal", "auth": "none", "waf": None},
    "model.adapters": [],
}


def options_of(argv: list[str]) -> dict[str, str]:
    """--flag value pairs of an argv (a flag followed by another flag, like --enable-metrics, takes no value)."""
    return {w: argv[i + 1] for i, w in enumerate(argv[:-1]) if w.startswith("--") and not argv[i + 1].startswith("--")}


def sglang_graph() -> Graph:
    return graph_for("chat-serve-k8s", SGLANG_FLEET)


def test_the_deployment_runs_sglangs_command_with_the_plans_values() -> None:
    graph = sglang_graph()
    deployments = graph.of_type("kubernetes:apps/v1:Deployment")
    assert len(deployments) == 2
    for deployment in deployments:
        (server,) = deployment.inputs["spec"]["template"]["spec"]["containers"]
        args = server["args"]
        assert args[:3] == ["python3", "-m", "sglang.launch_server"]
        flags = options_of(args[3:])
        assert flags["--model-path"] == "/weights" and flags["--tp-size"] == "1"
        assert flags["--mem-fraction-static"] == "0.9"  # the spec's gpu_memory_utilization, by SGLang's flag
        assert flags["--port"] == str(server["ports"][0]["containerPort"])  # where the probes and the NLB go
        assert flags["--host"] == "0.0.0.0"  # SGLang's default, 127.0.0.1, is unreachable from the node
        assert "--enable-metrics" in args  # else /metrics answers 404 and KEDA reads nothing
        assert server["image"].endswith(f"@{SGLANG.image_digest}")
        assert "VLLM_API_KEY" not in {e["name"] for e in server["env"]}
        command = server["lifecycle"]["preStop"]["exec"]["command"]
        assert command[-3:] == ["/metrics", "sglang:num_running_reqs", "sglang:num_queue_reqs"]


def test_the_monitor_and_keda_read_sglangs_series() -> None:
    graph = sglang_graph()
    for monitor in graph.of_type("kubernetes:monitoring.coreos.com/v1:PodMonitor"):
        assert monitor.inputs["spec"]["podMetricsEndpoints"][0]["path"] == "/metrics"
    selector = '{namespace="chat",app_kubernetes_io_name="chat-k8s"}'
    for scaler in graph.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject"):
        query = scaler.inputs["spec"]["triggers"][0]["metadata"]["query"]
        assert query == f"sum(sglang:num_queue_reqs{selector}) + sum(sglang:num_running_reqs{selector})"


class EngineMetrics:
    """An engine's metrics endpoint: its own path and names only (anything else is a 404)."""

    def __init__(self, engine: Engine, in_flight: list[tuple[int, int]]) -> None:
        self.in_flight, self.scrapes = in_flight, 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                running, waiting = fake.in_flight[min(fake.scrapes, len(fake.in_flight) - 1)]
                fake.scrapes += 1
                body = (
                    f'{engine.running_metric}{{model_name="llama"}} {running}\n'
                    f'{engine.waiting_metric}{{model_name="llama"}} {waiting}\n'
                ).encode()
                self.send_response(200 if self.path == engine.metrics_path else 404)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def test_the_prestop_drain_waits_for_each_engines_requests() -> None:
    for engine in (SGLANG, TENSORRT_LLM):
        fake = EngineMetrics(engine, [(2, 1), (1, 0), (0, 1), (0, 0)])
        try:
            command = drain_command(fake.port, 20, engine, settle_seconds=0, poll_seconds=0.05)
            started = time.monotonic()
            subprocess.run([sys.executable, *command[1:]], check=True, timeout=30)
            assert time.monotonic() - started < 10
            assert fake.scrapes == 4, engine.name  # it read busy three times, then idle: its path, its names
        finally:
            fake.httpd.shutdown()


def test_trtllm_on_kubernetes_reads_its_options_file_from_a_config_map() -> None:
    graph = graph_for(
        "chat-serve-k8s",
        {
            **SGLANG_FLEET,
            "engine": "tensorrt-llm",
            "server_image": TENSORRT_LLM.image,
            "server_image_digest": TENSORRT_LLM.image_digest,
        },
    )
    maps = graph.of_type("kubernetes:core/v1:ConfigMap")
    assert len(maps) == 2  # one a region
    for config_map, deployment in zip(maps, graph.of_type("kubernetes:apps/v1:Deployment"), strict=True):
        text = config_map.inputs["data"]["trtllm.yaml"]
        options = YAML(typ="safe").load(text)
        assert options["return_perf_metrics"] is True and options["enable_iter_perf_stats"] is True
        assert config_map.inputs["metadata"]["namespace"] == deployment.inputs["metadata"]["namespace"]
        template = deployment.inputs["spec"]["template"]
        (server,) = template["spec"]["containers"]
        args = server["args"]
        assert args[:3] == ["trtllm-serve", "serve", "/weights"]
        assert options_of(args)["--config"] == "/etc/gpuinfra/trtllm.yaml"
        volume = next(v for v in template["spec"]["volumes"] if v["name"] == "engine-config")
        assert volume["configMap"]["name"] == config_map.inputs["metadata"]["name"]
        assert {"name": "engine-config", "mountPath": "/etc/gpuinfra", "readOnly": True} in server["volumeMounts"]
        # a changed file changes the pod template, so it rolls out
        digest = hashlib.sha256(text.encode()).hexdigest()
        assert template["metadata"]["annotations"] == {"gpuinfra.io/engine-config-sha256": digest}
    for monitor in graph.of_type("kubernetes:monitoring.coreos.com/v1:PodMonitor"):
        assert monitor.inputs["spec"]["podMetricsEndpoints"][0]["path"] == "/prometheus/metrics"
    for scaler in graph.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject"):
        query = scaler.inputs["spec"]["triggers"][0]["metadata"]["query"]
        assert query.startswith("sum(trtllm_num_requests_waiting{") and "+ sum(trtllm_num_requests_running{" in query


def test_a_vllm_pod_has_no_options_file() -> None:
    graph = graph_for("chat-serve-k8s", {})
    assert graph.of_type("kubernetes:core/v1:ConfigMap") == []
    for deployment in graph.of_type("kubernetes:apps/v1:Deployment"):
        assert "annotations" not in deployment.inputs["spec"]["template"]["metadata"]


HPA = {"kubernetes.autoscaler": "hpa", "kubernetes.external_metrics_adapter": "prometheus-adapter"}


def adapter_rules() -> list[dict[str, Any]]:
    """The `externalRules` block docs/inference.md tells a cluster's prometheus-adapter to serve."""
    text = (ROOT / "docs" / "inference.md").read_text(encoding="utf-8")
    block = text.split("```yaml\nexternalRules:\n", 1)[1].split("```", 1)[0]
    rules = YAML(typ="safe").load("externalRules:\n" + block)["externalRules"]
    assert isinstance(rules, list)
    return rules


def test_an_hpa_fleet_of_sglang_scales_on_sglangs_own_series() -> None:
    """An SGLang fleet's HPA reads sglang_requests_in_flight, the rule of that name sums SGLang's gauges, and with the
    HPA's selector as its label matchers (prometheus-adapter docs/externalmetrics.md) the query is KEDA's for the same
    fleet. (It read vllm_requests_in_flight, whose rule sums vLLM's series, which SGLang's pods never export: it could
    never scale.)"""
    hpas = graph_for("chat-serve-k8s", {**SGLANG_FLEET, **HPA}).of_type(
        "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"
    )
    scalers = sglang_graph().of_type("kubernetes:keda.sh/v1alpha1:ScaledObject")
    assert len(hpas) == len(scalers) == 2  # one a region
    rules = {r["name"]["as"]: r for r in adapter_rules()}
    for hpa, scaler in zip(hpas, scalers, strict=True):
        metric = hpa.inputs["spec"]["metrics"][0]["external"]["metric"]
        assert metric["name"] == "sglang_requests_in_flight"
        rule = rules[metric["name"]]
        assert rule["seriesQuery"] == 'sglang:num_queue_reqs{namespace!="",app_kubernetes_io_name!=""}'
        assert rule["metricsQuery"] == (
            "sum(sglang:num_queue_reqs{<<.LabelMatchers>>}) + sum(sglang:num_running_reqs{<<.LabelMatchers>>})"
        )
        labels = metric["selector"]["matchLabels"]
        matchers = f'namespace="{labels["namespace"]}",app_kubernetes_io_name="{labels["app_kubernetes_io_name"]}"'
        keda = scaler.inputs["spec"]["triggers"][0]["metadata"]["query"]
        assert rule["metricsQuery"].replace("<<.LabelMatchers>>", matchers) == keda


def test_the_docs_adapter_rules_are_the_programs_one_an_engine() -> None:
    """docs/inference.md's block is what external_rule makes of every catalog engine; no two rules share a name or
    discover the same series (prometheus-adapter: rules must be mutually exclusive)."""
    engines = load_catalog().engine_table.engines
    rules = adapter_rules()
    assert rules == [external_rule(e) for e in engines]
    assert len({r["name"]["as"] for r in rules}) == len({r["seriesQuery"] for r in rules}) == len(engines)
    vllm = graph_for("chat-serve-k8s", HPA).of_type("kubernetes:autoscaling/v2:HorizontalPodAutoscaler")
    assert {h.inputs["spec"]["metrics"][0]["external"]["metric"]["name"] for h in vllm} == {"vllm_requests_in_flight"}
