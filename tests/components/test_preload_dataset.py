"""The login node's dataset preload (gpuinfra-preload-dataset.service), run as systemd runs it: root, systemd's
default PATH, in a private mount namespace whose /usr/local/bin holds a stand-in `lfs`. The stand-in keeps each file's
HSM state as Lustre reports it: `hsm_restore` queues a restore that is still running at the next `hsm_action` (RESTORE)
and done after it (NOOP, no longer `released` in `hsm_state`), except for files the test marks as refused by S3."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from gpuinfra.pulumi.components.training.bootstrap import (
    DATASET_READY_VAR,
    PRELOAD,
    LustreMount,
    NodeRole,
    node_cloud_config,
    preload_dataset,
)
from helpers import cloud_config
from slurm_local import run_as_a_service

LFS = r"""#!/bin/bash
# Stand-in lfs: records each call, keeps per-file HSM state in {state}.
cmd=$1; shift
for f in "$@"; do
  key={state}/$(echo "$f" | md5sum | cut -c1-32)
  echo "$cmd $f" >> {calls}
  case "$cmd" in
    hsm_restore) [ -e "$f.refused" ] || echo 1 > "$key.restoring" ;;
    hsm_action)
      if [ -e "$key.restoring" ]; then
        n=$(cat "$key.restoring")
        if [ "$n" -gt 0 ]; then echo "$f: RESTORE running (from 0 to EOF)"; echo $((n - 1)) > "$key.restoring"
        else echo "$f: NOOP"; rm "$key.restoring"; touch "$key.restored"; fi
      else echo "$f: NOOP"; fi ;;
    hsm_state)
      if [ -e "$key.restored" ]; then echo "$f: (0x00000009) exists archived, archive_id:1"
      else echo "$f: (0x0000000d) released exists archived, archive_id:1"; fi ;;
  esac
done
"""


def _run(
    tmp_path: Path, files: list[str], refused: tuple[str, ...] = ()
) -> tuple[subprocess.CompletedProcess[str], str]:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        (pytest.fail if os.environ.get("CI") else pytest.skip)("needs root and unshare (a private mount namespace)")
    fsx = tmp_path / "fsx"
    dataset = fsx / "datasets"
    for name in files:
        (dataset / name).parent.mkdir(parents=True, exist_ok=True)
        (dataset / name).write_text("")
    for name in refused:
        (dataset / f"{name}.refused").write_text("")  # a stand-in flag beside the file, itself restorable
    state, calls = tmp_path / "state", tmp_path / "calls"
    state.mkdir()
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "lfs").write_text(LFS.format(state=state, calls=calls))
    (tools / "lfs").chmod(0o755)
    script = tmp_path / "preload-dataset"
    script.write_text(preload_dataset("llm-train", LustreMount("fs", "m", str(fsx), preload=True), poll_seconds=0))
    setup = f"mount -t tmpfs t /usr/local/bin && cp {tools}/lfs /usr/local/bin/"
    result = run_as_a_service(setup, ["/bin/bash", str(script)], timeout=60)
    return result, calls.read_text() if calls.exists() else ""


def test_every_file_is_restored_then_the_marker_written(tmp_path: Path) -> None:
    files = ["shard-000.tar", "shard-001.tar", "deep/dir/shard-002.tar"]
    result, calls = _run(tmp_path, files)
    assert result.returncode == 0, result.stderr
    paths = [str(tmp_path / "fsx/datasets" / f) for f in files]
    assert sorted(line.split(" ", 1)[1] for line in calls.splitlines() if line.startswith("hsm_restore ")) == sorted(
        paths
    )
    # Every restore is requested before the first progress poll (xargs -P may order them any way).
    assert all(line.startswith("hsm_restore ") for line in calls.splitlines()[: len(files)])
    assert "3 files still restoring" in result.stdout
    assert sum(line.startswith("hsm_state ") for line in calls.splitlines()) == len(files)
    marker = tmp_path / "fsx/.gpuinfra/dataset-ready"
    assert marker.read_text().startswith("20")


def test_a_preloaded_dataset_is_not_restored_again(tmp_path: Path) -> None:
    (tmp_path / "fsx/.gpuinfra").mkdir(parents=True)
    (tmp_path / "fsx/.gpuinfra/dataset-ready").write_text("2026-12-05T06:00:00Z\n")
    result, calls = _run(tmp_path, ["shard-000.tar"])
    assert result.returncode == 0 and calls == ""


def test_files_left_in_s3_fail_the_unit_without_a_marker(tmp_path: Path) -> None:
    result, _ = _run(tmp_path, ["shard-000.tar", "shard-001.tar"], refused=("shard-001.tar",))
    assert result.returncode == 1
    assert "1 files of" in result.stderr and "still only in S3" in result.stderr
    assert not (tmp_path / "fsx/.gpuinfra/dataset-ready").exists()


def test_only_the_login_node_preloads_and_every_job_is_told_the_marker() -> None:
    lustre = LustreMount("fs-1.fsx.us-east-1.amazonaws.com", "abcd1234", "/fsx", preload=True)
    login = cloud_config(node_cloud_config("llm-train", NodeRole("login", "m7i.2xlarge"), {}, lustre, "25.05"))
    compute = cloud_config(
        node_cloud_config("llm-train", NodeRole("compute", "p5.48xlarge", gpus=8, efa=32), {}, lustre, "25.05")
    )
    unit = "gpuinfra-preload-dataset.service"
    assert ["systemctl", "enable", "--now", unit] in login["runcmd"]
    assert not any(unit in cmd for cmd in compute["runcmd"])
    assert PRELOAD in {f["path"] for f in login["write_files"]} - {f["path"] for f in compute["write_files"]}
    (service,) = [f for f in login["write_files"] if f["path"].endswith(unit)]
    # exec, not oneshot: `enable --now` in runcmd returns at once, and a reboot's multi-user.target does not wait.
    assert "Type=exec" in service["content"] and "RequiresMountsFor=/fsx/datasets" in service["content"]
    # Jobs run on compute nodes only (the login group is in no queue): their task prolog's defaults carry the marker.
    (env,) = [f for f in compute["write_files"] if f["path"] == "/etc/gpuinfra/job-env.sh"]
    assert f"export {DATASET_READY_VAR}=/fsx/.gpuinfra/dataset-ready" in env["content"]


def test_no_preload_no_unit() -> None:
    lustre = LustreMount("fs-1.fsx.us-east-1.amazonaws.com", "abcd1234", "/fsx")
    login = cloud_config(node_cloud_config("llm-train", NodeRole("login", "m7i.2xlarge"), {}, lustre, "25.05"))
    assert not any("preload" in f["path"] for f in login["write_files"])
    assert not any("DATASET_READY" in f["content"] for f in login["write_files"])
