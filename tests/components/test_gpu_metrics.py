"""GPU metrics on AWS PCS compute nodes (components/training/gpu_metrics.py): the CloudWatch agent's configuration
against the agent's documented keys, the node role's grants judged as AWS would, and the boot script run the way
cloud-init runs it (as root, systemd's environment: cloud-final.service) against a stand-in agent.

The documented keys and names are copied here from upstream, not read from the code under test:
- CloudWatch User Guide, "Manually create or edit the CloudWatch agent configuration file": the file's sections
  (agent, metrics, logs, traces), the metrics section's keys, and `append_dimensions`' allowed values;
- CloudWatch User Guide, "Collect NVIDIA GPU metrics": the `nvidia_gpu` section (measurement,
  metrics_collection_interval) and its measurement names, which aws/amazon-cloudwatch-agent ab55b8da
  translator/translate/metrics/config/registered_metrics.go lists alike for Linux (`nvidia_smi`).
"""

from __future__ import annotations

import base64
import email
import json
import os
import subprocess
from pathlib import Path

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.graph import Graph, tokens
from gpuinfra.graph.flows import Flow
from gpuinfra.plan import build_plan
from gpuinfra.preflight.access.judge import judge_flows
from gpuinfra.pulumi.components.flows import declared_flows
from gpuinfra.pulumi.components.training.gpu_metrics import gpu_metrics_script
from helpers import cloud_config, example_graph, inputs_for
from node_fakes import SYSTEMD_PATH, shellcheck

SECTIONS = {"agent", "metrics", "logs", "traces"}
METRICS_KEYS = {
    "namespace",
    "append_dimensions",
    "aggregation_dimensions",
    "endpoint_override",
    "metrics_collected",
    "force_flush_interval",
    "credentials",
}
APPEND_VALUES = {"${aws:ImageId}", "${aws:InstanceId}", "${aws:InstanceType}", "${aws:AutoScalingGroupName}"}
NVIDIA_KEYS = {"measurement", "metrics_collection_interval"}
NVIDIA_MEASUREMENTS = {
    "utilization_gpu",
    "temperature_gpu",
    "power_draw",
    "utilization_memory",
    "fan_speed",
    "memory_total",
    "memory_used",
    "memory_free",
    "pcie_link_gen_current",
    "pcie_link_width_current",
    "encoder_stats_session_count",
    "encoder_stats_average_fps",
    "encoder_stats_average_latency",
    "clocks_current_graphics",
    "clocks_current_sm",
    "clocks_current_memory",
    "clocks_current_video",
}
PARAMETER = "AmazonCloudWatch-gpuinfra-llm-train"
ACCOUNT = "111111111111"


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph("llm-train")


def agent_config(graph: Graph) -> dict:
    (parameter,) = graph.of_type(tokens.SSM_PARAMETER)
    assert parameter.inputs["name"] == PARAMETER
    assert parameter.inputs["type"] == "String" and parameter.inputs["tier"] == "Standard"
    return json.loads(parameter.inputs["insecureValue"])


def test_the_agent_configuration_uses_only_documented_keys(graph: Graph) -> None:
    config = agent_config(graph)
    assert set(config) <= SECTIONS
    metrics = config["metrics"]
    assert set(metrics) <= METRICS_KEYS
    assert set(metrics["append_dimensions"].values()) <= APPEND_VALUES
    assert set(metrics["metrics_collected"]) == {"nvidia_gpu"}
    gpu = metrics["metrics_collected"]["nvidia_gpu"]
    assert set(gpu) <= NVIDIA_KEYS
    assert gpu["measurement"] and set(gpu["measurement"]) <= NVIDIA_MEASUREMENTS
    assert gpu["metrics_collection_interval"] >= 60  # standard resolution: no high-resolution charge


def test_the_training_signals_are_collected(graph: Graph) -> None:
    gpu = agent_config(graph)["metrics"]["metrics_collected"]["nvidia_gpu"]["measurement"]
    assert {"utilization_gpu", "memory_used", "power_draw", "temperature_gpu", "clocks_current_sm"} <= set(gpu)


def user_data(graph: Graph, group: str) -> dict:
    (lt,) = [t for t in graph.of_type(tokens.LAUNCH_TEMPLATE) if t.name == f"llm-train-slurm-pcs-{group}-lt"]
    text = base64.b64decode(lt.inputs["userData"]).decode()
    part = next(p for p in email.message_from_string(text).walk() if p.get_content_type() == "text/cloud-config")
    return cloud_config(part.get_payload())


@pytest.mark.parametrize("group", ["od", "elastic"])  # the gang's reserved nodes and the elastic spot ones
def test_gpu_nodes_start_the_agent_once_from_cloud_init(graph: Graph, group: str) -> None:
    config = user_data(graph, group)
    (script,) = [f for f in config["write_files"] if f["path"] == "/opt/gpuinfra/gpu-metrics"]
    assert f"ssm:{PARAMETER}" in script["content"] and script["permissions"] == "0755"
    assert ["/opt/gpuinfra/gpu-metrics"] in config["runcmd"]


def test_the_login_node_runs_no_agent(graph: Graph) -> None:
    config = user_data(graph, "login")
    assert "/opt/gpuinfra/gpu-metrics" not in [f["path"] for f in config["write_files"]]


