"""GPU metrics of AWS PCS compute nodes: the CloudWatch agent's `nvidia_gpu` section, configured and started by the
node's user data (gpu-metrics.sh.j2), publishing into one namespace the node role may write and no other.

Upstream facts, each settling a choice here:
- The section and its keys: CloudWatch User Guide, "Collect NVIDIA GPU metrics" and "Manually create or edit the
  CloudWatch agent configuration file" (`metrics.namespace`, `metrics.append_dimensions` with `${aws:InstanceId}`
  and `${aws:InstanceType}`, `metrics.metrics_collected.nvidia_gpu.measurement`, `metrics_collection_interval`).
  aws/amazon-cloudwatch-agent at ab55b8da (2026-08-07) agrees: translator/translate/metrics/metrics_collect/gpu/
  nvidiaSmi.go reads the `nvidia_gpu` key (mapped to telegraf's nvidia_smi input), and translator/translate/
  metrics/config/registered_metrics.go lists the measurement names the translator accepts on Linux.
- The measurements: what says whether a training step is GPU-bound, memory-bound or throttled, per GPU:
  utilization (SMs, memory bandwidth), memory used of total, SM clock, power and temperature. Each is one custom
  metric per GPU (the agent adds the GPU's index, name and uuid as dimensions), so the list is kept short: see
  docs/training-operations.md for the count.
- Where the configuration lives: a Systems Manager parameter, read by the agent itself with
  `amazon-cloudwatch-agent-ctl -a fetch-config -m ec2 -s -c ssm:<name>` (CloudWatch User Guide, "Start the
  CloudWatch agent using the command line": `-c ssm:parameter-store-name`; "Upload the CloudWatch agent
  configuration file to Systems Manager Parameter Store": names starting AmazonCloudWatch-). Not in user data:
  EC2 takes 16 KB of it and a spot node's was already within 800 bytes of the 15 KB gpuinfra allows itself
  (tests/components/test_training_graph.py). `-s` (re)starts and enables the agent, so it comes back after a
  reboot with the configuration it fetched: cloud-init runs the script once (runcmd), as root.
- The agent's package: on the AMI, like the PCS agent and the NVIDIA driver; Amazon Linux's repositories carry it
  (CloudWatch User Guide, "Install the CloudWatch agent using a package manager": yum install
  amazon-cloudwatch-agent), so the script installs it from there when the AMI lacks it and fails loudly elsewhere.
- The node role's grants: cloudwatch:PutMetricData has no resource type, so "*" with the `cloudwatch:namespace`
  condition key (CloudWatch User Guide, "Using condition keys to limit access to CloudWatch namespaces");
  ssm:GetParameter on the one parameter (Service Authorization Reference: resource type `parameter`).
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws

from gpuinfra.pulumi.components import iam
from gpuinfra.pulumi.templates import render

NAMESPACE = "gpuinfra/Training"
AGENT_DIR = "/opt/aws/amazon-cloudwatch-agent"
"""Where the agent's package installs it (its ctl script is bin/amazon-cloudwatch-agent-ctl)."""
PARAMETER_PREFIX = "AmazonCloudWatch-"
SCRIPT_PATH = "/opt/gpuinfra/gpu-metrics"
INTERVAL_SECONDS = 60
"""One sample a minute: the agent's default, and CloudWatch's standard resolution (no high-resolution charge)."""
MEASUREMENTS = (
    "utilization_gpu",
    "utilization_memory",
    "memory_used",
    "memory_total",
    "clocks_current_sm",
    "power_draw",
    "temperature_gpu",
)


def agent_config() -> dict[str, Any]:
    """The agent's configuration file: GPU metrics only, into NAMESPACE, each tagged with the instance."""
    return {
        "metrics": {
            "namespace": NAMESPACE,
            "append_dimensions": {"InstanceId": "${aws:InstanceId}", "InstanceType": "${aws:InstanceType}"},
            "metrics_collected": {
                "nvidia_gpu": {"measurement": list(MEASUREMENTS), "metrics_collection_interval": INTERVAL_SECONDS}
            },
        }
    }


def agent_config_json() -> str:
    return json.dumps(agent_config(), indent=2, sort_keys=True)


def parameter_name(cluster: str) -> str:
    return f"{PARAMETER_PREFIX}gpuinfra-{cluster}"


def agent_parameter(name: str, cluster: str, o: pulumi.ResourceOptions) -> aws.ssm.Parameter:
    """The agent's configuration as a standard String parameter (no key, no charge of its own); insecure_value:
    it holds no secret, and the diff then shows a change to it."""
    return aws.ssm.Parameter(
        f"{name}-gpu-metrics",
        name=parameter_name(cluster),
        type="String",
        tier="Standard",
        insecure_value=agent_config_json(),
        description=f"{cluster}: CloudWatch agent configuration of the GPU nodes (gpuinfra)",
        opts=o,
    )


def gpu_metrics_script(cluster: str, parameter: str, agent_dir: str = AGENT_DIR) -> str:
    """The boot script that installs the agent when the AMI lacks it and starts it on `parameter`; `agent_dir`
    is only changed by tests."""
    return render("training/gpu-metrics.sh.j2", cluster=cluster, agent_dir=agent_dir, parameter=parameter)


def node_statements(region: str, account_id: str, cluster: str) -> list[iam.Statement]:
    """The node role may publish metrics into NAMESPACE only, and read the agent's parameter."""
    return [
        {
            "Sid": "GpuMetrics",
            "Effect": "Allow",
            "Action": ["cloudwatch:PutMetricData"],
            "Resource": ["*"],
            "Condition": {"StringEquals": {"cloudwatch:namespace": NAMESPACE}},
        },
        {
            "Sid": "GpuMetricsAgentConfig",
            "Effect": "Allow",
            "Action": ["ssm:GetParameter"],
            "Resource": [f"arn:aws:ssm:{region}:{account_id}:parameter/{parameter_name(cluster)}"],
        },
    ]


__all__ = [
    "AGENT_DIR",
    "INTERVAL_SECONDS",
    "MEASUREMENTS",
    "NAMESPACE",
    "PARAMETER_PREFIX",
    "SCRIPT_PATH",
    "agent_config",
    "agent_config_json",
    "agent_parameter",
    "gpu_metrics_script",
    "node_statements",
    "parameter_name",
]
