"""The on-premises health path: the GPU remediation script exactly as the stack ships it (the ConfigMap of the
llm-train-onprem example's graph), run with bash (its python3 here-document) against a fake Kubernetes API server on
127.0.0.1 that speaks the two calls it makes (GET /api/v1/nodes?labelSelector=..., PATCH /api/v1/nodes/<name> with a
strategic merge patch). The fake signals are the device plugin's (allocatable below capacity) and a
node-problem-detector condition (GpuUnhealthy, which the example's site lists); cordoned means spec.unschedulable,
what `kubectl cordon` sets. The mount half of the path (a pod on a node whose /lustre is not Lustre fails before it
writes) is test_mount_check.py (the generated init container against a real non-Lustre mount) and
test_kubernetes_training.py (the same check against mount tables)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from helpers import example_graph

TOKEN = "test-token"


def node(name: str, gpus: int = 8, conditions: tuple[tuple[str, str], ...] = (), **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"gpuinfra.io/fabric-domain": "llm-train-dc", **extra.get("labels", {})}},
        "spec": {"unschedulable": True} if extra.get("cordoned") else {},
        "status": {
            "capacity": {"nvidia.com/gpu": "8"},
            "allocatable": {"nvidia.com/gpu": str(gpus)},
            "conditions": [{"type": "Ready", "status": "True"}]
            + [{"type": t, "status": "True", "message": m} for t, m in conditions],
        },
    }


class FakeApi:
    def __init__(self, nodes: list[dict[str, Any]]) -> None:
        self.nodes = nodes
        self.selectors: list[str] = []
        self.patches: list[tuple[str, str, dict[str, Any]]] = []

    def handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def _reply(self, code: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    return self._reply(401, {})
                url = urlparse(self.path)
                assert url.path == "/api/v1/nodes", url.path
                api.selectors += parse_qs(url.query)["labelSelector"]
                self._reply(200, {"kind": "NodeList", "items": api.nodes})

            def do_PATCH(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                api.patches.append((self.path.rsplit("/", 1)[-1], self.headers["Content-Type"], body))
                self._reply(200, {})

        return Handler


def _cronjob_env() -> dict[str, str]:
    graph = example_graph("llm-train-onprem")
    (cron,) = [r for r in graph.of_type("kubernetes:batch/v1:CronJob") if r.name.endswith("-gpu-remediation-cronjob")]
    (container,) = cron.inputs["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e["value"] for e in container["env"]}


@pytest.fixture
def script(tmp_path: Path) -> Path:
    graph = example_graph("llm-train-onprem")
    (config,) = [r for r in graph.of_type("kubernetes:core/v1:ConfigMap") if r.name.endswith("-gpu-remediation-script")]
    path = tmp_path / "gpu-remediator"
    path.write_text(config.inputs["data"]["gpu-remediator"])
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text(TOKEN)
    return path


def run(script: Path, api: FakeApi) -> subprocess.CompletedProcess[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), api.handler())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        env = {
            **_cronjob_env(),  # the configuration exactly as the CronJob gives it
            "GPUINFRA_K8S_API": f"http://127.0.0.1:{server.server_address[1]}",
            "GPUINFRA_SA_DIR": str(script.parent / "sa"),
        }
        # bash runs the script (its python3 on PATH: this interpreter's folder first)
        env["PATH"] = f"{Path(sys.executable).parent}:/usr/bin:/bin"
        return subprocess.run(["/bin/bash", str(script)], env=env, capture_output=True, text=True, timeout=60)
    finally:
        server.shutdown()
        server.server_close()


def test_unhealthy_nodes_are_cordoned_and_healthy_ones_left(script: Path) -> None:
    api = FakeApi(
        [
            node("dgx-000"),
            node("dgx-001", gpus=7),  # the device plugin marked a GPU unhealthy
            node("dgx-002", conditions=(("GpuUnhealthy", "DCGM health: NVLink error"),)),
            node("dgx-003", conditions=(("SomeOtherCondition", "not the site's"),)),
        ]
    )
    done = run(script, api)
    assert done.returncode == 0, done.stderr
    assert api.selectors == ["gpuinfra.io/fabric-domain=llm-train-dc"]
    cordoned = {name: body for name, kind, body in api.patches if body["spec"]["unschedulable"] is True}
    assert set(cordoned) == {"dgx-001", "dgx-002"}
    assert all(kind == "application/strategic-merge-patch+json" for _, kind, _ in api.patches)
    assert (
        cordoned["dgx-001"]["metadata"]["annotations"]["gpuinfra.io/gpu-remediation"]
        == "7 of 8 nvidia.com/gpu allocatable"
    )
    assert "NVLink error" in cordoned["dgx-002"]["metadata"]["annotations"]["gpuinfra.io/gpu-remediation"]


def test_at_most_two_nodes_a_run(script: Path) -> None:
    api = FakeApi([node(f"dgx-00{i}", gpus=7) for i in range(4)])
    done = run(script, api)
    assert done.returncode == 0, done.stderr
    assert [name for name, _, _ in api.patches] == ["dgx-000", "dgx-001"]
    assert done.stdout.count("left, 2 cordoned this run") == 2


def test_its_own_cordons_are_undone_when_healthy_and_an_operator_s_are_not(script: Path) -> None:
    ours = {"gpuinfra.io/gpu-remediation": "cordoned"}
    api = FakeApi(
        [
            node("dgx-010", cordoned=True, labels=ours),  # healthy again
            node("dgx-011", cordoned=True),  # an operator's maintenance
            node("dgx-012", gpus=7, cordoned=True, labels=ours),  # still unhealthy: stays
        ]
    )
    done = run(script, api)
    assert done.returncode == 0, done.stderr
    assert [(name, body["spec"]["unschedulable"]) for name, _, body in api.patches] == [("dgx-010", False)]


def test_the_cronjob_runs_it_restricted_with_nodes_only_rbac() -> None:
    graph = example_graph("llm-train-onprem")
    (role,) = graph.of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")
    assert role.inputs["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "patch"]}]
    (cron,) = [r for r in graph.of_type("kubernetes:batch/v1:CronJob") if r.name.endswith("-gpu-remediation-cronjob")]
    pod = cron.inputs["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    sc = container["securityContext"]
    assert sc["runAsNonRoot"] and sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"} and sc["readOnlyRootFilesystem"]
    assert sc["allowPrivilegeEscalation"] is False
