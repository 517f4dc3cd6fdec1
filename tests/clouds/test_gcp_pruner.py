"""The checkpoint pruner on GKE (llm-train-gcp): the CronJob EKS and on premises run, over the run directories on
Managed Lustre through the trainer's claim, and its container command run as the kubelet runs it (bash, the pod's
environment, the script from its ConfigMap) against a checkpoint tree with GKE's Lustre mount in the mount table
(a Managed Lustre CSI mount's source is `<ip>@tcp:/<filesystem>`: the GKE docs' `ip` and `filesystem` attributes),
and against the real mount table where the path is a tmpfs. The example keeps 3 (`keep_last`); the outcome is
worked by hand below."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import gpuinfra.spec  # noqa: F401  (first: importing Google's spec models before it drops them from the org's accounts)
import pytest
from components.test_prune_checkpoints import _checkpoint
from gpuinfra.graph import Graph, Resource
from gpuinfra.pulumi.components.training.mount_check import MOUNTS
from helpers import example_graph, graph_for
from slurm_local import SYSTEMD_PATH

STACK = "llm-train-gcp"


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph(STACK)


def _cronjob(graph: Graph) -> Resource:
    (cronjob,) = graph.of_type("kubernetes:batch/v1:CronJob")
    return cronjob


def _pod(graph: Graph) -> dict[str, Any]:
    return dict(_cronjob(graph).inputs["spec"]["jobTemplate"]["spec"]["template"]["spec"])


def _script(graph: Graph) -> str:
    (config,) = [c for c in graph.of_type("kubernetes:core/v1:ConfigMap") if "prune-checkpoints" in c.inputs["data"]]
    return str(config.inputs["data"]["prune-checkpoints"])


def test_the_cronjob_prunes_the_trainers_lustre_outside_kueue(graph: Graph) -> None:
    cronjob = _cronjob(graph)
    assert cronjob.inputs["metadata"]["namespace"] == "training"
    assert "kueue.x-k8s.io/queue-name" not in cronjob.inputs["metadata"].get("labels", {})
    assert cronjob.inputs["spec"]["schedule"] == "*/15 * * * *"
    pod = _pod(graph)
    (container,) = pod["containers"]
    assert container["command"] == ["/bin/bash", "/opt/gpuinfra/prune-checkpoints"]
    assert container["image"] == "nvcr.io/nvidia/pytorch:25.01-py3"  # the trainer's (bash, find, coreutils)
    (lustre,) = [v for v in pod["volumes"] if v["name"] == "lustre"]
    # Lustre's claim, by name: /home's Filestore claim sits beside it.
    (pvc,) = [c for c in graph.of_type("kubernetes:core/v1:PersistentVolumeClaim") if c.name.endswith("-lustre-pvc")]
    assert lustre["persistentVolumeClaim"]["claimName"] == pvc.inputs["metadata"]["name"]
    assert {m["name"]: m["mountPath"] for m in container["volumeMounts"]}["lustre"] == "/lustre"
    # No GPU toleration: it runs on the system nodes, never holding a GPU node.
    assert "tolerations" not in pod


def test_the_script_prunes_the_trainers_checkpoint_root_and_checks_the_mount(graph: Graph) -> None:
    script = _script(graph)
    assert "\nroot=/lustre/checkpoints\nkeep=3\n" in script
    assert "-v m=/lustre -v f=:/train" in script  # the example's Lustre, by file system name
    assert "aws " not in script and "bucket=" not in script  # Managed Lustre exports nothing: no copies to tag


def _tree(mount: Path) -> Path:
    """One run, seven checkpoints: step-100..600 complete (step-200 a milestone), step-700 being written."""
    run = mount / "checkpoints" / "llama-70b"
    for i, step in enumerate((100, 200, 300, 400, 500, 600)):
        _checkpoint(run, f"step-{step}", 1000 + i, milestone=step == 200)
    _checkpoint(run, "step-700", 2000, complete=False)
    return run


def _as_the_kubelet_runs_it(graph: Graph, tmp_path: Path, mount: Path, table: Path | None) -> Path:
    """The ConfigMap's script where the pod sees it, /lustre moved to `mount` (and /proc/mounts to `table`)."""
    text = _script(graph).replace("/lustre", str(mount))
    if table is not None:
        text = text.replace(f" {MOUNTS} ||", f" {table} ||")
    path = tmp_path / "opt" / "prune-checkpoints"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


