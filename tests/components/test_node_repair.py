"""The PCS repair loop (node-repair.sh.j2) as systemd runs it on the login node, against a real one-node Slurm
(tests/slurm_local.py: Slurm only at the PCS path) and moto's EC2 server, with the real AWS CLI; the node is drained
and marked passing by the generated health check itself, run as slurmd runs it (SLURMD_NODENAME alone), with a
stand-in nvidia-smi whose GPU count the test sets.

What each test holds the loop to (the issue's "done when"): a node drained by the health check is terminated once
(its replacement never), a passing node is resumed, a flapping node is rate-limited, and at most N terminations an
hour. Figures (GPU counts, limits, grace) are the test's own choices, passed in."""

from __future__ import annotations

import os
import shlex
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from gpuinfra.pulumi.components.training.bootstrap import NodeRole, health_check, slurm_bin
from gpuinfra.pulumi.components.training.node_repair import ROLE_TAG, Repair, node_repair
from slurm_local import NODE, SYSTEMD_PATH, SlurmCluster, slurm_cluster

boto3 = pytest.importorskip("boto3")
moto_server = pytest.importorskip("moto.server")

VERSION = "25.05"
REGION = "us-east-1"
STACK = "llm-train"
AWS_CLI = Path(sys.executable).parent / "aws"
FAKE_NVIDIA_SMI = """#!/bin/bash
# nvidia-smi -L: one line per GPU, as many as the test's file says; --query-gpu=ecc...: one count per GPU, the
# first GPU's from the test's ecc file (0 when absent).
n=$(cat {count})
if [ "$1" = -L ]; then
  for ((i = 0; i < n; i++)); do echo "GPU $i: NVIDIA H100 80GB HBM3 (UUID: GPU-$i)"; done
else
  first=$(cat {count}.ecc 2>/dev/null || echo 0)
  echo "$first"
  for ((i = 1; i < n; i++)); do echo 0; done
fi
"""
FAKE_JOURNALCTL = """#!/bin/bash
# journalctl -k --since ... -o cat: the test's kernel log lines.
cat {log} 2>/dev/null
"""


@dataclass
class Ec2:
    client: Any
    url: str
    subnet: str

    def launch(self, ip: str, role: str = "compute", stack: str = STACK, subnet: str | None = None) -> str:
        tags = [{"Key": "gpuinfra:stack", "Value": stack}, {"Key": ROLE_TAG, "Value": role}]
        reply = self.client.run_instances(
            ImageId="ami-12c6146b",
            MinCount=1,
            MaxCount=1,
            SubnetId=subnet or self.subnet,
            PrivateIpAddress=ip,
            TagSpecifications=[{"ResourceType": "instance", "Tags": tags}],
        )
        return str(reply["Instances"][0]["InstanceId"])

    def another_subnet(self) -> str:
        """moto keeps a terminated instance's address in its subnet ("IP already in use"): a replacement at the same
        address comes up in a second VPC of the same range."""
        vpc = self.client.create_vpc(CidrBlock="127.0.0.0/16")["Vpc"]["VpcId"]
        return str(self.client.create_subnet(VpcId=vpc, CidrBlock="127.0.0.0/24")["Subnet"]["SubnetId"])

    def state(self, instance: str) -> str:
        found = self.client.describe_instances(InstanceIds=[instance])["Reservations"][0]["Instances"][0]
        return str(found["State"]["Name"])


@pytest.fixture
def ec2() -> Iterator[Ec2]:
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    # moto's backends are per process, shared by every server in it: start each test from an empty account
    urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST"), timeout=10).close()
    client = boto3.client(
        "ec2", region_name=REGION, endpoint_url=url, aws_access_key_id="test", aws_secret_access_key="test"
    )
    vpc = client.create_vpc(CidrBlock="127.0.0.0/16")["Vpc"]["VpcId"]
    subnet = client.create_subnet(VpcId=vpc, CidrBlock="127.0.0.0/24")["Subnet"]["SubnetId"]
    yield Ec2(client, url, subnet)
    server.stop()


