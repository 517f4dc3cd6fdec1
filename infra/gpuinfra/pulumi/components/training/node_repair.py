"""The PCS repair loop: a timer on the login node that replaces nodes the health check drained and resumes the
ones whose check passes again (templates/training/node-repair.sh.j2), and the IAM it needs on the login node's role.

Why a loop of our own: PCS's node health and repair (ComputeNodeGroup instanceHealthChecks) needs Slurm 26.05 and is
not in the AWS::PCS::ComputeNodeGroup schema the stacks create node groups with (pcs.INSTANCE_HEALTH_CHECKS_SLURM),
and Slurm's HealthCheckProgram only drains. PCS keeps a static node group at its minimum count, launching an
instance again when one is terminated (AWS PCS User Guide, "Static and dynamic nodes in AWS PCS"); terminating the
drained node's instance is how a node gets replaced, as ParallelCluster's clustermgtd does for static nodes
(aws/aws-parallelcluster-node src/slurm_plugin/clustermgtd.py, _handle_unhealthy_static_nodes).

Pure functions of plain values: the rendered script runs in tests against a real one-node Slurm and moto's EC2.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuinfra.pulumi.components import iam
from gpuinfra.pulumi.components.base import STACK_TAG
from gpuinfra.pulumi.templates import render

SCRIPT = "/opt/gpuinfra/node-repair"
FAILED = "gpuinfra health:"
"""The drain reason the health check gives a node it finds unhealthy (health-check.sh.j2)."""
PASSED = "gpuinfra health passed"
"""The drain reason it gives such a node once its check passes again: the repair loop resumes it."""
ROLE_TAG = "gpuinfra:node-role"
"""Tag on each node group's instances (compute or login): the repair role terminates compute instances only."""
INTERVAL_SECONDS = 120
GRACE_SECONDS = 600
"""How long a failed node stays drained before it is replaced: two health check intervals (300 s each), so a
transient failure at boot (an automount not yet ready) gets checked again first."""
MAX_TERMINATIONS_PER_HOUR = 4
"""A quarter of the 16-node gang at most per hour: a broken image or driver release drains every node at once, and
replacing them all in a loop would only burn capacity (clustermgtd's protected mode exists for the same reason)."""
MAX_RESUMES = 2
WINDOW_SECONDS = 21600
"""A node drained and passing again more than twice in six hours is flapping: it is replaced, not resumed."""
METRIC = "UnavailableNodes"


@dataclass(frozen=True)
class Repair:
    """What the login node's repair loop acts on: its cluster's compute instances, in its region."""

    stack: str
    region: str
    grace_seconds: int = GRACE_SECONDS
    max_terminations: int = MAX_TERMINATIONS_PER_HOUR
    max_resumes: int = MAX_RESUMES
    window_seconds: int = WINDOW_SECONDS
    metric_namespace: str | None = None


def node_repair(cluster: str, repair: Repair, slurm_bin: str, slurm_version: str) -> str:
    """The repair script the login node's timer runs."""
    return render(
        "training/node-repair.sh.j2",
        cluster=cluster,
        stack=repair.stack,
        region=repair.region,
        slurm_bin=slurm_bin,
        slurm_version=slurm_version,
        failed=FAILED,
        passed=PASSED,
        stack_tag=STACK_TAG,
        role_tag=ROLE_TAG,
        interval_seconds=INTERVAL_SECONDS,
        grace_seconds=repair.grace_seconds,
        max_terminations=repair.max_terminations,
        max_resumes=repair.max_resumes,
        window_seconds=repair.window_seconds,
        metric_namespace=repair.metric_namespace,
    )


def login_statements(region: str, account_id: str, stack: str) -> list[iam.Statement]:
    """What the loop needs and nothing more (Service Authorization Reference, Amazon EC2): DescribeInstances has no
    resource-level permissions ("*"); TerminateInstances on this account's instances in this region that carry the
    stack's tag and the compute role tag (aws:ResourceTag, supported by the instance resource type), so neither the
    login node itself nor another stack's instance can be terminated."""
    return [
        {"Sid": "FindDrainedNodes", "Effect": "Allow", "Action": ["ec2:DescribeInstances"], "Resource": ["*"]},
        {
            "Sid": "ReplaceDrainedNodes",
            "Effect": "Allow",
            "Action": ["ec2:TerminateInstances"],
            "Resource": [f"arn:aws:ec2:{region}:{account_id}:instance/*"],
            "Condition": {
                "StringEquals": {f"aws:ResourceTag/{STACK_TAG}": stack, f"aws:ResourceTag/{ROLE_TAG}": "compute"}
            },
        },
    ]


__all__ = [
    "FAILED",
    "GRACE_SECONDS",
    "INTERVAL_SECONDS",
    "MAX_RESUMES",
    "MAX_TERMINATIONS_PER_HOUR",
    "METRIC",
    "PASSED",
    "ROLE_TAG",
    "SCRIPT",
    "WINDOW_SECONDS",
    "Repair",
    "login_statements",
    "node_repair",
]
