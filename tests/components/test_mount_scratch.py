"""The instance-store scratch script, run as its unit runs it (gpuinfra-scratch.service: a oneshot, as root, with
systemd's default PATH and nothing else) against a real block device: a loop device named the way EC2 names
instance-store NVMe volumes under /dev/disk/by-id (EC2 User Guide, "Instance store volumes"), in a private
mount namespace so nothing outside the test sees the mounts. Real mkfs.xfs, blkid, mountpoint and mount.

Not run here: the RAID 0 path over several volumes (mdadm --create needs the md driver, which this kernel does
not offer a container); the path is shellchecked (test_training_shellcheck.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpuinfra.pulumi.components.training.bootstrap import LustreMount, NodeRole, node_cloud_config
from helpers import cloud_config
from node_fakes import SYSTEMD_PATH

SCRATCH = Path("/scratch")
BY_ID = "/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_AWS1A2B3C4D5E6F7"


def _require(tools: list[str]) -> None:
    missing = [t for t in tools if shutil.which(t, path=SYSTEMD_PATH) is None]
    problem = "needs root" if os.geteuid() != 0 else f"missing {missing} (apt-get install xfsprogs util-linux)"
    if os.geteuid() != 0 or missing:
        if os.environ.get("CI"):
            pytest.fail(problem)
        pytest.skip(problem)


def mount_scratch() -> str:
    """The script as the p5.48xlarge spot nodes of llm-train get it (write_files of their user data)."""
    role = NodeRole("compute", "p5.48xlarge", gpus=8, efa=32, instance_store_gb=30400, spot=True)
    config = cloud_config(node_cloud_config("llm-train", role, {}, LustreMount("fs-1.x", "abcd1234", "/fsx"), "25.05"))
    (script,) = [f["content"] for f in config["write_files"] if f["path"] == "/opt/gpuinfra/mount-scratch"]
    return script


@pytest.fixture
def loop_device(tmp_path: Path) -> Iterator[str]:
    _require(["losetup", "mkfs.xfs", "blkid", "mountpoint", "mount", "unshare", "findmnt"])
    image = tmp_path / "nvme.img"
    with image.open("wb") as f:
        f.truncate(400 * 1024 * 1024)  # sparse; XFS wants at least 300 MB (xfsprogs 5.19+)
    device = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True, text=True)
    if device.returncode != 0:
        message = f"no loop device: {device.stderr.strip()}"
        pytest.fail(message) if os.environ.get("CI") else pytest.skip(message)
    created = [p for p in (Path("/dev/disk"), SCRATCH) if not p.exists()]
    for p in created:
        p.mkdir()
    try:
        yield device.stdout.strip()
    finally:
        subprocess.run(["losetup", "-d", device.stdout.strip()], check=False)
        for p in reversed(created):
            p.rmdir()


def in_namespace(tmp_path: Path, links: dict[str, str], after: str) -> subprocess.CompletedProcess[str]:
    """Inside a private mount namespace: by-id links on a tmpfs, the unit's run (twice: a restart finds it
    mounted), then `after` to read the result."""
    script = tmp_path / "mount-scratch"
    script.write_text(mount_scratch())
    script.chmod(0o755)
    setup = ["mount -t tmpfs tmpfs /dev/disk", "mkdir /dev/disk/by-id"]
    setup += [f"ln -s {target} {link}" for link, target in links.items()]
    unit = f"env -i PATH={SYSTEMD_PATH} {script}"
    body = "; ".join([*setup, f"{unit} >&2; echo rc=$?", f"{unit} >&2; echo rc=$?", after])
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "bash", "-c", body],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_one_volume_is_formatted_and_mounted_with_a_shared_checkpoint_folder(loop_device: str, tmp_path: Path) -> None:
    # a second namespace of the same device (-ns-2) is skipped: counting it would ask mdadm for a RAID of one disk
    links = {BY_ID: loop_device, f"{BY_ID}-ns-2": loop_device}
    result = in_namespace(
        tmp_path, links, f"findmnt -n -o SOURCE,FSTYPE,OPTIONS {SCRATCH}; stat -c %a {SCRATCH} {SCRATCH}/checkpoints"
    )
    lines = result.stdout.split()
    assert result.returncode == 0, result.stderr
    assert lines[:2] == ["rc=0", "rc=0"], result.stderr  # and the second run finds it mounted and stops
    source, fstype, options = lines[2:5]
    assert (source, fstype) == (loop_device, "xfs") and "noatime" in options.split(",")
    assert lines[5:] == ["1777", "1777"]  # every job user may stage a checkpoint there (sticky, like /tmp)


def test_a_node_without_instance_store_starts_without_scratch(loop_device: str, tmp_path: Path) -> None:
    result = in_namespace(tmp_path, {}, f"mountpoint -q {SCRATCH} && echo mounted || echo not-mounted")
    assert result.stdout.split() == ["rc=0", "rc=0", "not-mounted"], result.stderr
    assert "no instance store volumes" in result.stderr
