"""The spot interruption watcher as systemd runs it (systemd's default PATH, nothing else) on a node of a real
one-node Slurm (tests/slurm_local.py, Slurm only at the PCS path), against a fake IMDSv2 on 127.0.0.1: a token by
PUT, then spot/instance-action and events/recommendations/rebalance read with it (EC2 User Guide, "Use the
Instance Metadata Service to access instance metadata", IMDSv2; "Spot Instance interruption notices"; "EC2
instance rebalance recommendations")."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from gpuinfra.pulumi.components.training.bootstrap import NodeRole, interruption_watcher, save_seconds
from slurm_local import NODE, PARTITION, SYSTEMD_PATH, SlurmCluster, pcs_bin, slurm_cluster

VERSION = "25.05"
TOKEN = "AQAEAFake-token=="


@dataclass
class FakeImds:
    """What the fake serves: paths under /latest/meta-data/ that answer 200, with their bodies."""

    present: dict[str, str] = field(default_factory=dict)
    tokenless: int = 0
    """GETs that came without the token (IMDSv2 answers them 401)."""


def _handler(state: FakeImds) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_PUT(self) -> None:
            ok = self.path == "/latest/api/token" and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds")
            self._answer(200 if ok else 400, TOKEN if ok else "")

        def do_GET(self) -> None:
            if self.headers.get("X-aws-ec2-metadata-token") != TOKEN:
                state.tokenless += 1
                self._answer(401, "")
                return
            key = self.path.removeprefix("/latest/meta-data/")
            self._answer(200, state.present[key]) if key in state.present else self._answer(404, "")

        def _answer(self, code: int, body: str) -> None:
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@pytest.fixture
def imds() -> Iterator[tuple[FakeImds, str]]:
    state = FakeImds()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[SlurmCluster]:
    with slurm_cluster(tmp_path / "slurm", VERSION) as c:
        c.wait_for(lambda: "IDLE" in c.node().get("State", ""), "the node to be idle")
        yield c


def _start_watcher(cluster: SlurmCluster, url: str, now_file: Path, hold_seconds: int = 1800) -> None:
    node = NodeRole(
        "compute", "p5.48xlarge", spot=True, checkpoint_write_seconds=1.2, rebalance_hold_seconds=hold_seconds
    )
    script = cluster.root / "interruption-watcher"
    script.write_text(
        interruption_watcher("llm-train", node, VERSION, imds=url, now_file=str(now_file), poll_seconds=1)
    )
    script.chmod(0o755)
    cluster.spawn_in_namespace([str(script)], {"PATH": SYSTEMD_PATH}, "watcher.out")


def _submit_trainer(cluster: SlurmCluster, now_file: Path, out: Path) -> str:
    """A batch job whose step stands in for torchrun's workers: it checkpoints when the checkpoint-now file appears
    and records SIGTERM."""
    job = cluster.root / "train.sbatch"
    job.write_text(
        "#!/bin/bash\n"
        f"export PATH={pcs_bin(VERSION)}:$PATH\n"
        "srun bash -c '"
        f'trap "echo term >> {out}; exit 0" TERM; '
        f"while [ ! -e {now_file} ]; do sleep 0.1; done; echo checkpoint-now >> {out}; "
        "while true; do sleep 0.1; done'\n"
        f"echo batch-continues >> {out}\n"
        "sleep 600\n"
    )
    job_id = cluster.run("sbatch", "--parsable", "-p", PARTITION, "-o", str(cluster.root / "job.out"), str(job)).stdout
    job_id = job_id.strip().split(";")[0]
    cluster.wait_for(lambda: cluster.job(job_id).get("JobState") == "RUNNING", "the job to run")
    cluster.wait_for(lambda: cluster.run("squeue", "-h", "-s", "-j", job_id, "-o", "%i").stdout.count(".0"), "step 0")
    return job_id


def test_a_spot_notice_checkpoints_signals_term_drains_and_requeues(
    cluster: SlurmCluster, imds: tuple[FakeImds, str], tmp_path: Path
) -> None:
    state, url = imds
    now_file, out = tmp_path / "run" / "checkpoint-now", tmp_path / "trainer.log"
    job = _submit_trainer(cluster, now_file, out)
    _start_watcher(cluster, url, now_file)
    state.present["spot/instance-action"] = json.dumps({"action": "terminate", "time": "2027-01-14T10:32:00Z"})
    cluster.wait_for(lambda: cluster.job(job).get("Restarts") == "1", "the job to be requeued", seconds=60)
    # the checkpoint window first, then SIGTERM to the step; the batch script was not signalled (scancel without
    # --full) and went on until the requeue
    assert out.read_text().split() == ["checkpoint-now", "term", "batch-continues"]
    assert "DRAIN" in cluster.node()["State"] and cluster.node()["Reason"].startswith("spot interruption notice")
    # back in the queue (slurmctld counts the restart when it requeues, then passes through COMPLETING while the
    # step ends, so the state is awaited); the drained node takes no job
    cluster.wait_for(lambda: cluster.job(job).get("JobState") == "PENDING", "the requeued job to be pending")
    assert state.tokenless == 0  # every read carried the IMDSv2 token


def test_a_rebalance_recommendation_drains_and_is_undone_when_no_interruption_follows(
    cluster: SlurmCluster, imds: tuple[FakeImds, str], tmp_path: Path
) -> None:
    state, url = imds
    state.present["events/recommendations/rebalance"] = json.dumps({"noticeTime": "2027-01-14T10:20:00Z"})
    _start_watcher(cluster, url, tmp_path / "checkpoint-now", hold_seconds=3)
    cluster.wait_for(lambda: "DRAIN" in cluster.node().get("State", ""), "the rebalance drain")
    assert cluster.node()["Reason"].startswith("gpuinfra: spot rebalance recommendation")
    cluster.wait_for(lambda: "DRAIN" not in cluster.node().get("State", ""), "the drain to be undone", seconds=40)
    assert not (tmp_path / "checkpoint-now").exists()


def test_the_rebalance_undo_leaves_a_drain_of_another_reason(
    cluster: SlurmCluster, imds: tuple[FakeImds, str], tmp_path: Path
) -> None:
    """A health-check drain that arrives meanwhile is not the watcher's to undo."""
    state, url = imds
    state.present["events/recommendations/rebalance"] = json.dumps({"noticeTime": "2027-01-14T10:20:00Z"})
    _start_watcher(cluster, url, tmp_path / "checkpoint-now", hold_seconds=3)
    cluster.wait_for(lambda: "DRAIN" in cluster.node().get("State", ""), "the rebalance drain")
    cluster.run("scontrol", "update", f"nodename={NODE}", "state=drain", "reason=gpuinfra health: 7 of 8 GPUs visible")
    cluster.wait_for(lambda: "no interruption followed" in cluster.logs(), "the hold to end", 40)
    assert "DRAIN" in cluster.node()["State"] and "7 of 8 GPUs" in cluster.node()["Reason"]


def test_the_checkpoint_window_fits_the_two_minute_notice() -> None:
    # 120 s notice (EC2 User Guide) - 30 s torchrun shutdown (PContext.close) - 15 s requeue margin = 75 s at most
    assert save_seconds(None) == 75
    assert save_seconds(500.0) == 75
    assert save_seconds(41.2) == 42
    assert save_seconds(0.1) == 1
