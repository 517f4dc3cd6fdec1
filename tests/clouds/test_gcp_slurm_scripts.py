"""The scripts the managed Slurm path hands Cluster Director, run where they run: the Prolog and Epilog under a
real slurmd (a one-node cluster on localhost: tests/slurm_local.py), as root before and after each job on a node;
the startup script's profile in a login shell, as sbatch then carries it to the job; shellcheck over all four.

Lustre and Filestore stand-ins are directories bind-mounted onto themselves (so `mountpoint` sees a mount, as it
would see the real clients' mounts), or left plain (an unmounted client: the Prolog must drain the node)."""

from __future__ import annotations

import os
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import gpuinfra.spec  # noqa: F401  (first: importing Google's spec models before it drops them from the org's accounts)
import pytest
from gpuinfra.clouds.gcp.pulumi.training.slurm import PROFILE, SlurmScripts, slurm_scripts
from gpuinfra.pulumi.components.training.bootstrap import CHECKPOINT_NOW_FILE
from helpers import checked
from node_fakes import shellcheck
from slurm_local import PARTITION, slurm_cluster
from slurm_local import SYSTEMD_PATH as SYSTEMD

STACK = "llm-train-gcp-slurm"
VERSION = "25.05"


def _scripts(lustre: Path, home: Path, now_file: Path) -> SlurmScripts:
    result = checked(STACK, {"lustre.mount_path": str(lustre), "filestore.mount_path": str(home)})
    found = slurm_scripts(result.inputs.spec, result.plan)  # type: ignore[arg-type]
    return SlurmScripts(
        *(
            text.replace(CHECKPOINT_NOW_FILE, str(now_file))
            for text in (found.prolog, found.epilog, found.node_startup, found.login_startup)
        )
    )


def test_every_script_passes_shellcheck(tmp_path: Path) -> None:
    scripts = slurm_scripts(checked(STACK).inputs.spec, checked(STACK).plan)  # type: ignore[arg-type]
    for name in ("prolog", "epilog", "node_startup", "login_startup"):
        result = shellcheck(getattr(scripts, name), tmp_path)
        assert result.returncode == 0, f"{name}:\n{result.stdout}"


def test_the_profile_gives_jobs_the_contract_and_keeps_what_the_user_set(tmp_path: Path) -> None:
    """The startup script writes the profile; a login shell sources it; a variable the user exported first wins."""
    profile = tmp_path / "profile.d" / "gpuinfra-checkpoint.sh"
    text = slurm_scripts(checked(STACK).inputs.spec, checked(STACK).plan).login_startup  # type: ignore[arg-type]
    script = tmp_path / "startup.sh"
    script.write_text(text.replace(PROFILE, str(profile)))
    subprocess.run(["bash", str(script)], check=True, timeout=30)
    assert stat.S_IMODE(profile.stat().st_mode) == 0o644
    show = f". {profile}; env"
    env = dict(
        line.split("=", 1)
        for line in subprocess.run(
            ["bash", "-c", show], capture_output=True, text=True, check=True, env={"PATH": os.environ["PATH"]}
        ).stdout.splitlines()
        if "=" in line
    )
    # the spec's checkpointing: Lustre at /lustre, every 30 minutes, the newest 3 kept
    assert env["GPUINFRA_CHECKPOINT_ROOT"] == "/lustre/checkpoints"
    assert env["GPUINFRA_CHECKPOINT_INTERVAL_SECONDS"] == str(30 * 60)
    assert env["GPUINFRA_CHECKPOINT_KEEP_LAST"] == "3"
    assert env["GPUINFRA_CHECKPOINT_NOW_FILE"] == CHECKPOINT_NOW_FILE
    own = subprocess.run(
        ["bash", "-c", f"export GPUINFRA_CHECKPOINT_ROOT=/lustre/mine; {show}"],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ["PATH"]},
    ).stdout
    assert "GPUINFRA_CHECKPOINT_ROOT=/lustre/mine" in own.splitlines()


