"""The one-hour host maintenance notice as an on-demand checkpoint on GKE (llm-train-gcp, reserved nodes): the
DaemonSet's command run as the kubelet runs it (python3, the pod's script from its ConfigMap) against a stand-in
Compute Engine metadata server (instance/maintenance-event long-polled with wait_for_change, last_etag and the
Metadata-Flavor header, as the metadata server documents it) and a stand-in kubelet pods directory, in which it must
write the checkpoint-now file of the training contract into each trainer pod's `gpuinfra-run` emptyDir, and only
where none is there.

The deadline is worked by hand: the notice's 3,600 s (Compute Engine, Spot VMs page: "one hour advance notice" for
standard VMs with GPUs) less the reserved trainer's stop, 109 s (a 64 s checkpoint window, torchrun's 30 s and the
15 s margin: tests/clouds/test_gcp_jobset.py), is 3,491 s."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import gpuinfra.spec  # noqa: F401  (first: importing Google's spec models before it drops them from the org's accounts)
import pytest
from gpuinfra.graph import Graph, Resource
from helpers import example_graph, graph_for

STACK = "llm-train-gcp"
NOTICE = "llm-train-gcp-maintenance-notice"
EMPTY_DIR = Path("volumes") / "kubernetes.io~empty-dir"


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph(STACK)


def _daemonset(graph: Graph) -> Resource | None:
    found = [d for d in graph.of_type("kubernetes:apps/v1:DaemonSet") if d.inputs["metadata"]["name"] == NOTICE]
    return found[0] if found else None


def _script(graph: Graph) -> str:
    (config,) = [c for c in graph.of_type("kubernetes:core/v1:ConfigMap") if c.inputs["metadata"]["name"] == NOTICE]
    return str(config.inputs["data"]["maintenance-notice"])


def test_a_pod_on_every_gpu_node_on_the_hosts_network(graph: Graph) -> None:
    daemonset = _daemonset(graph)
    assert daemonset is not None and daemonset.inputs["metadata"]["namespace"] == "training"
    pod = daemonset.inputs["spec"]["template"]["spec"]
    assert pod["hostNetwork"] is True and pod["nodeSelector"] == {"cloud.google.com/gke-nodepool": "gpu"}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]
    (container,) = pod["containers"]
    assert container["command"] == ["python3", "/opt/gpuinfra/maintenance-notice"]
    assert container["image"] == "nvcr.io/nvidia/pytorch:25.01-py3"  # the trainer's, with its python3
    (pods,) = [v for v in pod["volumes"] if v["name"] == "pods"]
    assert pods["hostPath"] == {"path": "/var/lib/kubelet/pods", "type": "Directory"}
    (mount,) = [m for m in container["volumeMounts"] if m["name"] == "pods"]
    assert mount["mountPropagation"] == "HostToContainer"
    # It writes into the volume the trainer reads the checkpoint-now file from.
    (template,) = [c for c in graph.of_type("kubernetes:core/v1:ConfigMap") if "jobset.yaml" in c.inputs["data"]]
    assert "- name: gpuinfra-run\n" in template.inputs["data"]["jobset.yaml"]
    assert "\nLEAD_SECONDS = 3491\n" in _script(graph)


def test_spot_nodes_get_no_maintenance_watcher() -> None:
    graph = graph_for(STACK, {"compute.capacity": {"spot": True}, "compute.node_count": 4})
    assert _daemonset(graph) is None


class _Metadata(BaseHTTPRequestHandler):
    """instance/maintenance-event: NONE (ETag e1), then TERMINATE_ON_HOST_MAINTENANCE (e2) from the second poll;
    a poll with the current ETag waits a little (the real one up to timeout_sec) and answers the same."""

    polls: list[dict[str, Any]] = []

    def do_GET(self) -> None:
        query = parse_qs(urlparse(self.path).query)
        self.polls.append({"path": urlparse(self.path).path, "query": query, "flavor": self.headers["Metadata-Flavor"]})
        if self.headers["Metadata-Flavor"] != "Google":
            self.send_response(403)
            self.end_headers()
            return
        etag = query.get("last_etag", ["0"])[0]
        if etag == "e2":
            time.sleep(0.2)
        value, tag = ("NONE", "e1") if etag == "0" else ("TERMINATE_ON_HOST_MAINTENANCE", "e2")
        body = value.encode()
        self.send_response(200)
        self.send_header("ETag", tag)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def metadata() -> Iterator[str]:
    _Metadata.polls = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Metadata)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/computeMetadata/v1/instance/maintenance-event"
    server.shutdown()


def _volume(pods: Path, uid: str, name: str = "gpuinfra-run") -> Path:
    path = pods / uid / EMPTY_DIR / name
    path.mkdir(parents=True)
    return path


def _until(condition: Any, seconds: float = 15) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_the_notice_asks_each_trainer_for_a_checkpoint_once(graph: Graph, tmp_path: Path, metadata: str) -> None:
    python3 = shutil.which("python3")
    assert python3 is not None
    pods = tmp_path / "pods"
    trainer = _volume(pods, "uid-trainer")
    stopping = _volume(pods, "uid-stopping")
    (stopping / "checkpoint-now").write_text("1700000000\n")  # a stop under way wrote its own deadline
    other = _volume(pods, "uid-other", "scratch")
    script = tmp_path / "opt" / "maintenance-notice"
    script.parent.mkdir()
    script.write_text(_script(graph))
    (container,) = _daemonset(graph).inputs["spec"]["template"]["spec"]["containers"]  # type: ignore[union-attr]
    assert container["command"][0] == "python3"
    command = [python3, str(script)]  # the container's command, the script where its ConfigMap puts it
    env = {"GPUINFRA_METADATA_URL": metadata, "GPUINFRA_KUBELET_PODS": str(pods), "PATH": "/usr/bin:/bin"}
    before = int(time.time())
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert _until(lambda: (trainer / "checkpoint-now").exists()), "no checkpoint asked for"
        after = int(time.time())
        deadline = int((trainer / "checkpoint-now").read_text())
        assert before + 3491 <= deadline <= after + 3491
        # A pod that starts during the notice is asked at the next wake of the long poll.
        late = _volume(pods, "uid-late")
        assert _until(lambda: (late / "checkpoint-now").exists()), "the late pod was not asked"
        time.sleep(0.5)
    finally:
        process.terminate()
        out, err = process.communicate(timeout=10)
    assert (stopping / "checkpoint-now").read_text() == "1700000000\n"  # left as it was
    assert list(other.iterdir()) == []
    assert int((trainer / "checkpoint-now").read_text()) == deadline  # written once, not moved on later polls
    assert f"asked {trainer}/checkpoint-now for a checkpoint by {deadline}" in out, err
    assert not any(p.name.endswith(".maintenance") for p in trainer.iterdir())  # written whole, then renamed
    first, second = _Metadata.polls[0], _Metadata.polls[1]
    assert first["path"] == "/computeMetadata/v1/instance/maintenance-event" and first["flavor"] == "Google"
    assert first["query"]["wait_for_change"] == ["true"] and second["query"]["last_etag"] == ["e1"]


def test_it_keeps_asking_while_the_metadata_server_is_away(graph: Graph, tmp_path: Path) -> None:
    python3 = shutil.which("python3")
    assert python3 is not None
    script = tmp_path / "maintenance-notice"
    script.write_text(_script(graph))
    env = {"GPUINFRA_METADATA_URL": "http://127.0.0.1:9/", "GPUINFRA_KUBELET_PODS": str(tmp_path), "PATH": "/usr/bin"}
    process = subprocess.Popen([python3, str(script)], env=env, stdout=subprocess.PIPE, text=True)
    time.sleep(1.5)
    assert process.poll() is None  # still running: a DaemonSet pod must not crash-loop on a transient error
    process.terminate()
    out, _ = process.communicate(timeout=10)
    assert "the metadata server did not answer" in out
