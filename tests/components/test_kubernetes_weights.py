"""The server pod's `verify` init container: its script, taken from the previewed Deployment, runs as the kubelet
runs it (`bash -c <script>` in the server image: bash and python3, the container's env, a non-root user) over a
weights directory like the one the `weights` init container syncs, against the registry's manifest contract
({"files": [{"path", "size", "sha256"}]}, the EC2 prefetch's). The weights root is the pod's /weights, moved to a
temporary directory (the only change to the script). And shellcheck passes on it."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from gpuinfra.graph import Graph
from helpers import example_graph
from node_fakes import shellcheck

FILES = {"model-00001-of-00002.safetensors": b"\x01" * 4096, "config.json": b'{"architectures": ["Llama"]}'}


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph("chat-serve-k8s")


def _verify(graph: Graph) -> dict[str, Any]:
    deployment = graph.of_type("kubernetes:apps/v1:Deployment")[0]
    (verify,) = [c for c in deployment.inputs["spec"]["template"]["spec"]["initContainers"] if c["name"] == "verify"]
    return verify


def _weights(root: Path, files: dict[str, bytes], manifest: bool = True) -> None:
    root.mkdir()
    for name, data in files.items():
        (root / name).write_bytes(data)
    if manifest:
        entries = [{"path": n, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()} for n, d in FILES.items()]
        (root / "manifest.json").write_text(json.dumps({"files": entries}))


def _run(graph: Graph, root: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    verify = _verify(graph)
    command = list(verify["command"])
    assert command[:2] == ["bash", "-c"]
    script = command[2]
    assert script.count("ROOT=/weights\n") == 1
    command[2] = script.replace("ROOT=/weights\n", f"ROOT={root}\n")
    env = {e["name"]: e["value"].replace("/cache", str(tmp_path)) for e in verify["env"]}
    env["PATH"] = "/usr/bin:/bin"
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)


def test_weights_that_match_the_manifest_pass(graph: Graph, tmp_path: Path) -> None:
    _weights(tmp_path / "w", FILES)
    result = _run(graph, tmp_path / "w", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "2 files match manifest.json" in result.stdout


def test_an_altered_file_of_the_same_size_fails(graph: Graph, tmp_path: Path) -> None:
    _weights(tmp_path / "w", {**FILES, "model-00001-of-00002.safetensors": b"\x02" * 4096})
    result = _run(graph, tmp_path / "w", tmp_path)
    assert result.returncode != 0
    assert "model-00001-of-00002.safetensors: sha256 differs from the manifest" in result.stderr


def test_a_truncated_file_fails(graph: Graph, tmp_path: Path) -> None:
    _weights(tmp_path / "w", {**FILES, "model-00001-of-00002.safetensors": b"\x01" * 100})
    result = _run(graph, tmp_path / "w", tmp_path)
    assert result.returncode != 0 and "size differs from the manifest" in result.stderr


def test_a_file_not_downloaded_fails(graph: Graph, tmp_path: Path) -> None:
    _weights(tmp_path / "w", {"config.json": FILES["config.json"]})
    result = _run(graph, tmp_path / "w", tmp_path)
    assert result.returncode != 0 and "listed in the manifest, not downloaded" in result.stderr


def test_no_manifest_means_the_upload_is_not_finished(graph: Graph, tmp_path: Path) -> None:
    """The upload writes manifest.json last: without it the model is not (fully) there, and the server must not
    start on what is."""
    _weights(tmp_path / "w", FILES, manifest=False)
    result = _run(graph, tmp_path / "w", tmp_path)
    assert result.returncode == 1 and "no manifest.json" in result.stderr


def test_the_verify_script_passes_shellcheck(graph: Graph, tmp_path: Path) -> None:
    result = shellcheck(_verify(graph)["command"][2], tmp_path)
    assert result.returncode == 0, result.stdout