@dataclass
class Node:
    """The login node's and the compute node's tools in one folder bind-mounted over /usr/local/bin in slurmd's
    namespace: the real AWS CLI and the stand-in nvidia-smi."""

    cluster: SlurmCluster
    ec2: Ec2
    root: Path
    repair_script: Path
    check_script: Path

    def gpus(self, n: int) -> None:
        (self.root / "gpus").write_text(str(n))

    def _run(self, script: Path, env: dict[str, str]) -> str:
        tools = self.root / "bin"
        command = f"mount --bind {shlex.quote(str(tools))} /usr/local/bin && exec {shlex.quote(str(script))}"
        result = self.cluster.in_namespace(["/bin/bash", "-c", command], env)
        return result.stdout + result.stderr + f"\nrc={result.returncode}"

    def check(self) -> str:
        """The health check as slurmd runs it: SLURMD_NODENAME and nothing else."""
        return self._run(self.check_script, {"SLURMD_NODENAME": NODE})

    def aws_env(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL": self.ec2.url,
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_CONFIG_FILE": str(self.root / "no-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(self.root / "no-credentials"),
        }

    def repair(self) -> str:
        """The repair loop as its unit runs it: systemd's PATH, STATE_DIRECTORY, the instance role's credentials
        (here plain keys) and the endpoint moto answers on."""
        out = self._run(
            self.repair_script,
            {
                "PATH": SYSTEMD_PATH,
                "STATE_DIRECTORY": str(self.root / "state"),
                "AWS_ENDPOINT_URL": self.ec2.url,
                "AWS_ACCESS_KEY_ID": "test",
                "AWS_SECRET_ACCESS_KEY": "test",
                "AWS_CONFIG_FILE": str(self.root / "no-config"),
                "AWS_SHARED_CREDENTIALS_FILE": str(self.root / "no-credentials"),
            },
        )
        assert out.endswith("rc=0"), out
        return out

    def audit(self) -> list[list[str]]:
        path = self.root / "state" / "audit.log"
        return [line.split("\t") for line in path.read_text().splitlines()] if path.exists() else []

    def actions(self, action: str) -> list[list[str]]:
        return [line for line in self.audit() if line[1] == action]

    def state(self) -> str:
        return self.cluster.node().get("State", "")

    def reason(self) -> str:
        return self.cluster.node().get("Reason", "")


def _node(cluster: SlurmCluster, ec2: Ec2, root: Path, **repair: Any) -> Node:
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "aws").symlink_to(AWS_CLI)
    smi = root / "bin" / "nvidia-smi"
    smi.write_text(FAKE_NVIDIA_SMI.format(count=root / "gpus"))
    smi.chmod(0o755)
    journal = root / "bin" / "journalctl"
    journal.write_text(FAKE_JOURNALCTL.format(log=root / "kernel.log"))
    journal.chmod(0o755)
    check = root / "health-check"
    check.write_text(health_check(STACK, NodeRole("compute", "p5.48xlarge", gpus=8), VERSION))
    script = root / "node-repair"
    script.write_text(node_repair(STACK, Repair(STACK, REGION, **repair), slurm_bin(VERSION), VERSION))
    for path in (check, script):
        path.chmod(0o755)
    node = Node(cluster, ec2, root, script, check)
    node.gpus(8)
    return node


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[SlurmCluster]:
    with slurm_cluster(tmp_path / "slurm", VERSION) as c:
        c.wait_for(lambda: "IDLE" in c.node().get("State", ""), "the node to be idle")
        yield c


def _drain_by_the_check(node: Node) -> None:
    node.gpus(7)
    out = node.check()
    assert out.endswith("rc=1"), out
    assert "DRAIN" in node.state() and node.reason().startswith("gpuinfra health: 7 of 8 GPUs visible")


def _pass_the_check(node: Node) -> None:
    node.gpus(8)
    out = node.check()
    assert out.endswith("rc=0"), out
    assert node.reason().startswith("gpuinfra health passed (was: 7 of 8 GPUs visible) ["), node.reason()


