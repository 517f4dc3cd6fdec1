"""The NCCL acceptance job gpuinfra renders for AWS PCS, submitted with sbatch to a real one-node Slurm (Slurm at the
PCS path, tests/slurm_local.py) with a stand-in all_reduce_perf on PATH that prints nccl-tests' own output format
(NVIDIA/nccl-tests src/common.cu: the "#  size count type redop root time algbw busbw #wrong ..." table, then
"# Out of bounds values" and "# Avg bus bandwidth"). The floor comes from the catalog's network figure.
shellcheck covers the script with every other rendered one (test_training_shellcheck.py, the login role)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpuinfra.pulumi.components.training.bootstrap import Acceptance, nccl_acceptance
from slurm_local import NODE, PARTITION, SlurmCluster, slurm_cluster

VERSION = "25.05"
P5 = Acceptance(PARTITION, "p5.48xlarge", 8, 3200.0)
"""p5.48xlarge: 3200 Gbps (EC2 User Guide, accelerated computing instance network specifications)."""

WIDE_PARTITION = "wide"
WIDE = f"""NodeName=pcsnode2 NodeAddr=127.0.0.2 CPUs=1 State=DOWN
PartitionName={WIDE_PARTITION} Nodes={NODE},pcsnode2 MaxTime=INFINITE State=UP
"""
"""A second partition of two nodes, one of them down (as a PCS node group's nodes not yet launched are there in
Slurm): the job must count both, which a resize changes without touching the script."""

FAKE = r"""#!/bin/bash
# Stands in for nccl-tests' all_reduce_perf: prints its table; busbw and #wrong come from the test.
cat <<HEAD
# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 \
validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid   4242 on   pcsnode1 device  0 [0x53] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
HEAD
echo "args: $*" >&2
printf '%12s  %12s  %8s  %6s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s\n' \
  8 2 float sum -1 35.1 0.00 0.00 0 34.9 0.00 0.00 0 \
  1073741824 268435456 float sum -1 5400.2 198.8 "$((FAKE_BUSBW / 2))" 0 5390.0 199.2 "$((FAKE_BUSBW / 2))" 0 \
  8589934592 2147483648 float sum -1 40020 214.6 "$FAKE_BUSBW" "${FAKE_WRONG:-0}" 40100 214.2 "$FAKE_BUSBW" 0