@pytest.fixture
def mounts(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """Two directories bind-mounted onto themselves: stand-ins for the Lustre and Filestore clients' mounts."""
    lustre, home = tmp_path / "lustre", tmp_path / "home"
    for path in (lustre, home):
        path.mkdir()
        subprocess.run(["mount", "--bind", str(path), str(path)], check=True)
    try:
        yield lustre, home
    finally:
        for path in (lustre, home):
            subprocess.run(["umount", str(path)], check=False)


def _conf(tmp_path: Path, scripts: SlurmScripts) -> str:
    prolog, epilog = tmp_path / "prolog", tmp_path / "epilog"
    for path, text in ((prolog, scripts.prolog), (epilog, scripts.epilog)):
        path.write_text(text)
        path.chmod(0o755)
    return f"Prolog={prolog}\nEpilog={epilog}\n"


def test_the_prolog_makes_the_checkpoint_root_and_clears_a_stale_request(
    tmp_path: Path, mounts: tuple[Path, Path]
) -> None:
    lustre, home = mounts
    now = tmp_path / "run" / "checkpoint-now"
    now.parent.mkdir()
    now.write_text("1\n")  # left by an earlier job
    scripts = _scripts(lustre, home, now)
    with slurm_cluster(tmp_path / "slurm", VERSION, _conf(tmp_path, scripts)) as cluster:
        cluster.wait_for(lambda: "IDLE" in cluster.node().get("State", ""), "the node to be idle")
        # the job finds no request of the earlier job's, then makes one of its own
        result = cluster.run(
            "srun", "-p", PARTITION, "/bin/sh", "-c", f"test ! -e {now} && echo 2 > {now}", check=False
        )
        assert result.returncode == 0, result.stderr + cluster.logs()
        root = lustre / "checkpoints"
        assert stat.S_IMODE(root.stat().st_mode) == 0o1777  # every user's runs; each removable by its owner only
        cluster.wait_for(lambda: not now.exists(), "the Epilog to remove the job's request")


def test_an_unmounted_file_system_drains_the_node(tmp_path: Path, mounts: tuple[Path, Path]) -> None:
    """Lustre's client did not mount: /lustre is a plain directory on the boot disk, and the Prolog refuses it."""
    _, home = mounts
    plain = tmp_path / "unmounted"
    plain.mkdir()
    scripts = _scripts(plain, home, tmp_path / "checkpoint-now")
    with slurm_cluster(tmp_path / "slurm", VERSION, _conf(tmp_path, scripts)) as cluster:
        cluster.wait_for(lambda: "IDLE" in cluster.node().get("State", ""), "the node to be idle")
        out = tmp_path / "job.out"
        job = cluster.run("sbatch", "-p", PARTITION, "--parsable", "-o", str(out), "--wrap", "true").stdout.strip()
        cluster.wait_for(lambda: "DRAIN" in cluster.node().get("State", ""), "the node to drain")
        assert "Prolog" in cluster.node().get("Reason", ""), cluster.node()
        assert not (plain / "checkpoints").exists()  # nothing written to the boot disk
        assert cluster.job(job)["JobState"] in ("PENDING", "REQUEUED"), cluster.job(job)
        assert f"{plain} is not mounted" in cluster.logs()


class _Metadata(BaseHTTPRequestHandler):
    """Compute Engine's metadata server, as far as the watcher asks it: instance/preempted answers FALSE, then TRUE
    (the preemption), only to a request with the Metadata-Flavor header; every request is kept."""

    answers = ["FALSE", "TRUE"]
    seen: list[tuple[str, str | None]] = []

    def do_GET(self) -> None:
        type(self).seen.append((self.path, self.headers.get("Metadata-Flavor")))
        if self.headers.get("Metadata-Flavor") != "Google":
            self.send_error(403)
            return
        body = (type(self).answers.pop(0) if type(self).answers else "TRUE").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return


def test_a_spot_nodes_watcher_asks_for_a_checkpoint_when_preempted(tmp_path: Path) -> None:
    """8 s: the planner's write time (128 GB at 17.6 GB/s, 7.3 s, rounded up) within the 30 s notice less the 10 s
    the guest keeps for its shutdown."""
    from gpuinfra.clouds.gcp.pulumi.training.slurm import PREEMPTED_URL, preemption_watcher

    result = checked(STACK)
    text = preemption_watcher(result.inputs.spec, result.plan)  # type: ignore[arg-type]
    assert text is not None
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Metadata)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    now = tmp_path / "run" / "checkpoint-now"
    url = f"http://127.0.0.1:{server.server_address[1]}/computeMetadata/v1/instance/preempted"
    script = tmp_path / "watcher"
    script.write_text(text.replace(PREEMPTED_URL, url).replace(CHECKPOINT_NOW_FILE, str(now)))
    try:
        before = int(time.time())
        run = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60, env={"PATH": SYSTEMD})
        after = int(time.time())
    finally:
        server.shutdown()
    assert run.returncode == 0, run.stderr
    assert before + 8 <= int(now.read_text()) <= after + 8
    assert _Metadata.seen == [("/computeMetadata/v1/instance/preempted?wait_for_change=true", "Google")] * 2


def test_only_spot_nodes_watch_for_preemption() -> None:
    from gpuinfra.clouds.gcp.pulumi.training.slurm import preemption_watcher

    reserved = checked(STACK, {"compute.capacity": {"reservation": "acme-h200-train"}})
    assert preemption_watcher(reserved.inputs.spec, reserved.plan) is None  # type: ignore[arg-type]
    node = slurm_scripts(checked(STACK).inputs.spec, checked(STACK).plan).node_startup  # type: ignore[arg-type]
    assert "systemctl enable --now gpuinfra-preemption-watcher.service" in node
