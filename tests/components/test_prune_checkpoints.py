"""The checkpoint pruner, run as its callers run it (systemd's default PATH and nothing else; the Kubernetes
CronJob gives the same script the same root) on the layouts real trainers write:
- flat `step-N/` (and a torch DCP directory: `.metadata` plus `__<rank>_0.distcp` files; torch
  torch/distributed/checkpoint/filesystem.py writes `.metadata` last);
- DeepSpeed `global_stepN/` with a `latest` file beside them (deepspeed/runtime/engine.py, save_checkpoint);
- Megatron-LM `iter_NNNNNNN/mp_rank_XX/` with `latest_checkpointed_iteration.txt` beside them
  (megatron/training/checkpointing.py, get_checkpoint_name: iter_{:07d}, mp_rank_{:02d}).
Expected outcomes are worked out by hand per layout below."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from gpuinfra.pulumi.components.training.bootstrap import Retention, prune_checkpoints
from slurm_local import SYSTEMD_PATH

KEEP = 2


def _checkpoint(run: Path, name: str, t: int, *, complete: bool = True, milestone: bool = False) -> Path:
    """A checkpoint directory whose marker was written at time `t` (the order the pruner goes by)."""
    d = run / name
    if name.startswith("iter_"):
        for tp in range(8):  # TP=8: eight shard directories, each a file
            (d / f"mp_rank_{tp:02d}").mkdir(parents=True)
            (d / f"mp_rank_{tp:02d}" / "model_optim_rng.pt").write_bytes(b"w")
    elif name.startswith("dcp-"):
        d.mkdir(parents=True)
        for rank in range(4):
            (d / f"__{rank}_0.distcp").write_bytes(b"w")
        (d / ".metadata").write_bytes(b"m")
    else:
        (d / "shard").mkdir(parents=True)
        (d / "shard" / "weights.bin").write_bytes(b"w")
    if milestone:
        (d / "MILESTONE").write_text("")
    if complete:
        (d / "COMPLETE").write_text("")
        os.utime(d / "COMPLETE", (t, t))
    return d


def _run(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "prune-checkpoints"
    path.write_text(script)
    path.chmod(0o755)
    return subprocess.run(["/usr/bin/env", "-i", f"PATH={SYSTEMD_PATH}", str(path)], capture_output=True, text=True)


def _run_with_tools(script: str, tmp_path: Path, fake: Path) -> subprocess.CompletedProcess[str]:
    """The pruner as its unit runs it, with the fake tools of `fake` where the login node keeps the real ones
    (/usr/local/bin, on systemd's PATH), in a private mount namespace so the machine's own stays as it is."""
    path = tmp_path / "prune-checkpoints"
    path.write_text(script)
    path.chmod(0o755)
    return subprocess.run(
        [
            *("unshare", "--mount", "/bin/sh", "-c"),
            f"mount --make-rprivate / && mount -t tmpfs gpuinfra-test /usr/local/bin && cp {fake}/* /usr/local/bin/"
            ' && exec "$@"',
            *("sh", "/usr/bin/env", "-i", f"PATH={SYSTEMD_PATH}", str(path)),
        ],
        capture_output=True,
        text=True,
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "checkpoints"
    # flat step-N: newest complete are step-500 and step-400; step-600 is being written (no marker, newest of all)
    flat = root / "llama-flat"
    for i, step in enumerate((100, 200, 300, 400, 500)):
        _checkpoint(flat, f"step-{step}", 1000 + i, milestone=step == 200)
    _checkpoint(flat, "step-600", 2000, complete=False)
    # DeepSpeed: global_step30 and global_step40 stay; `latest` names global_step40
    ds = root / "ds-run"
    for i, step in enumerate((10, 20, 30, 40)):
        _checkpoint(ds, f"global_step{step}", 1000 + i)
    (ds / "latest").write_text("global_step40")
    # Megatron TP=8: iter 3000 and 4000 stay whole, 1000 and 2000 go whole (never a shard of a kept one)
    mg = root / "megatron"
    for i, it in enumerate((1000, 2000, 3000, 4000)):
        _checkpoint(mg, f"iter_{it:07d}", 1000 + i)
    (mg / "latest_checkpointed_iteration.txt").write_text("4000")
    # torch DCP: the marker order, not the name, says which is newest (dcp-b completed last)
    dcp = root / "dcp"
    _checkpoint(dcp, "dcp-a", 1002)
    _checkpoint(dcp, "dcp-b", 1003)
    _checkpoint(dcp, "dcp-c", 1001)
    _checkpoint(dcp, "dcp-d", 1000)
    return root


def _names(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


def test_the_pruner_keeps_the_newest_complete_and_milestones_on_four_layouts(root: Path, tmp_path: Path) -> None:
    retention = Retention(str(root), None, "", KEEP, "MILESTONE", 14)
    result = _run(prune_checkpoints("llm-train", retention), tmp_path)
    assert result.returncode == 0, result.stderr
    assert _names(root / "llama-flat") == ["step-200", "step-400", "step-500", "step-600"]
    assert _names(root / "ds-run") == ["global_step30", "global_step40", "latest"]
    assert _names(root / "megatron") == ["iter_0003000", "iter_0004000", "latest_checkpointed_iteration.txt"]
    for kept in ("iter_0003000", "iter_0004000"):
        assert _names(root / "megatron" / kept) == ["COMPLETE", *[f"mp_rank_{tp:02d}" for tp in range(8)]]
    assert _names(root / "dcp") == ["dcp-a", "dcp-b"]
    assert (root / "llama-flat" / "step-600" / "shard" / "weights.bin").exists()  # incomplete: untouched


def test_a_second_run_prunes_nothing_more(root: Path, tmp_path: Path) -> None:
    script = prune_checkpoints("llm-train", Retention(str(root), None, "", KEEP, "MILESTONE", 14))
    _run(script, tmp_path)
    before = sorted(str(p) for p in root.rglob("*"))
    assert _run(script, tmp_path).returncode == 0
    assert sorted(str(p) for p in root.rglob("*")) == before


def test_pruned_checkpoints_are_tagged_in_s3_first_and_kept_when_tagging_fails(root: Path, tmp_path: Path) -> None:
    """With an export bucket: the S3 copies of each pruned checkpoint are tagged before it leaves Lustre; a failed
    tagging keeps the checkpoint (retried next time) and fails the unit."""
    fake = tmp_path / "bin"
    fake.mkdir()
    calls = tmp_path / "aws-calls"
    (fake / "aws").write_text(
        "#!/bin/bash\n"
        f'echo "$*" >> {calls}\n'
        'case "$*" in\n'
        "  *list-objects-v2*dcp/dcp-c/*) exit 255 ;;\n"  # S3 unreachable for one checkpoint
        '  *list-objects-v2*) echo "ckpt/${6#ckpt/}a.bin	ckpt/${6#ckpt/}b.bin" ;;\n'
        "esac\n"
    )
    (fake / "aws").chmod(0o755)
    script = prune_checkpoints("llm-train", Retention(str(root), "acme-ckpt", "ckpt/", KEEP, "MILESTONE", 14))
    path = tmp_path / "prune-checkpoints"
    path.write_text(script)
    path.chmod(0o755)
    # The fake aws CLI where the real one is on the login node (/usr/local/bin, on systemd's PATH), in a private
    # mount namespace so the machine's own /usr/local/bin stays as it is.
    if os.geteuid() != 0:
        (pytest.fail if os.environ.get("CI") else pytest.skip)("needs root for a private mount namespace")
    result = subprocess.run(
        [
            "unshare",
            "--mount",
            "/bin/sh",
            "-c",
            "mount --make-rprivate / && mount -t tmpfs gpuinfra-test /usr/local/bin"
            f' && cp {fake}/aws /usr/local/bin/ && exec "$@"',
            "sh",
            "/usr/bin/env",
            "-i",
            f"PATH={SYSTEMD_PATH}",
            str(path),
        ],
        capture_output=True,
        text=True,
    )
    tagged = [c.split("--key ")[1].split()[0] for c in calls.read_text().splitlines() if "put-object-tagging" in c]
    assert "ckpt/megatron/iter_0001000/a.bin" in tagged and "ckpt/ds-run/global_step10/b.bin" in tagged
    assert not any("step-600" in k or "iter_0004000" in k or "step-200" in k for k in tagged)
    assert result.returncode == 1 and "dcp-c: kept" in result.stderr
    assert _names(root / "dcp") == ["dcp-a", "dcp-b", "dcp-c"]
    assert _names(root / "megatron")[:2] == ["iter_0003000", "iter_0004000"]


@pytest.mark.parametrize("s3_fails", [False, True], ids=["all-tagged", "a-tagging-fails"])
def test_a_successful_run_counts_in_pruner_runs_and_a_failed_one_does_not(
    root: Path, tmp_path: Path, s3_fails: bool
) -> None:
    """PCS: the pruner alarm (alarms.py) fires when no PrunerRuns arrives for an hour; only a run that pruned
    everything it meant to (exit 0) counts."""
    if os.geteuid() != 0:
        (pytest.fail if os.environ.get("CI") else pytest.skip)("needs root for a private mount namespace")
    fake = tmp_path / "bin"
    fake.mkdir()
    calls = tmp_path / "aws-calls"
    failing = "  *list-objects-v2*dcp/dcp-c/*) exit 255 ;;\n" if s3_fails else ""
    (fake / "aws").write_text(
        f'#!/bin/bash\necho "$*" >> {calls}\ncase "$*" in\n{failing}'
        '  *list-objects-v2*) echo "ckpt/${6#ckpt/}a.bin" ;;\nesac\n'
    )
    (fake / "aws").chmod(0o755)
    retention = Retention(
        str(root), "acme-ckpt", "ckpt/", KEEP, "MILESTONE", 14, metric_namespace="gpuinfra/Training", region="us-east-1"
    )
    result = _run_with_tools(prune_checkpoints("llm-train", retention), tmp_path, fake)
    published = [c for c in calls.read_text().splitlines() if c.startswith("cloudwatch put-metric-data")]
    if s3_fails:
        assert result.returncode == 1 and published == []
    else:
        assert result.returncode == 0, result.stderr
        assert published == [
            "cloudwatch put-metric-data --region us-east-1 --namespace gpuinfra/Training --metric-name PrunerRuns "
            "--dimensions Cluster=llm-train --value 1 --unit Count"
        ]


def test_milestones_past_the_kept_ones_leave_lustre_for_s3(root: Path, tmp_path: Path) -> None:
    """Review finding T8: a milestone is never deleted, but once it is older than the kept checkpoints its exported
    files are released from Lustre (lfs hsm_release, FSx for Lustre User Guide, "Releasing data from your file
    system"): only files whose hsm_state says archived and not dirty; nothing of a kept checkpoint."""
    if os.geteuid() != 0:
        (pytest.fail if os.environ.get("CI") else pytest.skip)("needs root for a private mount namespace")
    fake = tmp_path / "bin"
    fake.mkdir()
    calls = tmp_path / "lfs-calls"
    (fake / "aws").write_text('#!/bin/bash\ncase "$*" in *list-objects-v2*) echo None ;; esac\n')
    # One file of the milestone was changed after its export (dirty): it must stay.
    (fake / "lfs").write_text(
        f'#!/bin/bash\necho "$*" >> {calls}\n'
        'case "$*" in\n'
        '  "hsm_state "*weights.bin) echo "$2: (0x0000000b) exists dirty archived, archive_id:1" ;;\n'
        '  "hsm_state "*) echo "$2: (0x00000009) exists archived, archive_id:1" ;;\n'
        "esac\n"
    )
    for tool in ("aws", "lfs"):
        (fake / tool).chmod(0o755)
    (root / "llama-flat" / "step-200" / "optimizer.bin").write_bytes(b"o")
    script = prune_checkpoints("llm-train", Retention(str(root), "acme-ckpt", "ckpt/", KEEP, "MILESTONE", 14))
    result = _run_with_tools(script, tmp_path, fake)
    assert result.returncode == 0, result.stderr
    released = [c.split(" ", 1)[1] for c in calls.read_text().splitlines() if c.startswith("hsm_release ")]
    milestone = root / "llama-flat" / "step-200"
    # step-200 is the one milestone past the two kept (step-400, step-500): its files but the dirty one are released.
    assert sorted(released) == sorted(str(milestone / f) for f in ("COMPLETE", "MILESTONE", "optimizer.bin"))
    assert (milestone / "shard" / "weights.bin").exists()
