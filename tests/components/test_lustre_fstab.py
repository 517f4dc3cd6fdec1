"""The Lustre mount line cloud-init writes to /etc/fstab, read by systemd's own fstab generator (as at every
boot): it yields an automount for /fsx whose mount requires a unit that exists on every systemd system
(expert-training review, finding 16: the FSx guide's AL2 example names network.service, which AL2023 and Ubuntu
lack)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from gpuinfra.pulumi.components.training.bootstrap import LustreMount, NodeRole, node_cloud_config
from helpers import cloud_config

GENERATOR = Path("/lib/systemd/system-generators/systemd-fstab-generator")
UNITS = Path("/lib/systemd/system")


def fstab_line() -> str:
    """cloud-init's cc_mounts writes each `mounts` entry as one fstab line, fields separated by tabs."""
    role = NodeRole("compute", "p5.48xlarge", gpus=8, efa=32, instance_store_gb=30400, spot=True)
    lustre = LustreMount("fs-1.fsx.us-east-1.amazonaws.com", "abcd1234", "/fsx")
    (entry,) = cloud_config(node_cloud_config("llm-train", role, {}, lustre, "25.05"))["mounts"]
    return "\t".join(entry) + "\n"


def test_systemd_makes_an_automount_that_waits_for_the_network(tmp_path: Path) -> None:
    if not GENERATOR.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{GENERATOR} missing (systemd)")
        pytest.skip("systemd's fstab generator is not installed")
    fstab = tmp_path / "fstab"
    fstab.write_text(fstab_line())
    out = [tmp_path / d for d in ("normal", "early", "late")]
    for d in out:
        d.mkdir()
    env = {"SYSTEMD_FSTAB": str(fstab), "SYSTEMD_IN_INITRD": "0", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    result = subprocess.run([str(GENERATOR), *map(str, out)], env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert (out[0] / "fsx.automount").exists() and (out[0] / "remote-fs.target.requires" / "fsx.automount").exists()
    unit = (out[0] / "fsx.mount").read_text()
    required = [line.split("=", 1)[1] for line in unit.splitlines() if line.startswith("Requires=")]
    assert required == ["network-online.target"]
    assert "Type=lustre" in unit and "What=fs-1.fsx.us-east-1.amazonaws.com@tcp:/abcd1234" in unit
    assert (UNITS / "network-online.target").exists()  # shipped by systemd itself, whatever manages the network
