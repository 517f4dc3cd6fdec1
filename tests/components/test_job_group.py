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
    HOME,
    JOB_GID,
    HomeMount,
    LustreMount,
    NodeRole,
    Retention,
    job_group,
    node_cloud_config,
)
from gpuinfra.spec.training import ClusterUser
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

    def __init__(
        self,
        work: Path,
        checkpoint_root: Path | None,
        users: tuple[ClusterUser, ...] = (),
        homes: Path | None = None,
    ) -> None:
        """`homes`: a directory mounted over /home, where this node (a login node) makes the users' homes."""
        self.upper, self.scratch = work / "etc-upper", work / "etc-work"
        self.upper.mkdir()
        self.scratch.mkdir()
        self.homes = homes
        self.script = work / "job-group"
        root = str(checkpoint_root) if checkpoint_root else None
        self.script.write_text(job_group("llm-train", root, users, HOME, make_homes=homes is not None))
        self.script.chmod(0o755)

    def run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        """`argv` in a private mount namespace over this node's /etc, with exactly systemd's environment."""
        setup = (
            "mount --make-rprivate / && "
            f"mount -t overlay overlay -o lowerdir=/etc,upperdir={self.upper},workdir={self.scratch} /etc && "
            + (f"mkdir -p {HOME} && mount --bind {self.homes} {HOME} && " if self.homes else "")
            + f'exec env -i PATH={SYSTEMD_PATH} "$@"'
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


ALICE = ClusterUser(name="alice", uid=10001, ssh_public_key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBkey alice@laptop")
BOB = ClusterUser(name="bob", uid=10002)


def passwd(node: Node, name: str) -> list[str]:
    return node.run("getent", "passwd", name).stdout.strip().split(":")


def test_the_users_get_one_uid_and_the_job_group_on_every_node(tmp_path: Path) -> None:
    """A compute node: each user with the stack's UID, the job group as primary group, a home on the shared /home
    (made by the login node, not here); a second boot changes nothing."""
    require()
    node = Node(tmp_path, None, (ALICE, BOB))
    booted = node.boot()
    assert booted.returncode == 0, booted.stderr
    assert passwd(node, "alice") == ["alice", "x", "10001", str(JOB_GID), "", f"{HOME}/alice", "/bin/bash"]
    assert passwd(node, "bob")[2:4] == ["10002", str(JOB_GID)]
    again = node.boot()
    assert again.returncode == 0, again.stderr
    assert node.run("getent", "passwd", "10001").stdout.count("\n") == 1


def test_a_uid_that_means_someone_else_stops_the_boot(tmp_path: Path) -> None:
    require()
    node = Node(tmp_path, None, (ALICE,))
    (node.upper / "passwd").write_text(Path("/etc/passwd").read_text() + "carol:x:10001:100::/home/carol:/bin/sh\n")
    result = node.boot()
    assert result.returncode == 1
    assert "UID 10001 already belongs to carol, not alice" in result.stderr
    assert node.run("getent", "passwd", "alice").returncode == 2  # not created


def test_a_user_under_another_uid_stops_the_boot(tmp_path: Path) -> None:
    require()
    node = Node(tmp_path, None, (ALICE,))
    (node.upper / "passwd").write_text(Path("/etc/passwd").read_text() + "alice:x:2000:100::/home/alice:/bin/sh\n")
    result = node.boot()
    assert result.returncode == 1 and "user alice has UID 2000, not 10001" in result.stderr


def test_the_login_node_makes_each_home_and_its_key_once(share: Path, tmp_path: Path) -> None:
    """The login node, /home mounted: each home 0700 owned by its user and the job group, alice's key in her
    authorized_keys (0600) once however often the script runs; bob has no key, so no .ssh."""
    node = Node(tmp_path, None, (ALICE, BOB), homes=share)
    for _ in range(2):
        booted = node.boot()
        assert booted.returncode == 0, booted.stderr
    home = (share / "alice").stat()
    assert (home.st_uid, home.st_gid, stat.S_IMODE(home.st_mode)) == (10001, JOB_GID, 0o700)
    keys = share / "alice" / ".ssh" / "authorized_keys"
    assert keys.read_text() == f"{ALICE.ssh_public_key}\n"
    st = keys.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (10001, JOB_GID, 0o600)
    assert (share / "bob").is_dir() and not (share / "bob" / ".ssh").exists()


def test_the_login_units_wait_for_home_and_compute_nodes_make_no_homes() -> None:
    home = HomeMount("fs-1.efs.us-east-1.amazonaws.com", HOME, "nfsvers=4.1", (ALICE,))
    login = cloud_config(node_cloud_config("c", NodeRole("login", "m7i.2xlarge"), {}, None, "25.05", home=home))
    files = {f["path"]: f["content"] for f in login["write_files"]}
    assert f"RequiresMountsFor={HOME}" in files["/etc/systemd/system/gpuinfra-job-group.service"]
    assert "authorized_keys" in files["/opt/gpuinfra/job-group"]
    compute = cloud_config(
        node_cloud_config("c", NodeRole("compute", "p5.48xlarge", gpus=8), {}, None, "25.05", home=home)
    )
    files = {f["path"]: f["content"] for f in compute["write_files"]}
    assert f"RequiresMountsFor={HOME}" not in files["/etc/systemd/system/gpuinfra-job-group.service"]
    script = files["/opt/gpuinfra/job-group"]
    assert "user alice 10001" in script and "authorized_keys" not in script
