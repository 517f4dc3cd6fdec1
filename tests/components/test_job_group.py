"""The job-group boot script (review finding 17), run as gpuinfra-job-group.service runs it on a PCS node: a oneshot,
as root, with systemd's default PATH and nothing else (systemd.exec(5)). /etc is an overlay in a private mount
namespace, so groupadd writes the test's copy, never this machine's; the checkpoint root is a directory on this
machine standing in for /fsx/checkpoints. Then users write into it the way jobs do: as an unprivileged uid, with and
without the group (setpriv, numeric ids, as Lustre stores them)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpuinfra.pulumi.components.training.bootstrap import (
    JOB_GID,
    LustreMount,
    NodeRole,
    Retention,
    job_group,
    node_cloud_config,
)
from helpers import cloud_config
from node_fakes import SYSTEMD_PATH

NOBODY = 65534
TOOLS = ("unshare", "mount", "setpriv", "groupadd", "getent", "find")


def require() -> None:
    missing = [t for t in TOOLS if shutil.which(t, path=SYSTEMD_PATH) is None]
    problem = "needs root" if os.geteuid() != 0 else f"missing {missing}" if missing else ""
    if problem:
        pytest.fail(problem) if os.environ.get("CI") else pytest.skip(problem)


class Node:
    """One node's /etc (an overlay whose upper layer outlives each run) and the script gpuinfra renders for it."""

    def __init__(self, work: Path, checkpoint_root: Path | None) -> None:
        self.upper, self.scratch = work / "etc-upper", work / "etc-work"
        self.upper.mkdir()
        self.scratch.mkdir()
        self.script = work / "job-group"
        self.script.write_text(job_group("llm-train", str(checkpoint_root) if checkpoint_root else None))
        self.script.chmod(0o755)

    def run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        """`argv` in a private mount namespace over this node's /etc, with exactly systemd's environment."""
        setup = (
            "mount --make-rprivate / && "
            f"mount -t overlay overlay -o lowerdir=/etc,upperdir={self.upper},workdir={self.scratch} /etc && "
            f'exec env -i PATH={SYSTEMD_PATH} "$@"'
        )
        return subprocess.run(
            ["unshare", "--mount", "bash", "-c", setup, "node", *argv], capture_output=True, text=True, timeout=60
        )

    def boot(self) -> subprocess.CompletedProcess[str]:
        return self.run(str(self.script))


@pytest.fixture
def share() -> Iterator[Path]:
    """A world-traversable directory standing in for the Lustre mount (pytest's tmp dirs are 0700)."""
    require()
    path = Path(tempfile.mkdtemp(prefix="gpuinfra-fsx-", dir="/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def as_user(node: Node, *argv: str, groups: tuple[int, ...]) -> subprocess.CompletedProcess[str]:
    ids = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", f"--groups={','.join(map(str, groups))}"]
    return node.run(*ids, *argv)


def test_the_unit_runs_it_at_boot_after_the_mount_and_before_every_prune() -> None:
    login = NodeRole("login", "m7i.2xlarge", retention=Retention("/fsx/checkpoints", None, "", 3, "MILESTONE", 14))
    config = cloud_config(node_cloud_config("c", login, {}, LustreMount("fs-1.x", "abcd1234", "/fsx"), "25.05"))
    files = {f["path"]: f["content"] for f in config["write_files"]}
    unit = files["/etc/systemd/system/gpuinfra-job-group.service"]
    assert "Type=oneshot" in unit and "ExecStart=/opt/gpuinfra/job-group" in unit
    assert "RequiresMountsFor=/fsx/checkpoints" in unit
    assert "ExecStartPre=-/opt/gpuinfra/job-group" in files["/etc/systemd/system/gpuinfra-prune-checkpoints.service"]
    assert ["systemctl", "enable", "--now", "gpuinfra-job-group.service"] in config["runcmd"]
    assert "root=/fsx/checkpoints" in files["/opt/gpuinfra/job-group"]
    compute = cloud_config(node_cloud_config("c", NodeRole("compute", "p5.48xlarge", gpus=8), {}, None, "25.05"))
    script = {f["path"]: f["content"] for f in compute["write_files"]}["/opt/gpuinfra/job-group"]
    assert f"gid={JOB_GID}" in script and "root=" not in script  # compute nodes: the group only


def test_the_checkpoint_root_becomes_writable_for_the_group_and_runs_inherit_it(share: Path, tmp_path: Path) -> None:
    root = share / "checkpoints"
    root.mkdir(mode=0o755)  # as the data repository association leaves it
    (root / "old-run").mkdir(mode=0o755)  # a run from before, root's group, 0755
    node = Node(tmp_path, root)
    booted = node.boot()
    assert booted.returncode == 0, booted.stderr
    assert node.run("getent", "group", "gpuinfra-train").stdout.strip() == f"gpuinfra-train:x:{JOB_GID}:"
    st = root.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, JOB_GID, 0o2775)
    old = (root / "old-run").stat()
    assert old.st_gid == JOB_GID and stat.S_IMODE(old.st_mode) & 0o2070 == 0o2070

    member = as_user(node, "mkdir", "-p", str(root / "llama-70b" / "step-100"), groups=(JOB_GID,))
    assert member.returncode == 0, member.stderr
    run = (root / "llama-70b").stat()
    assert (run.st_uid, run.st_gid) == (NOBODY, JOB_GID) and run.st_mode & stat.S_ISGID  # setgid inherited
    assert (root / "llama-70b" / "step-100").stat().st_gid == JOB_GID

    outsider = as_user(node, "mkdir", str(root / "intruder"), groups=(NOBODY,))
    assert outsider.returncode != 0 and "Permission denied" in outsider.stderr
    assert not (root / "intruder").exists()

    again = node.boot()  # the pruner's ExecStartPre: idempotent, and it opens the new run to the group
    assert again.returncode == 0, again.stderr
    assert stat.S_IMODE((root / "llama-70b").stat().st_mode) & 0o2070 == 0o2070


def test_a_missing_root_waits_for_the_association(share: Path, tmp_path: Path) -> None:
    root = share / "checkpoints"
    result = Node(tmp_path, root).boot()
    assert result.returncode == 0 and "does not exist yet" in result.stderr
    assert not root.exists()


def test_a_gid_taken_by_another_group_fails_loudly(tmp_path: Path) -> None:
    require()
    node = Node(tmp_path, None)
    (node.upper / "group").write_text(Path("/etc/group").read_text() + f"site-ops:x:{JOB_GID}:\n")
    result = node.boot()
    assert result.returncode == 1
    assert f"GID {JOB_GID} already belongs to site-ops, not gpuinfra-train" in result.stderr


def test_the_group_under_another_gid_fails_loudly(tmp_path: Path) -> None:
    require()
    node = Node(tmp_path, None)
    (node.upper / "group").write_text(Path("/etc/group").read_text() + "gpuinfra-train:x:1234:\n")
    result = node.boot()
    assert result.returncode == 1 and f"group gpuinfra-train has GID 1234, not {JOB_GID}" in result.stderr
