"""Nothing writes or prunes checkpoints on a node's root disk (the review's finding T5): the on-premises trainer pods'
init container and the checkpoint pruner (every substrate) check that the checkpoint file system is the Lustre mount,
run here against a real mount table where the path is a plain directory or another file system (tmpfs, in a private
mount namespace), and against mount tables with the site's Lustre in them (the awk program reads the file it is
given; the kernel's /proc/mounts format: proc(5))."""

from __future__ import annotations

import base64
import email
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpuinfra.pulumi.components.training.bootstrap import Retention, prune_checkpoints
from gpuinfra.pulumi.components.training.mount_check import MOUNTS
from helpers import cloud_config, example_graph
from slurm_local import SYSTEMD_PATH

CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def _needs_root() -> None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        (pytest.fail if os.environ.get("CI") else pytest.skip)("needs root and unshare for a private mount namespace")


def _in_namespace(setup: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """`argv` with systemd's PATH and nothing else, after `setup` (as root) in a private mount namespace."""
    return subprocess.run(
        [
            *("unshare", "--mount", "/bin/sh", "-c", f'mount --make-rprivate / && {setup} && exec "$@"', "sh"),
            *("/usr/bin/env", "-i", f"PATH={SYSTEMD_PATH}", *argv),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _tree(mount: Path) -> Path:
    """A run with three complete checkpoints under `mount`/checkpoints: keep_last 1 would prune two."""
    run = mount / "checkpoints" / "llama"
    for i in range(3):
        (run / f"step-{i}").mkdir(parents=True, exist_ok=True)
        (run / f"step-{i}" / "COMPLETE").write_text("")
        os.utime(run / f"step-{i}" / "COMPLETE", (1000 + i, 1000 + i))
    return run


def _pruner(mount: Path, tmp_path: Path, fs_name: str = "scratch") -> Path:
    retention = Retention(
        str(mount / "checkpoints"), None, "", 1, "MILESTONE", 14, mount_path=str(mount), fs_name=fs_name
    )
    path = tmp_path / "prune-checkpoints"
    path.write_text(prune_checkpoints("llm-train-onprem", retention))
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("mounted", ["plain-directory", "tmpfs"])
def test_the_pruner_refuses_a_checkpoint_root_that_is_not_on_lustre(tmp_path: Path, mounted: str) -> None:
    _needs_root()
    mount = tmp_path / "lustre"
    mount.mkdir()
    setup = f"mount -t tmpfs gpuinfra-test {mount}" if mounted == "tmpfs" else "true"
    script = _pruner(mount, tmp_path)
    # The tree is made inside the namespace (on the tmpfs, where there is one), then the pruner runs over it.
    make = f"mkdir -p {mount}/checkpoints/llama/step-0 {mount}/checkpoints/llama/step-1"
    run = f"{mount}/checkpoints/llama"
    marks = f"touch -d @1000 {run}/step-0/COMPLETE && touch -d @1001 {run}/step-1/COMPLETE"
    result = _in_namespace(
        f"{setup} && {make} && {marks}", "/bin/bash", "-c", f"{script}; rc=$?; ls {mount}/checkpoints/llama; exit $rc"
    )
    assert result.returncode == 2, result.stderr
    assert f"{mount} is not the Lustre file system :/scratch" in result.stderr
    assert "refusing" in result.stderr and result.stdout.split() == ["step-0", "step-1"]  # nothing pruned


def test_the_pruner_prunes_when_the_site_s_lustre_is_mounted_there(tmp_path: Path) -> None:
    """The same script, reading a mount table with the site's Lustre at the path: it prunes as the rules say."""
    mount = tmp_path / "lustre"
    run = _tree(mount)
    table = tmp_path / "mounts"
    table.write_text(f"10.40.0.11@o2ib,10.40.0.12@o2ib:/scratch {mount} lustre rw,flock 0 0\n")
    script = _pruner(mount, tmp_path)
    script.write_text(script.read_text().replace(f" {MOUNTS} ||", f" {table} ||"))
    result = subprocess.run(["/usr/bin/env", "-i", f"PATH={SYSTEMD_PATH}", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in run.iterdir()) == ["step-2"]
    table.write_text(f"10.40.0.11@o2ib:/scratch2 {mount} lustre rw 0 0\n")  # another site file system
    _tree(mount)
    again = subprocess.run(["/usr/bin/env", "-i", f"PATH={SYSTEMD_PATH}", str(script)], capture_output=True, text=True)
    assert again.returncode == 2 and sorted(p.name for p in run.iterdir()) == ["step-0", "step-1", "step-2"]


def _login_pruner() -> str:
    """The pruner the PCS login node runs, from its launch template's user data."""
    (lt,) = [r for r in example_graph("llm-train").of_type(LAUNCH_TEMPLATE) if r.name.endswith("-login-lt")]
    text = base64.b64decode(lt.inputs["userData"]).decode()
    part = next(p for p in email.message_from_string(text).walk() if p.get_content_type() == "text/cloud-config")
    return {f["path"]: f["content"] for f in cloud_config(part.get_payload())["write_files"]}[
        "/opt/gpuinfra/prune-checkpoints"
    ]


def _onprem_pod() -> dict[str, Any]:
    graph = example_graph("llm-train-onprem")
    (template,) = [r for r in graph.of_type(CONFIG_MAP) if r.name.endswith("-job-template")]
    jobset = yaml.safe_load(template.inputs["data"]["jobset.yaml"])
    return jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]


def test_an_onprem_pod_fails_in_its_init_container_before_the_trainer_writes(tmp_path: Path) -> None:
    """The generated init container's command, run where the site path is a tmpfs (the Lustre client's mount is
    missing): it exits 1 naming the path, so the pod fails (restartPolicy Never) and the trainer never starts."""
    _needs_root()
    pod = _onprem_pod()
    (check,) = pod["initContainers"]
    assert pod["restartPolicy"] == "Never" and check["command"] == ["awk"]
    mount = tmp_path / "lustre"
    mount.mkdir()
    args = [a.replace("m=/lustre", f"m={mount}") for a in check["args"]]
    result = _in_namespace(f"mount -t tmpfs gpuinfra-test {mount}", "awk", *args)
    assert result.returncode == 1 and f"{mount} is not the Lustre file system :/scratch" in result.stderr


@pytest.mark.parametrize(
    ("stack", "mount", "fs"),
    [("llm-train", "/fsx", ""), ("llm-train-eks", "/fsx", ""), ("llm-train-onprem", "/lustre", ":/scratch")],
)
def test_every_generated_pruner_checks_its_mount_first(stack: str, mount: str, fs: str) -> None:
    if stack == "llm-train":
        script = _login_pruner()
    else:
        (cm,) = [r for r in example_graph(stack).of_type(CONFIG_MAP) if r.name.endswith("-pruner-script")]
        script = cm.inputs["data"]["prune-checkpoints"]
    check = script.index(f"awk -v m={mount} -v f={fs} ")
    assert check < script.index("for run in"), "the check comes before any pruning"