echo "# Out of bounds values : ${FAKE_WRONG:-0} OK"
echo "# Avg bus bandwidth    : 123.4 "
echo "#"
"""


def test_the_floor_is_sixty_percent_of_the_nodes_network_rate() -> None:
    """3200 Gbps / 8 = 400 GB/s of bus bandwidth at most; 60 % of it, 240 GB/s, is the floor."""
    text = nccl_acceptance("llm-train", P5, VERSION)
    assert "\nfloor=240\n" in text and 'floor="${GPUINFRA_NCCL_MIN_BUSBW:-$floor}"' in text
    assert "#SBATCH --partition=train\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n" in text
    assert "--nodes=" not in "".join(line for line in text.splitlines() if line.startswith("#SBATCH"))
    assert f"/opt/aws/pcs/scheduler/slurm-{VERSION}/bin/srun --mpi=" in text
    p4d = nccl_acceptance("c", Acceptance(PARTITION, "p4d.24xlarge", 8, 400.0), VERSION)
    assert "\nfloor=30\n" in p4d  # 400 Gbps / 8 * 0.6


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SlurmCluster, Path]]:
    root = tmp_path_factory.mktemp("nccl")
    with slurm_cluster(root / "slurm", VERSION, WIDE) as c:
        c.wait_for(lambda: "IDLE" in c.node().get("State", ""), "the node to be idle")
        yield c, root


def write_job(work: Path, partition: str = PARTITION) -> Path:
    """The rendered job (one task a node, no GPU: the test node has one CPU and no GRES), executable as on the
    login node (cloud-init writes it 0755)."""
    script = work / "nccl-acceptance.sbatch"
    script.write_text(nccl_acceptance("llm-train", Acceptance(partition, "p5.48xlarge", 0, 3200.0, 1), VERSION))
    script.chmod(0o755)
    return script


def run_job(cluster: SlurmCluster, work: Path, argv: list[str], env: dict[str, str]) -> str:
    """Start the job the way `argv` does (the file itself, or sbatch on it) with the stand-in binary on PATH;
    returns the job id sbatch printed."""
    path = f"{work / 'bin'}:{os.environ['PATH']}"
    result = subprocess.run(
        argv, cwd=work, env={**cluster.env(), "PATH": path, **env}, capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().split(";")[0]


def wait_job(cluster: SlurmCluster, work: Path, job: str) -> tuple[int, str]:
    """What `sbatch --wait` reports, polled faster than it polls: the job's ExitCode (status:signal), and its
    output file."""
    done = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY")
    cluster.wait_for(lambda: cluster.job(job).get("JobState") in done, f"job {job} to end", seconds=90)
    status = int(cluster.job(job)["ExitCode"].split(":")[0])
    outputs = list(work.glob("nccl-acceptance-*.out"))
    assert len(outputs) == 1, cluster.logs()
    return status, outputs[0].read_text()


def submit(cluster: SlurmCluster, root: Path, name: str, env: dict[str, str], fake: bool = True) -> tuple[int, str]:
    """Run the rendered job from `root/name` as the operator does (the file itself, which submits itself over
    every node of the partition) and wait for it."""
    work = root / name
    work.mkdir()
    (work / "bin").mkdir()
    if fake:
        binary = work / "bin" / "all_reduce_perf"
        binary.write_text(FAKE)
        binary.chmod(0o755)
    script = write_job(work)
    return wait_job(cluster, work, run_job(cluster, work, [str(script), "--parsable"], env))


def test_a_fabric_at_line_rate_passes(cluster: tuple[SlurmCluster, Path]) -> None:
    rc, out = submit(*cluster, "pass", {"FAKE_BUSBW": "362"})
    assert rc == 0, out
    assert "gpuinfra nccl-acceptance: PASS: bus bandwidth 362 GB/s at 8589934592 B >= 240 GB/s on 1 nodes" in out
    assert "args: -b 8 -e 8G -f 2 -g 1" in out


def test_a_slow_fabric_fails_with_the_floor_in_the_message(cluster: tuple[SlurmCluster, Path]) -> None:
    """The 1 GiB row is at half rate too: only the largest size decides, and 180 < 240."""
    rc, out = submit(*cluster, "slow", {"FAKE_BUSBW": "180"})
    assert rc == 1, out
    assert "FAIL: bus bandwidth 180 GB/s at 8589934592 B is below the floor of 240 GB/s" in out


def test_wrong_results_fail_even_at_full_speed(cluster: tuple[SlurmCluster, Path]) -> None:
    rc, out = submit(*cluster, "wrong", {"FAKE_BUSBW": "380", "FAKE_WRONG": "3"})
    assert rc == 1, out
    assert "FAIL: 1 message sizes reported wrong results" in out


def test_the_operator_can_lower_the_floor(cluster: tuple[SlurmCluster, Path]) -> None:
    rc, out = submit(*cluster, "override", {"FAKE_BUSBW": "180", "GPUINFRA_NCCL_MIN_BUSBW": "150"})
    assert rc == 0, out
    assert ">= 150 GB/s" in out


def test_a_missing_all_reduce_perf_is_exit_2_with_how_to_build_it(cluster: tuple[SlurmCluster, Path]) -> None:
    rc, out = submit(*cluster, "missing", {}, fake=False)
    assert rc == 2, out
    assert "all_reduce_perf not found: build NVIDIA/nccl-tests with MPI=1" in out


def test_run_by_the_operator_it_submits_itself_over_every_node_of_the_partition(
    cluster: tuple[SlurmCluster, Path],
) -> None:
    """The node count is Slurm's (2 in `wide`, one node down), not the file's: held, so it does not wait for the
    node that never comes."""
    c, root = cluster
    work = root / "count"
    (work / "bin").mkdir(parents=True)
    job = run_job(c, work, [str(write_job(work, WIDE_PARTITION)), "--hold", "--parsable"], {})
    try:
        fields = c.job(job)
        assert (fields["NumNodes"].split("-")[0], fields["Partition"].split()[0]) == ("2", WIDE_PARTITION), fields
    finally:
        c.run("scancel", job, check=False)


def test_a_job_over_fewer_nodes_than_the_partition_refuses(cluster: tuple[SlurmCluster, Path]) -> None:
    """`sbatch` on the file (one node, Slurm's default) would judge one node's NVLink, not the fabric: exit 2, naming
    how to run it."""
    c, root = cluster
    work = root / "partial"
    (work / "bin").mkdir(parents=True)
    rc, out = wait_job(c, work, run_job(c, work, ["sbatch", "--parsable", str(write_job(work, WIDE_PARTITION))], {}))
    assert rc == 2, out
    assert "this job spans 1 of the 2 nodes of partition wide: run /opt/gpuinfra/nccl-acceptance.sbatch itself" in out
