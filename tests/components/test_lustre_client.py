"""The Lustre client install at boot, run as cloud-init runs bootcmd (root, systemd's PATH) on the OS each PCS
sample AMI is (os-release of Amazon Linux 2 and 2023), in a private mount namespace: /etc/os-release swapped for the
AMI's, the package tools replaced by recorders in /usr/local/bin."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from gpuinfra.pulumi.components.training.bootstrap import lustre_client
from slurm_local import SYSTEMD_PATH

BASH = ["/bin/bash"]
OS_RELEASE = {
    "al2": 'NAME="Amazon Linux"\nVERSION="2"\nID="amzn"\nID_LIKE="centos rhel fedora"\nVERSION_ID="2"\n',
    "al2023": 'NAME="Amazon Linux"\nVERSION="2023"\nID="amzn"\nID_LIKE="fedora"\nVERSION_ID="2023"\n',
    "ubuntu": 'NAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\n',
}


def _boot(tmp_path: Path, os_name: str, installed: bool = False) -> tuple[subprocess.CompletedProcess[str], str]:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        (pytest.fail if os.environ.get("CI") else pytest.skip)("needs root and unshare (a private mount namespace)")
    (tmp_path / "os-release").write_text(OS_RELEASE[os_name])
    tools = tmp_path / "tools"
    tools.mkdir()
    calls = tmp_path / "calls"
    for tool in ("amazon-linux-extras", "dnf"):
        (tools / tool).write_text(f'#!/bin/bash\necho "{tool} $*" >> {calls}\n')
        (tools / tool).chmod(0o755)
    upper = tmp_path / "sbin-upper"
    upper.mkdir()
    if installed:
        (upper / "mount.lustre").write_text("#!/bin/sh\n")
        (upper / "mount.lustre").chmod(0o755)
    script = tmp_path / "lustre-client"
    script.write_text(lustre_client("llm-train", "/fsx"))
    setup = (
        "mount --make-rprivate / && "
        f"mount --bind {tmp_path / 'os-release'} /etc/os-release && "
        f"mount -t tmpfs t /usr/local/bin && cp {tools}/* /usr/local/bin/ && "
        f"mkdir -p {tmp_path}/w && "
        f"mount -t overlay o -o lowerdir=/usr/sbin,upperdir={upper},workdir={tmp_path}/w /usr/sbin"
        ' && exec "$@"'
    )
    result = subprocess.run(
        [
            "unshare",
            "--mount",
            "/bin/sh",
            "-c",
            setup,
            "sh",
            "/usr/bin/env",
            "-i",
            f"PATH={SYSTEMD_PATH}",
            *BASH,
            str(script),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    return result, calls.read_text() if calls.exists() else ""


@pytest.mark.parametrize(
    ("os_name", "expected"),
    [("al2", "amazon-linux-extras install -y lustre\n"), ("al2023", "dnf install -y lustre-client\n")],
)
def test_the_client_is_installed_on_the_pcs_sample_ami_oses(tmp_path: Path, os_name: str, expected: str) -> None:
    result, calls = _boot(tmp_path, os_name)
    assert result.returncode == 0, result.stderr
    assert calls == expected


def test_an_installed_client_is_left_alone(tmp_path: Path) -> None:
    result, calls = _boot(tmp_path, "al2", installed=True)
    assert result.returncode == 0 and calls == ""


def test_an_os_without_a_recipe_fails_loudly(tmp_path: Path) -> None:
    result, calls = _boot(tmp_path, "ubuntu")
    assert result.returncode == 2 and "no install recipe for ubuntu 22.04" in result.stderr and calls == ""