def test_the_user_data_waits_for_the_parameter(graph: Graph) -> None:
    """Every launch template's user data names the parameter's output, so it is created first."""
    (parameter,) = graph.of_type(tokens.SSM_PARAMETER)
    for group in ("od", "elastic"):
        (lt,) = [t for t in graph.of_type(tokens.LAUNCH_TEMPLATE) if t.name == f"llm-train-slurm-pcs-{group}-lt"]
        assert parameter.urn in lt.dependencies


def gpu_flows() -> list[Flow]:
    inputs = inputs_for("llm-train")
    flows = declared_flows(inputs, build_plan(inputs.spec, inputs.org.org, load_catalog()))
    # The compute nodes' role only: the login node's own role publishes the repair loop's UnavailableNodes.
    return [
        f
        for f in flows
        if f.action in ("cloudwatch:PutMetricData", "ssm:GetParameter") and f.principal == "llm-train-slurm-role"
    ]


def test_the_node_role_reads_the_configuration_and_publishes_its_namespace(graph: Graph) -> None:
    flows = gpu_flows()
    assert {f.action for f in flows} == {"cloudwatch:PutMetricData", "ssm:GetParameter"}
    judged = judge_flows(flows, [graph])
    assert [j.decision.outcome for j in judged] == ["allow", "allow"], [j.decision.reason for j in judged]


def test_the_node_role_may_not_publish_elsewhere_or_read_other_parameters(graph: Graph) -> None:
    """Judged on the role's own policy: the node role also carries the AWS-managed AmazonSSMManagedInstanceCore,
    whose text is not in the graph (with it the evaluator can only say unknown, which it does)."""
    put, get = sorted(gpu_flows(), key=lambda f: f.action)
    elsewhere = Flow(put.name, put.stack, put.principal, put.action, "*", context={"cloudwatch:namespace": "AWS/EC2"})
    other = Flow(get.name, get.stack, get.principal, get.action, get.resource.replace(PARAMETER, "AmazonCloudWatch-x"))
    assert {j.decision.outcome for j in judge_flows([elsewhere, other], [graph])} == {"unknown"}
    own = Graph.of(
        graph.stack,
        graph.project,
        [r for r in graph.resources if r.type != "aws:iam/rolePolicyAttachment:RolePolicyAttachment"],
    )
    assert [j.decision.outcome for j in judge_flows([elsewhere, other], [own])] == ["deny", "deny"]
    assert [j.decision.outcome for j in judge_flows([put, get], [own])] == ["allow", "allow"]


# ---- the boot script, run as cloud-init runs it -----------------------------------------------------------------
FAKE_CTL = '#!/bin/bash\nprintf "%s\\n" "$@" > "$(dirname "$0")/../ctl-args"\n'


def require_root() -> None:
    if os.geteuid() != 0:
        pytest.fail("needs root") if os.environ.get("CI") else pytest.skip("needs root (cloud-init runs it as root)")


def boot(tmp_path: Path, with_agent: bool, installer: str | None) -> subprocess.CompletedProcess[str]:
    """The script with the agent under tmp_path/agent; `installer` is the body of the fake dnf and yum."""
    require_root()
    agent, fakes = tmp_path / "agent", tmp_path / "bin"
    (agent / "bin").mkdir(parents=True)
    fakes.mkdir()
    if with_agent:
        (agent / "bin" / "amazon-cloudwatch-agent-ctl").write_text(FAKE_CTL)
        (agent / "bin" / "amazon-cloudwatch-agent-ctl").chmod(0o755)
    for tool in ("dnf", "yum"):
        (fakes / tool).write_text(f'#!/bin/bash\necho {tool} "$@" >> {tmp_path}/installs\n{installer or "exit 1"}\n')
        (fakes / tool).chmod(0o755)
    script = tmp_path / "gpu-metrics"
    script.write_text(gpu_metrics_script("llm-train", PARAMETER, agent_dir=str(agent)))
    script.chmod(0o755)
    env = {"PATH": f"{fakes}:{SYSTEMD_PATH}"}
    return subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=60)


def test_the_agent_on_the_ami_is_started_from_the_parameter(tmp_path: Path) -> None:
    result = boot(tmp_path, with_agent=True, installer=None)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "agent" / "ctl-args").read_text().split() == [
        "-a", "fetch-config", "-m", "ec2", "-s", "-c", f"ssm:{PARAMETER}",
    ]  # fmt: skip
    assert not (tmp_path / "installs").exists()


def test_an_ami_without_the_agent_installs_it_from_the_repositories(tmp_path: Path) -> None:
    ctl = tmp_path / "agent" / "bin" / "amazon-cloudwatch-agent-ctl"
    install = f"printf '%s' '{FAKE_CTL}' > {ctl} && chmod 755 {ctl}"
    result = boot(tmp_path, with_agent=False, installer=install)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "installs").read_text() == "dnf install -y amazon-cloudwatch-agent\n"
    assert f"ssm:{PARAMETER}" in (tmp_path / "agent" / "ctl-args").read_text()


def test_no_agent_and_no_install_fails_loudly(tmp_path: Path) -> None:
    result = boot(tmp_path, with_agent=False, installer=None)
    assert result.returncode == 2
    assert "no CloudWatch agent" in result.stderr
    assert (tmp_path / "installs").read_text().split("\n")[:2] == [
        "dnf install -y amazon-cloudwatch-agent",
        "yum install -y amazon-cloudwatch-agent",
    ]


def test_shellcheck_passes(tmp_path: Path) -> None:
    result = shellcheck(gpu_metrics_script("llm-train", PARAMETER), tmp_path)
    assert result.returncode == 0, result.stdout
