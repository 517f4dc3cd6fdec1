"""Rendered PCS node user data: MIME multi-part around one cloud-config that parses as YAML, every script passes
`bash -n`, the job environment is what the cluster's TaskProlog prints (not /etc/profile.d), the health check
drains, the watchers checkpoint and drain, and units are enabled so a rebooted node comes back."""

from __future__ import annotations

import base64
import datetime
import email
from pathlib import Path

import pytest
from gpuinfra.graph import tokens
from gpuinfra.pulumi.components.training.bootstrap import (
    LustreMount,
    NodeRole,
    Retention,
    job_environment,
    mime_user_data,
    node_cloud_config,
)
from gpuinfra.pulumi.components.training.fabric import nccl_environment
from gpuinfra.pulumi.components.training.pcs import CLUSTER_SLURM_SETTINGS
from helpers import assert_bash_ok, cloud_config, example_graph, scripts

LUSTRE = LustreMount("fs-1.fsx.us-east-1.amazonaws.com", "abcd1234", "/fsx")
AT = datetime.datetime(2027, 1, 14, 10, 30, tzinfo=datetime.UTC)
SLURM = "25.05"
RETENTION = Retention("/fsx/checkpoints", "acme-ckpt", "checkpoints/", 3, "MILESTONE", 14)


def files(config: dict[str, object]) -> dict[str, str]:
    return {f["path"]: f["content"] for f in config["write_files"]}  # type: ignore[attr-defined, index]


@pytest.mark.parametrize(
    "node",
    [
        NodeRole("compute", "p5.48xlarge", gpus=8, efa=32, instance_store_gb=30400, spot=True),
        NodeRole("compute", "p5.48xlarge", gpus=8, efa=32, instance_store_gb=30400, block_checkpoint_at=AT),
        NodeRole("compute", "p4d.24xlarge", gpus=8, efa=4, instance_store_gb=8000),
        NodeRole("login", "m7i.2xlarge", retention=RETENTION),
    ],
    ids=["spot", "capacity-block", "on-demand", "login"],
)
def test_user_data_is_mime_cloud_config_and_scripts_pass_bash_n(tmp_path: Path, node: NodeRole) -> None:
    text = mime_user_data(node_cloud_config("llm-train", node, nccl_environment("efa"), LUSTRE, SLURM))
    message = email.message_from_string(text)
    assert message.is_multipart()
    parts = [p for p in message.walk() if not p.is_multipart()]
    assert [p.get_content_type() for p in parts] == ["text/cloud-config"]
    config = cloud_config(parts[0].get_payload())
    for script in scripts(config):
        assert_bash_ok(script, tmp_path)
    paths = set(files(config))
    compute = node.role == "compute"
    assert ("/opt/gpuinfra/health-check" in paths) is compute
    assert ("/opt/gpuinfra/interruption-watcher" in paths) is (node.spot or node.block_checkpoint_at is not None)
    assert ("/opt/gpuinfra/prune-checkpoints" in paths) is (node.retention is not None)
    assert not any(p.startswith("/etc/profile.d") for p in paths)
    enabled = [c[3] for c in config["runcmd"] if c[:3] == ["systemctl", "enable", "--now"]]
    assert ("gpuinfra-scratch.service" in enabled) is compute
    assert config["mounts"][0][:3] == ["fs-1.fsx.us-east-1.amazonaws.com@tcp:/abcd1234", "/fsx", "lustre"]


def test_the_environment_is_in_the_jobs_path(tmp_path: Path) -> None:
    """The cluster's TaskProlog prints the environment file's `export` lines, which Slurm sets in every task."""
    assert CLUSTER_SLURM_SETTINGS["TaskProlog"] == "/opt/gpuinfra/task-prolog"
    config = cloud_config(node_cloud_config("c", NodeRole("compute", "p5.48xlarge", gpus=8), {"A": "1"}, None, SLURM))
    prolog = files(config)["/opt/gpuinfra/task-prolog"]
    env_file = tmp_path / "job-env.sh"
    env_file.write_text(files(config)["/etc/gpuinfra/job-env.sh"])
    script = tmp_path / "prolog.sh"
    script.write_text(prolog.replace("/etc/gpuinfra/job-env.sh", str(env_file)))
    import subprocess

    out = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=True).stdout
    assert out == "export A=1\n"