def test_a_drained_node_is_terminated_once_after_the_grace_and_its_replacement_never(
    cluster: SlurmCluster, ec2: Ec2, tmp_path: Path
) -> None:
    node = _node(cluster, ec2, tmp_path / "node", grace_seconds=3)
    failed = ec2.launch("127.0.0.1")
    other_stack = ec2.launch("127.0.0.2", stack="another-stack")
    time.sleep(1.1)  # the drain's time (whole seconds) comes after the instance's launch
    _drain_by_the_check(node)
    first_drain = node.cluster.node()["Reason"]

    node.repair()  # within the grace: a transient failure gets its next check first
    assert ec2.state(failed) == "running" and node.actions("terminate") == []

    # the check keeps failing: the drain (and its time) stays the first one
    assert node.check().endswith("rc=1") and node.cluster.node()["Reason"] == first_drain
    time.sleep(3.2)
    node.repair()
    assert ec2.state(failed) in ("shutting-down", "terminated")
    assert [line[2:4] for line in node.actions("terminate")] == [[NODE, failed]]

    # PCS launches the replacement at the same address; the node still shows the old drain until its check runs
    time.sleep(1.1)
    replacement = ec2.launch("127.0.0.1", subnet=ec2.another_subnet())
    node.repair()
    node.repair()
    assert ec2.state(replacement) == "running"
    assert ec2.state(other_stack) == "running"
    assert len(node.actions("terminate")) == 1
    assert any(line[3] == replacement and "replacement" in line[4] for line in node.actions("waiting"))


def test_a_node_whose_check_passes_again_is_resumed_not_replaced(
    cluster: SlurmCluster, ec2: Ec2, tmp_path: Path
) -> None:
    node = _node(cluster, ec2, tmp_path / "node", grace_seconds=600)
    instance = ec2.launch("127.0.0.1")
    _drain_by_the_check(node)
    node.repair()
    assert "DRAIN" in node.state()  # failed, within the grace: neither resumed nor replaced
    _pass_the_check(node)
    assert "DRAIN" in node.state()  # the check marks it; the loop resumes it
    node.repair()
    cluster.wait_for(lambda: "DRAIN" not in node.state(), "the node to be resumed")
    assert "IDLE" in node.state()
    assert ec2.state(instance) == "running"
    assert [line[2] for line in node.actions("resume")] == [NODE]
    # a passing check on a healthy node changes nothing
    assert node.check().endswith("rc=0") and "DRAIN" not in node.state()


def test_a_flapping_node_is_resumed_twice_then_rate_limited_and_replaced(
    cluster: SlurmCluster, ec2: Ec2, tmp_path: Path
) -> None:
    node = _node(cluster, ec2, tmp_path / "node", grace_seconds=2, max_resumes=2, window_seconds=3600)
    instance = ec2.launch("127.0.0.1")
    for _ in range(2):
        _drain_by_the_check(node)
        _pass_the_check(node)
        node.repair()
        # Back to IDLE, and responding, before the next cycle: on a loaded machine slurmctld may mark the node
        # not responding for a moment (DOWN, which the repair loop rightly leaves to Slurm), and a drain then
        # would not be the check's alone. Waiting for the whole state keeps each cycle the one the test means.
        cluster.wait_for(lambda: node.state() == "IDLE", "the node to be resumed and responding", seconds=90)
    _drain_by_the_check(node)
    _pass_the_check(node)
    node.repair()
    assert "DRAIN" in node.state(), "a third resume within the window"
    assert node.reason().startswith("gpuinfra health: flapping"), node.reason()
    assert len(node.actions("resume")) == 2 and len(node.actions("rate-limited")) == 1
    time.sleep(2.2)
    node.repair()  # drained as failed for longer than the grace: replaced
    assert ec2.state(instance) in ("shutting-down", "terminated")


def test_terminations_stop_at_the_hourly_limit(cluster: SlurmCluster, ec2: Ec2, tmp_path: Path) -> None:
    """A broken image drains every node at once: past the limit, nodes stay drained (and the audit says why)."""
    node = _node(cluster, ec2, tmp_path / "node", grace_seconds=0, max_terminations=1)
    instance = ec2.launch("127.0.0.1")
    (node.root / "state").mkdir()
    earlier = int(time.time()) - 600
    (node.root / "state" / "audit.log").write_text(f"{earlier}\tterminate\tpcsnode9\ti-0aaaaaaaaaaaaaaaa\tdrained\n")
    time.sleep(1.1)
    _drain_by_the_check(node)
    node.repair()
    assert ec2.state(instance) == "running"
    assert [line[3] for line in node.actions("rate-limited")] == [instance]
    # an hour later (the earlier termination out of the window) it goes ahead
    old = earlier - 3600
    (node.root / "state" / "audit.log").write_text(f"{old}\tterminate\tpcsnode9\ti-0aaaaaaaaaaaaaaaa\tdrained\n")
    node.repair()
    assert ec2.state(instance) in ("shutting-down", "terminated")


