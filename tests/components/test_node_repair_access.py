"""The repair loop's grants on the login node's role, judged by the project's access evaluator
(gpuinfra.preflight.access) over the llm-train example's graph: the loop's own requests are allowed; terminating the
login node, another stack's instance or an instance in another region is denied; compute nodes, where jobs run, get
none of it.

Both roles also carry the AWS-managed AmazonSSMManagedInstanceCore (Session Manager), whose text is not in the graph:
the evaluator calls a request it does not find allowed "unknown" because of it, never "deny". The denials are
therefore judged on the roles' own policies, and the managed policy is checked to be the only one left out (its
actions are ssm:*, ssmmessages:* and ec2messages:* reads and updates: AWS Managed Policy Reference,
AmazonSSMManagedInstanceCore; no EC2 instance action)."""

from __future__ import annotations

import dataclasses

import pytest
from gpuinfra.graph.flows import Flow
from gpuinfra.preflight.access.decide import Policies, Request, evaluate
from gpuinfra.preflight.access.judge import judge_flows
from gpuinfra.preflight.access.world import read_world
from gpuinfra.pulumi.components.base import SSM_CORE
from helpers import example_graph

STACK = "llm-train"
LOGIN = "llm-train-slurm-login-role"
COMPUTE = "llm-train-slurm-role"
ACCOUNT = "111111111111"
INSTANCE = f"arn:aws:ec2:us-east-1:{ACCOUNT}:instance/i-0123456789abcdef0"
COMPUTE_TAGS = {"aws:ResourceTag/gpuinfra:stack": STACK, "aws:ResourceTag/gpuinfra:node-role": "compute"}
TERMINATE = Flow("terminate", STACK, LOGIN, "ec2:TerminateInstances", INSTANCE, context=COMPUTE_TAGS)


def outcome(flow: Flow) -> str:
    (judged,) = judge_flows([flow], [example_graph(STACK)])
    return judged.decision.outcome


def test_the_account_is_the_example_s() -> None:
    """The instance ARNs below are in the stack's account (stacks/org.yaml, training-prod)."""
    roles = [r for r in example_graph(STACK).of_type("aws:iam/role:Role") if r.name == LOGIN]
    assert roles, "the login node has a role of its own"


@pytest.mark.parametrize(
    "flow",
    [
        TERMINATE,
        Flow("describe", STACK, LOGIN, "ec2:DescribeInstances", "*"),
        Flow(
            "metric",
            STACK,
            LOGIN,
            "cloudwatch:PutMetricData",
            "*",
            context={"cloudwatch:namespace": "gpuinfra/Training"},
        ),
    ],
    ids=["terminate-a-compute-node", "describe", "publish"],
)
def test_the_loop_s_requests_are_allowed(flow: Flow) -> None:
    assert outcome(flow) == "allow"


@pytest.mark.parametrize(
    "flow",
    [
        dataclasses.replace(TERMINATE, context={**COMPUTE_TAGS, "aws:ResourceTag/gpuinfra:node-role": "login"}),
        dataclasses.replace(TERMINATE, context={**COMPUTE_TAGS, "aws:ResourceTag/gpuinfra:stack": "chat-serve"}),
        dataclasses.replace(TERMINATE, context={}),
        dataclasses.replace(TERMINATE, resource=INSTANCE.replace("us-east-1", "us-west-2")),
        dataclasses.replace(TERMINATE, action="ec2:StopInstances"),
        dataclasses.replace(TERMINATE, action="ec2:RunInstances"),
        dataclasses.replace(TERMINATE, principal=COMPUTE),
        Flow("compute describe", STACK, COMPUTE, "ec2:DescribeInstances", "*"),
    ],
    ids=[
        "the-login-node",
        "another-stack",
        "untagged",
        "another-region",
        "stop",
        "launch",
        "from-a-compute-node",
        "compute-describe",
    ],
)
def test_everything_else_is_denied(flow: Flow) -> None:
    assert outcome(flow) in ("deny", "unknown")
    role = read_world([example_graph(STACK)]).roles[flow.principal]
    assert role.unknown == [SSM_CORE], role.unknown
    request = Request(role.principal, flow.action, flow.resource, ACCOUNT, dict(flow.context))
    decision = evaluate(request, Policies(tuple(role.identity), None))
    assert decision.outcome == "deny", decision


def test_the_login_node_runs_the_loop_with_its_own_profile_and_compute_instances_carry_the_tag() -> None:
    """What the grants above rest on: the login group launches with the login profile (the compute groups with the
    nodes'), every launch template tags its instances with their role, and the login node's user data enables the
    repair timer."""
    import base64
    import email

    from gpuinfra.graph import tokens
    from helpers import cloud_config

    graph = example_graph(STACK)
    profiles = {p.name: p for p in graph.of_type(tokens.IAM_INSTANCE_PROFILE)}
    assert set(profiles) == {"llm-train-slurm-profile", "llm-train-slurm-login-profile"}
    for group in graph.of_type(tokens.PCS_NODE_GROUP):
        login = group.name.endswith("-login")
        profile = profiles["llm-train-slurm-login-profile" if login else "llm-train-slurm-profile"]
        assert profile.urn in group.dependencies, group.name
        (template,) = graph.dependencies_of(group, tokens.LAUNCH_TEMPLATE)
        (instance_tags,) = [t["tags"] for t in template.inputs["tagSpecifications"] if t["resourceType"] == "instance"]
        assert instance_tags["gpuinfra:node-role"] == ("login" if login else "compute")
        assert instance_tags["gpuinfra:stack"] == STACK
        user_data = email.message_from_string(base64.b64decode(template.inputs["userData"]).decode())
        part = next(p for p in user_data.walk() if p.get_content_type() == "text/cloud-config")
        config = cloud_config(part.get_payload())
        enabled = [c[-1] for c in config["runcmd"] if c[:2] == ["systemctl", "enable"]]
        assert ("gpuinfra-node-repair.timer" in enabled) is login, group.name