def _env(graph: Graph) -> list[str]:
    (container,) = _pod(graph)["containers"]
    return [f"{e['name']}={e['value']}" for e in container["env"]] + [f"PATH={SYSTEMD_PATH}"]


def test_on_gkes_lustre_it_keeps_the_newest_three_and_the_milestones(graph: Graph, tmp_path: Path) -> None:
    mount = tmp_path / "lustre"
    run = _tree(mount)
    table = tmp_path / "mounts"
    table.write_text(f"10.130.0.5@tcp:/train {mount} lustre rw,flock,user_xattr 0 0\n")
    script = _as_the_kubelet_runs_it(graph, tmp_path, mount, table)
    (container,) = _pod(graph)["containers"]
    command = [container["command"][0], str(script)]
    result = subprocess.run(["/usr/bin/env", "-i", *_env(graph), *command], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    # Newest three complete by marker time: step-600, 500, 400; step-200 a milestone; step-700 unfinished.
    assert sorted(p.name for p in run.iterdir()) == ["step-200", "step-400", "step-500", "step-600", "step-700"]
    assert f"pruned {run}/step-100" in result.stdout and f"pruned {run}/step-300" in result.stdout


def test_another_file_system_at_the_path_is_refused(graph: Graph, tmp_path: Path) -> None:
    mount = tmp_path / "lustre"
    run = _tree(mount)
    table = tmp_path / "mounts"
    table.write_text(f"10.130.0.5@tcp:/scratch {mount} lustre rw 0 0\n")  # a Lustre, not the stack's `train`
    script = _as_the_kubelet_runs_it(graph, tmp_path, mount, table)
    result = subprocess.run(
        ["/usr/bin/env", "-i", *_env(graph), "/bin/bash", str(script)], capture_output=True, text=True
    )
    assert result.returncode == 2 and f"{mount} is not the Lustre file system :/train" in result.stderr
    assert len(list(run.iterdir())) == 7


def test_an_unmounted_lustre_is_refused_by_the_real_mount_table(graph: Graph, tmp_path: Path) -> None:
    """The CSI mount missing: the path a tmpfs in a private mount namespace, the kernel's /proc/mounts read."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        (pytest.fail if os.environ.get("CI") else pytest.skip)("needs root and unshare for a private mount namespace")
    mount = tmp_path / "lustre"
    mount.mkdir()
    script = _as_the_kubelet_runs_it(graph, tmp_path, mount, None)
    run = f"{mount}/checkpoints/llama"
    setup = (
        f"mount --make-rprivate / && mount -t tmpfs gpuinfra-test {mount} && mkdir -p {run}/step-0 {run}/step-1 "
        f"&& touch -d @1000 {run}/step-0/COMPLETE && touch -d @1001 {run}/step-1/COMPLETE"
    )
    result = subprocess.run(
        [
            *("unshare", "--mount", "/bin/sh", "-c", f'{setup} && "$@"; rc=$?; ls {run}; exit $rc', "sh"),
            *("/usr/bin/env", "-i", *_env(graph), "/bin/bash", str(script)),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "refusing: no Lustre under" in result.stderr
    assert result.stdout.split() == ["step-0", "step-1"]


def test_checkpoints_elsewhere_have_no_lustre_pruner() -> None:
    graph = graph_for(STACK, {"checkpointing.target": "gcs"})
    assert graph.of_type("kubernetes:batch/v1:CronJob") == []