def test_efa_environment_has_no_legacy_variables_and_does_not_force_the_plugin() -> None:
    env = nccl_environment("efa")
    for legacy in ("FI_PROVIDER", "FI_EFA_USE_DEVICE_RDMA", "FI_EFA_FORK_SAFE", "NCCL_NET_PLUGIN"):
        assert legacy not in env
    assert job_environment({"NCCL_SOCKET_IFNAME": "^docker,lo,veth"}) == "export NCCL_SOCKET_IFNAME=^docker,lo,veth\n"


def test_health_check_counts_gpus_and_efa_and_drains() -> None:
    config = cloud_config(node_cloud_config("c", NodeRole("compute", "p5.48xlarge", gpus=8, efa=32), {}, None, SLURM))
    check = files(config)["/opt/gpuinfra/health-check"]
    assert "\ngpus=8\n" in check and '[ "$found" -eq "$gpus" ]' in check
    assert "\nefa=32\n" in check and '[ "$#" -ge "$efa" ]' in check
    assert "state=drain" in check and "nvidia-smi" in check


def test_watchers_checkpoint_and_drain() -> None:
    spot = files(cloud_config(node_cloud_config("c", NodeRole("compute", "p5.48xlarge", spot=True), {}, None, SLURM)))
    watcher = spot["/opt/gpuinfra/interruption-watcher"]
    assert "X-aws-ec2-metadata-token" in watcher and "/latest/meta-data/spot/instance-action" in watcher
    # torchrun forwards TERM/INT/HUP/QUIT, not USR1 (test_interruption_watcher.py runs the watcher for real)
    assert '"$slurm/scancel" --signal=TERM "$job"' in watcher and "--signal=USR1" not in watcher
    block = files(
        cloud_config(
            node_cloud_config("c", NodeRole("compute", "p5.48xlarge", block_checkpoint_at=AT), {}, None, SLURM)
        )
    )
    assert f"-ge {int(AT.timestamp())} ]" in block["/opt/gpuinfra/interruption-watcher"]


def test_the_graph_carries_the_rendered_user_data() -> None:
    graph = example_graph("llm-train")
    templates = {r.name: r for r in graph.of_type(tokens.LAUNCH_TEMPLATE)}
    text = base64.b64decode(templates["llm-train-slurm-pcs-elastic-lt"].inputs["userData"]).decode()
    part = next(p for p in email.message_from_string(text).walk() if p.get_content_type() == "text/cloud-config")
    assert "/opt/gpuinfra/interruption-watcher" in part.get_payload()


def test_scripts_travel_packed_and_the_diff_reads_them_unpacked() -> None:
    """gz+b64 write_files (cloud-init cc_write_files decodes base64, then gunzips): the PR diff's first differing
    line of a launch template's user data is the script line that changed, not the packed blob."""
    from gpuinfra.report.model import PropertyChangeOut
    from gpuinfra.report.render.parts import pair

    before, after = (
        mime_user_data(node_cloud_config("c", NodeRole("compute", "p5.48xlarge", gpus=n, efa=32), {}, LUSTRE, SLURM))
        for n in (8, 4)
    )
    assert "encoding: gz+b64" in before and "GPUs visible" not in before  # the health check travels packed
    b64 = [base64.b64encode(t.encode()).decode() for t in (before, after)]
    old, new = pair(PropertyChangeOut(path="userData", before=b64[0], after=b64[1], effect="update"))
    assert old.endswith("gpus=8"), old  # the health check's expected count, the line that differs
    assert new.endswith("gpus=4"), new
