"""The same rendered pipeline through datatrove's SlurmPipelineExecutor on the real one-node Slurm the training
tests start (tests/slurm_local.py): every stage an sbatch job array chained by afterok dependencies. A SIGUSR1 to a
running filter task (what a spot reclaim sends) makes datatrove requeue it and exit; the requeued task reruns, the
outputs equal the local executor's, and submitting the pipeline again skips every stage: all tasks have their
completion markers."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from dataprep.test_local_run import ROOT, read_jsonl, train_tokenizer
from gpuinfra.commands.dataprep import offline_lid_model, run_local, sample_folder
from gpuinfra.pulumi.components.dataprep.pipeline import Where, render_pipeline
from gpuinfra.spec import DataprepSpec, read_stack
from slurm_local import PARTITION, SlurmCluster, pcs_bin, slurm_cluster

VERSION = "25.05"
STAGES = ("filter", "minhash-signatures", "minhash-buckets", "minhash-cluster", "minhash-filter", "tokenize")


def local_spec(path: Path) -> DataprepSpec:
    doc = read_stack(path)
    assert isinstance(doc.spec, DataprepSpec)
    spec = doc.spec
    corpus = spec.corpus.model_copy(update={"format": "jsonl"})
    return spec.model_copy(update={"corpus": corpus, "stages": spec.stages.model_copy(update={"extract": None})})


def slurm_where(out: Path, tokenizer: Path) -> Where:
    """The cluster's settings on a one-CPU node: FineWeb's per-stage CPUs capped at 1, 1 GB a CPU."""
    return Where(
        input=f"{sample_folder()}/",
        input_glob="*.jsonl*",
        scratch=f"{out}/scratch/",
        output=f"{out}/tokens/",
        work=f"{out}/work/",
        files=3,
        lid_model=offline_lid_model(),
        tokenizer=str(tokenizer),
        bucket_tasks_per_bucket=1,
        partition=PARTITION,
        slurm_logs=f"{out}/slurm_logs/",
        venv_activate=f"{sys.prefix}/bin/activate",
        randomize_start_seconds=0,
        slurm_cpus_cap=1,
        slurm_mem_per_cpu_gb=1,
    )


def submit(cluster: SlurmCluster, pipeline: Path) -> subprocess.CompletedProcess[str]:
    """Run `pipeline.py slurm` as a user on the login node: Slurm's commands by the PCS path, the venv's Python."""
    env = {**cluster.env(), "PATH": f"{pcs_bin(VERSION)}:{sys.prefix}/bin:/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, str(pipeline), "slurm"], cwd=pipeline.parent, env=env, capture_output=True, text=True
    )


def queue(cluster: SlurmCluster, *args: str) -> list[str]:
    return cluster.run("squeue", "-h", *args, check=False).stdout.split()


def reclaim_a_running_filter_task(cluster: SlurmCluster, out: Path) -> str:
    """SIGUSR1 to a filter task's steps once datatrove runs it (its task log exists: the handler is installed
    first), as a spot reclaim would. scancel keeps retrying while the task is being requeued ("Job is in
    transitional state"): the signal has landed by then, so it is not waited for."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for task in queue(cluster, "-t", "R", "-n", "corpus-prep-filter", "-o", "%i"):
            rank = int(task.split("_")[1])
            if (out / "scratch" / "logs" / "filter" / "logs" / f"task_{rank:05d}.log").exists():
                with contextlib.suppress(subprocess.TimeoutExpired):
                    subprocess.run(
                        ["scancel", "--signal=USR1", task], env=cluster.env(), capture_output=True, timeout=5
                    )
                return task
        time.sleep(0.1)
    raise AssertionError(f"no filter task ran:\n{cluster.logs()}")


def requeued(cluster: SlurmCluster, task: str) -> None:
    """The task was requeued by datatrove's handler (`scontrol requeue`): slurmctld logs it and counts a restart.
    Slurm holds a requeued job back for a while (its BeginTime); the test lets it start now rather than wait."""
    cluster.wait_for(lambda: cluster.job(task).get("Restarts") == "1", f"{task} to be requeued", 60)
    log = (cluster.root / "log" / "slurmctld.log").read_text()
    assert f"Requeuing JobId={task}(" in log
    cluster.run("scontrol", "update", f"JobId={task}", "StartTime=now", check=False)


def wait_until_idle(cluster: SlurmCluster, seconds: float = 480) -> None:
    cluster.wait_for(lambda: not queue(cluster, "-o", "%i"), "every dataprep job to finish", seconds)


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    train_tokenizer([d["text"] for d in read_jsonl(sample_folder())], path)
    return path


@pytest.mark.timeout(1500)  # 33 sbatch jobs one at a time on one CPU, each a Python start: 4-5 minutes here
def test_slurm_run_requeues_on_sigusr1_and_reruns_nothing(tmp_path: Path, tokenizer: Path) -> None:
    stack = (ROOT / "stacks" / "Pulumi.corpus-prep.yaml").read_text()
    declared = tmp_path / "Pulumi.corpus-prep.yaml"
    declared.write_text(stack.replace("tokenizer: gpt2", f"tokenizer: {tokenizer}"))
    local = run_local(str(declared), tmp_path / "local")
    assert local.returncode == 0, local.log[-3000:]

    out = tmp_path / "slurm-run"
    out.mkdir()
    pipeline = out / "pipeline.py"
    pipeline.write_text(render_pipeline(local_spec(declared), slurm_where(out, tokenizer)))
    with slurm_cluster(tmp_path / "slurm", VERSION, node_options="RealMemory=4096") as cluster:
        cluster.wait_for(lambda: "IDLE" in cluster.node().get("State", ""), "the node to be idle")
        first = submit(cluster, pipeline)
        assert first.returncode == 0, first.stderr[-3000:]
        task = reclaim_a_running_filter_task(cluster, out)
        requeued(cluster, task)
        wait_until_idle(cluster)
        assert cluster.job(task).get("JobState") == "COMPLETED", cluster.job(task)  # the rerun of the task
        for stage in STAGES:
            done = out / "scratch" / "logs" / stage / "completions"
            assert len(list(done.iterdir())) == len(list((out / "scratch" / "logs" / stage / "logs").iterdir()))
        again = submit(cluster, pipeline)
        assert again.returncode == 0, again.stderr[-3000:]
        for stage in STAGES:
            assert f"Skipping launch of corpus-prep-{stage} as all" in again.stderr, again.stderr[-3000:]
        assert not queue(cluster, "-o", "%i")  # nothing submitted

    local_kept = read_jsonl(local.tokens.parent / "scratch" / "deduped")
    slurm_kept = read_jsonl(out / "scratch" / "deduped")
    assert Counter(d["id"] for d in slurm_kept) == Counter(d["id"] for d in local_kept)
    tokens = sum(int(p.read_text().splitlines()[1]) for p in (out / "tokens").glob("*.ds.metadata"))
    local_tokens = sum(int(p.read_text().splitlines()[1]) for p in local.tokens.glob("*.ds.metadata"))
    assert tokens == local_tokens > 0
