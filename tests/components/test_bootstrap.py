"""Rendered bootstrap: every script passes `bash -n`, every cloud-config parses as YAML, and the Slurm
topology follows the planner's racks."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from helpers import assert_bash_ok, checked, cloud_config, example_graph, scripts

from infra.plan import TrainingPlan
from infra.plan.racks import rack_layout
from infra.pulumi.components.training.bootstrap import (
    LustreMount,
    SlurmCluster,
    controller_cloud_init,
    node_cloud_init,
    node_range,
    rack_node_ranges,
    slurm_files,
)


def slurm(racks: int = 4) -> SlurmCluster:
    layout = rack_layout(racks * 4, 10.2, 44, "direct_liquid", 80, 1.2)
    return SlurmCluster(
        "llm-train",
        "10.0.0.10",
        racks * 4,
        192,
        2048,
        8,
        "train",
        layout.racks,
        "llm-train-nodes",
        "/gpuinfra/llm-train/munge-key",
    )


@pytest.mark.parametrize("interconnect", ["efa", "none"])
@pytest.mark.parametrize("spot", [True, False])
@pytest.mark.parametrize("with_slurm", [True, False])
def test_node_cloud_init_parses_and_scripts_pass_bash_n(
    tmp_path: Path, interconnect: str, spot: bool, with_slurm: bool
) -> None:
    text = node_cloud_init(
        "llm-train",
        "us-east-1",
        "p5.48xlarge",
        interconnect,
        LustreMount("fs-1.fsx.us-east-1.amazonaws.com", "abcd1234", "/fsx"),
        slurm() if with_slurm else None,
        spot,
    )
    config = cloud_config(text)
    found = scripts(config)
    assert len(found) == (2 if spot else 1)
    for script in found:
        assert_bash_ok(script, tmp_path)
    paths = {f["path"] for f in config["write_files"]}
    assert ("/etc/slurm/topology.conf" in paths) is with_slurm
    env = next(f["content"] for f in config["write_files"] if f["path"] == "/etc/profile.d/gpuinfra-nccl.sh")
    assert ("FI_PROVIDER=efa" in env) is (interconnect == "efa")
    assert_bash_ok(env, tmp_path)


def test_bootstrap_mounts_lustre_and_watcher_polls_imdsv2(tmp_path: Path) -> None:
    config = cloud_config(
        node_cloud_init("c", "us-east-1", "p5.48xlarge", "efa", LustreMount("fs-9.fsx", "mnt9", "/fsx"), slurm(), True)
    )
    bootstrap, watcher = scripts(config)
    assert "mount -t lustre -o relatime,flock fs-9.fsx@tcp:/mnt9 /fsx" in bootstrap
    assert "X-aws-ec2-metadata-token" in watcher and "spot/instance-action" in watcher
    assert "scancel --signal=USR1" in watcher


def test_controller_cloud_init(tmp_path: Path) -> None:
    config = cloud_config(controller_cloud_init(slurm(), "us-east-1"))
    for script in scripts(config):
        assert_bash_ok(script, tmp_path)


def test_topology_has_one_switch_per_planned_rack() -> None:
    plan = checked("llm-train").plan
    assert isinstance(plan, TrainingPlan) and plan.racks
    files = {f["path"]: f["content"] for f in slurm_files(slurm(len(plan.racks.racks)))}
    topology = files["/etc/slurm/topology.conf"]
    assert "SwitchName=rack0 Nodes=gpu-[000-003]" in topology
    assert "SwitchName=rack3 Nodes=gpu-[012-015]" in topology
    assert "SwitchName=spine Switches=rack[0-3]" in topology
    conf = files["/etc/slurm/slurm.conf"]
    assert "NodeName=gpu-[000-015] CPUs=192" in conf and "Gres=gpu:8" in conf
    assert "TopologyPlugin=topology/tree" in conf


def test_uneven_racks_get_contiguous_ranges() -> None:
    layout = rack_layout(10, 10.2, 44, "direct_liquid", 80, 1.2)
    assert rack_node_ranges(layout.racks) == [(0, "gpu-[000-003]"), (1, "gpu-[004-006]"), (2, "gpu-[007-009]")]
    assert node_range(5, 1) == "gpu-005"


def test_the_graph_carries_the_rendered_user_data(tmp_path: Path) -> None:
    lt = example_graph("llm-train").one("aws:ec2/launchTemplate:LaunchTemplate")
    text = base64.b64decode(lt.inputs["userData"]).decode()
    config = cloud_config(text)
    assert any("slurm.conf" in f["path"] for f in config["write_files"])
    assert ".fsx.us-east-1.amazonaws.com@tcp:/" in text  # the file system's DNS name flowed into user data
