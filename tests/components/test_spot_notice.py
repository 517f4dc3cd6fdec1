"""The Batch spot notice (review finding T9): the host script as systemd runs it (its default PATH, nothing else)
against a fake IMDSv2 (tests/node_fakes.py), the user data that installs it run as cloud-init runs it (root, in a
private mount namespace whose /etc and /usr/local/sbin are the test's), and the job definition's read-only view of
the notice directory."""

from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from email import message_from_string
from pathlib import Path
from typing import Any

import pytest
from gpuinfra.graph import Graph
from gpuinfra.pulumi.components.finetune.batch import user_data
from gpuinfra.pulumi.components.finetune.spot_notice import MARGIN_SECONDS, SCRIPT, UNIT, spot_notice
from gpuinfra.pulumi.components.training.bootstrap import CHECKPOINT_NOW_FILE
from helpers import example_graph
from node_fakes import SYSTEMD_PATH, Imds, serving, shellcheck

JOB = "aws:batch/jobDefinition:JobDefinition"
NOTICE_TIME = "2027-01-14T10:32:00Z"


@pytest.fixture
def imds() -> Iterator[tuple[Imds, str]]:
    state = Imds()
    with serving(state.handler()) as url:
        yield state, url


def _start(tmp_path: Path, url: str) -> tuple[subprocess.Popen[str], Path]:
    now_file = tmp_path / "notice" / "checkpoint-now"
    script = tmp_path / "spot-notice"
    script.write_text(spot_notice("llm-finetune", imds=url, now_file=str(now_file), poll_seconds=1))
    script.chmod(0o755)
    process = subprocess.Popen(
        ["/usr/bin/env", "-i", f"PATH={SYSTEMD_PATH}", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return process, now_file


def _wait(process: subprocess.Popen[str], seconds: float = 15) -> tuple[str, str]:
    try:
        return process.communicate(timeout=seconds)
    finally:
        process.kill()


def test_a_notice_writes_the_checkpoint_deadline_and_the_job_keeps_running(
    tmp_path: Path, imds: tuple[Imds, str]
) -> None:
    """Nothing before the notice; then the file holds the notice's time less the margin (epoch seconds, by hand from
    the ISO time), and the script ends: it signals nothing, so Batch sees the host, not the job, go."""
    state, url = imds
    process, now_file = _start(tmp_path, url)
    time.sleep(2.5)
    assert process.poll() is None and not now_file.exists()
    assert "PUT /latest/api/token" in state.requests
    assert "GET /latest/meta-data/spot/instance-action" in state.requests
    state.spot_action = json.dumps({"action": "terminate", "time": NOTICE_TIME})
    _, err = _wait(process)
    assert process.returncode == 0, err
    at = datetime.datetime(2027, 1, 14, 10, 32, tzinfo=datetime.UTC)
    assert now_file.read_text() == f"{int(at.timestamp()) - MARGIN_SECONDS}\n"
    assert f"spot interruption notice ({NOTICE_TIME})" in err


def test_a_notice_without_a_time_gives_the_two_minutes_from_now(tmp_path: Path, imds: tuple[Imds, str]) -> None:
    state, url = imds
    state.spot_action = json.dumps({"action": "terminate"})
    before = int(time.time())
    process, now_file = _start(tmp_path, url)
    _, err = _wait(process)
    after = int(time.time())
    assert process.returncode == 0, err
    deadline = int(now_file.read_text())
    assert before + 120 - MARGIN_SECONDS <= deadline <= after + 120 - MARGIN_SECONDS


def test_no_imds_token_is_said_and_polling_goes_on(tmp_path: Path) -> None:
    process, now_file = _start(tmp_path, "http://127.0.0.1:9")  # nothing listens on the discard port
    time.sleep(2.5)
    alive = process.poll() is None
    process.kill()
    _, err = process.communicate(timeout=5)
    assert alive and not now_file.exists()
    assert "no IMDSv2 token from http://127.0.0.1:9" in err


def test_the_script_passes_shellcheck(tmp_path: Path) -> None:
    result = shellcheck(spot_notice("llm-finetune"), tmp_path)
    assert result.returncode == 0, result.stdout


def test_the_user_data_installs_and_starts_it(tmp_path: Path) -> None:
    """The user data's shell script as cloud-init runs it, as root, over the test's /etc and /usr/local/sbin (a
    private mount namespace), with a systemctl that records its arguments: the installed script is the rendered one
    byte for byte (the quoted heredoc expands nothing), the unit runs it, and it is enabled without blocking boot."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        (pytest.fail if os.environ.get("CI") else pytest.skip)("needs root and unshare (a private mount namespace)")
    (part,) = message_from_string(user_data("llm-finetune")).get_payload()
    script = tmp_path / "user-data.sh"
    script.write_text(part.get_payload(decode=True).decode())
    bin_dir, calls = tmp_path / "bin", tmp_path / "systemctl.calls"
    bin_dir.mkdir()
    (bin_dir / "systemctl").write_text(f'#!/bin/sh\necho "$*" >> {calls}\n')
    (bin_dir / "systemctl").chmod(0o755)
    etc, work, sbin = tmp_path / "etc-upper", tmp_path / "etc-work", tmp_path / "sbin"
    for folder in (etc, work, sbin):
        folder.mkdir()
    setup = (
        "mount --make-rprivate / && "
        f"mount -t overlay overlay -o lowerdir=/etc,upperdir={etc},workdir={work} /etc && "
        f"mkdir -p /etc/ecs /etc/systemd/system && mount --bind {sbin} /usr/local/sbin && "
        f'exec env -i PATH={bin_dir}:{SYSTEMD_PATH} bash "$@"'
    )
    result = subprocess.run(
        ["unshare", "--mount", "sh", "-c", setup, "cloud-init", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    installed = sbin / Path(SCRIPT).name
    assert installed.read_text() == spot_notice("llm-finetune")
    assert os.access(installed, os.X_OK)
    unit = (etc / "systemd" / "system" / UNIT).read_text()
    assert f"ExecStart={SCRIPT}\n" in unit and "WantedBy=multi-user.target" in unit
    assert calls.read_text().splitlines() == ["daemon-reload", f"enable --now --no-block {UNIT}"]
    assert "ECS_ENABLE_SPOT_INSTANCE_DRAINING=true" in (etc / "ecs" / "ecs.config").read_text()


@pytest.fixture(scope="module")
def container() -> dict[str, Any]:
    graph: Graph = example_graph("llm-finetune")
    return json.loads(graph.one(JOB).inputs["containerProperties"])


def test_the_job_reads_the_notice_directory_and_knows_the_file(container: dict[str, Any]) -> None:
    directory = str(Path(CHECKPOINT_NOW_FILE).parent)
    (volume,) = container["volumes"]
    assert volume["host"] == {"sourcePath": directory}
    assert container["mountPoints"] == [{"sourceVolume": volume["name"], "containerPath": directory, "readOnly": True}]
    env = {e["name"]: e["value"] for e in container["environment"]}
    assert env["GPUINFRA_CHECKPOINT_NOW_FILE"] == CHECKPOINT_NOW_FILE