def test_a_node_an_operator_drained_is_left_alone(cluster: SlurmCluster, ec2: Ec2, tmp_path: Path) -> None:
    node = _node(cluster, ec2, tmp_path / "node", grace_seconds=0)
    instance = ec2.launch("127.0.0.1")
    cluster.run("scontrol", "update", f"nodename={NODE}", "state=drain", "reason=maintenance: firmware")
    time.sleep(1.1)
    node.repair()
    assert ec2.state(instance) == "running" and "DRAIN" in node.state() and node.audit() == []


def test_the_script_needs_slurm_where_pcs_keeps_it() -> None:
    text = node_repair(STACK, Repair(STACK, REGION), slurm_bin("24.11"), "24.11")
    assert "/opt/aws/pcs/scheduler/slurm-24.11/bin" in text
    assert os.path.basename(slurm_bin(VERSION)) == "bin"


def test_the_health_check_timer_drains_by_the_local_slurmd_s_name(
    cluster: SlurmCluster, ec2: Ec2, tmp_path: Path
) -> None:
    """Run as gpuinfra-health-check.service runs it: systemd's PATH, no SLURMD_NODENAME (the node's name comes from
    the local slurmd, as PCS names nodes itself)."""
    node = _node(cluster, ec2, tmp_path / "node")
    node.gpus(6)
    out = node._run(node.check_script, {"PATH": SYSTEMD_PATH})
    assert out.endswith("rc=1"), out
    assert "DRAIN" in node.state() and node.reason().startswith("gpuinfra health: 6 of 8 GPUs visible")


def test_a_critical_xid_drains_the_node_and_reaches_the_gpu_errors_metric(
    cluster: SlurmCluster, ec2: Ec2, tmp_path: Path
) -> None:
    """Xid 79 (the GPU fell off the bus) in the kernel log: the check publishes GpuErrors (moto's CloudWatch) and
    drains; an application Xid (13) alone changes nothing."""
    node = _node(cluster, ec2, tmp_path / "node")
    check = node.root / "health-check-metrics"
    role = NodeRole("compute", "p5.48xlarge", gpus=8, metrics_region=REGION)
    check.write_text(health_check(STACK, role, VERSION))
    check.chmod(0o755)
    env = {"SLURMD_NODENAME": NODE, **node.aws_env()}
    kernel = node.root / "kernel.log"
    kernel.write_text("NVRM: Xid (PCI:0000:53:00): 13, pid=4242, Graphics Exception\n")
    assert node._run(check, env).endswith("rc=0") and "DRAIN" not in node.state()
    kernel.write_text("NVRM: Xid (PCI:0000:53:00): 79, pid=0, GPU has fallen off the bus.\n")
    out = node._run(check, env)
    assert out.endswith("rc=1"), out
    assert node.reason().startswith("gpuinfra health: GPU errors: 1 critical Xid events, 0 uncorrected ECC errors")
    cloudwatch = boto3.client(
        "cloudwatch", region_name=REGION, endpoint_url=ec2.url, aws_access_key_id="t", aws_secret_access_key="t"
    )
    metrics = cloudwatch.list_metrics(Namespace="gpuinfra/Training", MetricName="GpuErrors")["Metrics"]
    assert [m["Dimensions"] for m in metrics] == [[{"Name": "Cluster", "Value": STACK}]]


def test_uncorrected_ecc_errors_drain_too(cluster: SlurmCluster, ec2: Ec2, tmp_path: Path) -> None:
    node = _node(cluster, ec2, tmp_path / "node")
    (node.root / "gpus.ecc").write_text("3")
    out = node.check()
    assert out.endswith("rc=1"), out
    assert node.reason().startswith("gpuinfra health: GPU errors: 0 critical Xid events, 3 uncorrected ECC errors")
