"""The Slurm scripts gpuinfra generates for AWS PCS, run by a real slurmd (a one-node cluster on localhost, Slurm
at the PCS path: tests/slurm_local.py): the HealthCheckProgram as slurmd runs it (SLURMD_NODENAME alone, no
PATH), the TaskProlog as slurmstepd runs it (the task's environment, its `export` lines applied to the task)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpuinfra.pulumi.components.training.bootstrap import NodeRole, health_check, job_environment, task_prolog
from slurm_local import NODE, PARTITION, SlurmCluster, slurm_cluster

VERSION = "25.05"


def _script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def _health_conf(script: Path) -> str:
    # The settings pcs.py gives the cluster (CLUSTER_SLURM_SETTINGS), at a short interval.
    return f"HealthCheckProgram={script}\nHealthCheckInterval=5\nHealthCheckNodeState=ANY\n"


def test_slurmd_gives_the_health_check_no_path_so_a_bare_scontrol_is_not_found(tmp_path: Path) -> None:
    """The finding, reproduced: what slurmd hands HealthCheckProgram, and a script that calls `scontrol` by name
    (the old template's `scontrol update ... || true`) leaves the node schedulable."""
    out = tmp_path / "probe.out"
    probe = _script(
        tmp_path / "probe.sh",
        "#!/bin/bash\n"
        f"{{ env; command -v scontrol || echo no-scontrol; }} > {out}\n"
        'scontrol update nodename="$SLURMD_NODENAME" state=drain reason=probe || true\n'
        "exit 1\n",
    )
    with slurm_cluster(tmp_path / "slurm", VERSION, _health_conf(probe)) as cluster:
        cluster.wait_for(out.exists, "the health check to run")
        cluster.wait_for(lambda: "health_check failed" in cluster.logs(), "slurmd to log the failure")
        lines = out.read_text().split("\n")
        names = {line.split("=", 1)[0] for line in lines if "=" in line}
        assert names <= {"SLURMD_NODENAME", "PWD", "SHLVL", "_"}, names
        assert "SLURMD_NODENAME=" + NODE in lines and "no-scontrol" in lines
        assert "scontrol: command not found" in cluster.logs()
        assert "DRAIN" not in cluster.node()["State"]


def test_the_generated_health_check_drains_an_unhealthy_node_by_the_pcs_path(tmp_path: Path) -> None:
    """No NVIDIA driver on this machine: the p5 health check must drain the node, with its reason."""
    node = NodeRole("compute", "p5.48xlarge", gpus=8, efa=32)
    text = health_check("llm-train", node, VERSION)
    assert f"/opt/aws/pcs/scheduler/slurm-{VERSION}/bin/scontrol" in text and "|| true" not in text
    script = _script(tmp_path / "health-check", text)
    with slurm_cluster(tmp_path / "slurm", VERSION, _health_conf(script)) as cluster:
        cluster.wait_for(lambda: "DRAIN" in cluster.node().get("State", ""), "the node to drain")
        assert cluster.node()["Reason"].startswith("gpuinfra health: nvidia-smi missing")


def test_the_health_check_fails_loudly_when_slurm_is_not_where_pcs_keeps_it(tmp_path: Path) -> None:
    """A wrong Slurm version (an AMI built for another one): exit 2 with the path in slurmd's log, not silence."""
    script = _script(tmp_path / "health-check", health_check("c", NodeRole("compute", "p5.48xlarge", gpus=8), "24.11"))
    with slurm_cluster(tmp_path / "slurm", VERSION, _health_conf(script)) as cluster:
        cluster.wait_for(lambda: "health_check failed" in cluster.logs(), "slurmd to log the failure")
        assert re.search(r"rc:2 output:.*slurm-24\.11/bin/scontrol missing", cluster.logs())


@pytest.fixture
def prolog_cluster(tmp_path: Path) -> Iterator[tuple[SlurmCluster, Path]]:
    """A cluster whose TaskProlog is the generated one, reading a job environment file of defaults."""
    env_file = tmp_path / "job-env.sh"
    env_file.write_text(
        job_environment(
            {"NCCL_DEBUG": "WARN", "NCCL_SOCKET_IFNAME": "^docker,lo,veth", "GPUINFRA_CHECKPOINT_ROOT": "/fsx/ckpt"}
        )
    )
    text = task_prolog("llm-train", "/fsx/ckpt").replace("/etc/gpuinfra/job-env.sh", str(env_file))
    prolog = _script(tmp_path / "task-prolog", text)
    with slurm_cluster(tmp_path / "slurm", VERSION, f"TaskProlog={prolog}\n") as cluster:
        cluster.wait_for(lambda: "IDLE" in cluster.node().get("State", ""), "the node to be idle")
        yield cluster, tmp_path


def _task_env(cluster: SlurmCluster, *srun_args: str, env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a task that srun starts on the node, as the task sees it."""
    argv = ["srun", "-p", PARTITION, *srun_args, "/usr/bin/env"]
    import subprocess

    result = subprocess.run(argv, env={**cluster.env(), **(env or {})}, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr + cluster.logs()
    return dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)


def test_the_task_prolog_sets_defaults_and_the_per_run_checkpoint_directory(
    prolog_cluster: tuple[SlurmCluster, Path],
) -> None:
    cluster, _ = prolog_cluster
    env = _task_env(cluster, "--job-name=llama-70b")
    assert env["NCCL_DEBUG"] == "WARN"
    assert env["NCCL_SOCKET_IFNAME"] == "^docker,lo,veth"  # taken literally, no shell expansion
    assert env["GPUINFRA_RUN"] == "llama-70b"
    assert env["GPUINFRA_CHECKPOINT_DIR"] == "/fsx/ckpt/llama-70b"


def test_what_the_user_sets_wins_over_the_prolog_defaults(prolog_cluster: tuple[SlurmCluster, Path]) -> None:
    """The review's case: a user turns NCCL_DEBUG=INFO on to debug a hang, and names the run explicitly."""
    cluster, _ = prolog_cluster
    env = _task_env(cluster, "--job-name=x", env={"NCCL_DEBUG": "INFO", "GPUINFRA_RUN": "llama/70b-try2"})
    assert env["NCCL_DEBUG"] == "INFO"
    assert env["NCCL_SOCKET_IFNAME"] == "^docker,lo,veth"
    assert env["GPUINFRA_CHECKPOINT_DIR"] == "/fsx/ckpt/llama_70b-try2"
    own = _task_env(cluster, env={"GPUINFRA_CHECKPOINT_DIR": "/fsx/mine"})
    assert own["GPUINFRA_CHECKPOINT_DIR"] == "/fsx/mine"


def test_the_health_check_drains_a_node_whose_lustre_mount_is_missing(tmp_path: Path) -> None:
    """A plain directory where Lustre should be (no client, so no mount): checkpoints would go to the root disk."""
    mount = tmp_path / "fsx"
    mount.mkdir()
    text = health_check("llm-train", NodeRole("compute", "m7i.2xlarge"), VERSION, lustre_path=str(mount))
    script = _script(tmp_path / "health-check", text)
    with slurm_cluster(tmp_path / "slurm", VERSION, _health_conf(script)) as cluster:
        cluster.wait_for(lambda: "DRAIN" in cluster.node().get("State", ""), "the node to drain")
        assert cluster.node()["Reason"].startswith(f"gpuinfra health: {mount} is not Lustre")
