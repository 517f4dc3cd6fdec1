"""The pack over the real analyzer protocol gives exactly the in-process verdicts.

A test plays the Pulumi engine: it starts `policies/__main__.py` as a subprocess with the venv python and
the stack's config in the environment, reads the port it prints, calls GetAnalyzerInfo and Configure, then
Analyze for every resource and AnalyzeStack, with protobuf messages built from the example stacks' graphs.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from google.protobuf import json_format
from gpuinfra.catalog import load_catalog
from gpuinfra.graph import UNKNOWN, Graph
from gpuinfra.load import load_inputs
from gpuinfra.plan import build_plan
from gpuinfra.plan.account import in_account
from gpuinfra.policy import rules as policies
from gpuinfra.policy.config import reconcile
from gpuinfra.policy.facts import StackFacts
from gpuinfra.policy.pack import PolicyRun, diagnostic, meta_of, pack_config, police
from gpuinfra.pulumi.preview import engine_config
from gpuinfra.workspace import workspace_of
from helpers import STACKS, example_graph, inputs_for, write_stack
from pack_client import Diagnostic, PackClient, running_pack
from policy_helpers import edited, program_graph

LT = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"
SG = "aws:ec2/securityGroup:SecurityGroup"
ASG = "aws:autoscaling/group:Group"
PROVIDER = "pulumi:providers:aws"
BROKEN = (
    (
        LT,
        "llm-train-slurm-pcs-od-lt",
        {"metadataOptions.httpTokens": "optional", "blockDeviceMappings[0].ebs.encrypted": "false"},
    ),
    (LT, "llm-train-slurm-pcs-elastic-lt", {"metadataOptions.httpTokens": UNKNOWN}),
    (
        SG,
        "llm-train-net-efa",
        {
            "ingress[0]": {"protocol": "tcp", "fromPort": 22, "toPort": 22, "cidrBlocks": ["0.0.0.0/0"]},
            "egress[1].cidrBlocks": ["10.64.0.0/16"],
        },
    ),
    ("aws:fsx/lustreFileSystem:LustreFileSystem", None, {"tags": {"workload": "inference"}}),
)


def in_process(graph: Graph, facts: StackFacts, config: dict) -> tuple[list[Diagnostic], Counter]:  # type: ignore[type-arg]
    run: PolicyRun = police(graph, facts, config)
    return (
        sorted(Diagnostic(v.rule, v.level.enforcement, v.urn, diagnostic(v)) for v in run.violations),
        Counter((n.policy, n.reason) for n in run.not_applicable),
    )


def over_grpc(pack: PackClient, graph: Graph, config: dict) -> tuple[list[Diagnostic], Counter]:  # type: ignore[type-arg]
    pack.configure(config)
    diagnostics, not_applicable = pack.analyze_graph(graph)
    return sorted(diagnostics), Counter(not_applicable)


@pytest.fixture(scope="module")
def training_pack():  # type: ignore[no-untyped-def]
    config, _ = engine_config(inputs_for("llm-train"))
    with running_pack("llm-train", config) as pack:
        yield pack


def facts_of(stack: str) -> StackFacts:
    inputs = inputs_for(stack)
    return StackFacts.of(inputs, build_plan(inputs.spec, inputs.org.org, load_catalog()), load_catalog())


def test_analyzer_info_describes_the_same_pack(training_pack: PackClient) -> None:
    info = training_pack.info()
    assert info.name == "gpuinfra" and info.supportsConfig
    assert sorted(training_pack.metas(), key=lambda m: m.name) == sorted(
        (meta_of(p) for p in policies.POLICIES), key=lambda m: m.name
    )
    kinds = {p.name: p.policy_type for p in info.policies}
    assert kinds["quota-within-grant"] == 2 and kinds["security-imdsv2"] == 1  # POLICY_TYPE_STACK / _RESOURCE
    schema = json_format.MessageToDict(next(p for p in info.policies if p.name == "separation-network").configSchema)
    assert schema["properties"]["allowed_cidrs"]["default"] == []


def test_the_example_passes_both_ways(training_pack: PackClient) -> None:
    config = reconcile(training_pack.metas())
    graph = example_graph("llm-train")
    grpc_result = over_grpc(training_pack, graph, config)
    assert grpc_result == in_process(graph, facts_of("llm-train"), config)
    assert grpc_result[0] == []


def test_violations_unknowns_and_config_match(training_pack: PackClient) -> None:
    given = {
        "security-ebs-encrypted": "advisory",
        "training-one-zone": "disabled",
        "separation-network": {"allowed_transit_gateways": ["tgw-0abc"]},
    }
    config = reconcile(training_pack.metas(), given=given)
    assert config == pack_config(given=given)
    graph = edited(example_graph("llm-train"), BROKEN)
    diagnostics, not_applicable = over_grpc(training_pack, graph, config)
    assert (diagnostics, not_applicable) == in_process(graph, facts_of("llm-train"), config)
    fired = {(d.policy, d.level) for d in diagnostics}
    assert fired >= {
        ("security-imdsv2", "mandatory"),
        ("security-imdsv2", "advisory"),
        ("security-ebs-encrypted", "advisory"),
        ("security-open-ingress", "mandatory"),
        ("separation-network", "mandatory"),
        ("separation-workload-tag", "mandatory"),
    }
    assert not any(d.policy == "training-one-zone" for d in diagnostics)
    assert any(
        "can't run policy 'security-imdsv2'" in d.message and d.urn.endswith("llm-train-slurm-pcs-elastic-lt")
        for d in diagnostics
    )


def test_facts_from_the_pinned_organization_reach_the_pack(tmp_path: Path) -> None:
    """A lower P quota in the organization file the pack's config pins: the pack reads it (recorded at Configure),
    not the project's stacks/org.yaml, and the stack's config has no say."""
    org = {"accounts.ml-training.quotas.us-east-1.L-417A185B": 512}
    inputs = load_inputs(write_stack(tmp_path, "llm-train", org=org))
    config, _ = engine_config(inputs)
    assert "gpuinfra:org" not in config
    graph = program_graph("llm-train", org=org, unchecked=True)  # past quota-short, the validators' gate
    # The pack finds the stack in the project's stacks/ (its config names it), judged by the pinned file: the same
    # workspace folds the account's other stacks for it.
    workspace = workspace_of(STACKS / "Pulumi.llm-train.yaml", tmp_path / "org.yaml")
    plan = in_account(build_plan(inputs.spec, inputs.org.org, load_catalog()), workspace.quotas_of(inputs))
    facts = StackFacts.of(inputs, plan, load_catalog(), workspace.facts(inputs))
    pin = {"separation-trusted-organization": {"organization_file": str(tmp_path / "org.yaml")}}
    with running_pack("llm-train", config) as pack:
        policy_config = reconcile(pack.metas(), given=pin)
        diagnostics, not_applicable = over_grpc(pack, graph, policy_config)
    assert (diagnostics, not_applicable) == in_process(graph, facts, policy_config)
    # the stack alone needs 3072 vCPUs: 16 reserved p5.48xlarge of 192 each
    (quota,) = [d for d in diagnostics if d.policy == "quota-within-grant"]
    assert quota.level == "mandatory" and "L-417A185B" in quota.message and "3072 vCPUs" in quota.message
    assert not [d for d in diagnostics if d.policy.startswith("separation-")]


OTHER_EXAMPLES = {
    "chat-serve": (
        (ASG, "chat-serve-us-east-1-replicas-burst", {"minSize": 2}),
        (
            "aws:lb/listener:Listener",
            "chat-serve-us-west-2-endpoint-http",
            {"defaultActions": [{"type": "forward", "targetGroupArn": "arn:tg"}]},
        ),
    ),
    "chat-serve-k8s": (("kubernetes:core/v1:Service", None, {"spec.ports[0].port": 8443}),),
    "model-registry": (
        (
            "aws:s3/bucketPolicy:BucketPolicy",
            "model-registry-primary-policy",
            {
                "policy": json.dumps(
                    {
                        "Statement": [
                            {
                                "Sid": "Anyone",
                                "Effect": "Allow",
                                "Principal": "*",
                                "Action": "s3:GetObject",
                                "Resource": "*",
                            }
                        ]
                    }
                )
            },
        ),
    ),
}


@pytest.mark.parametrize("stack", sorted(OTHER_EXAMPLES))
def test_every_workload_matches(stack: str) -> None:
    config, _ = engine_config(inputs_for(stack))
    graph = edited(example_graph(stack), OTHER_EXAMPLES[stack])
    with running_pack(stack, config) as pack:
        policy_config = reconcile(pack.metas())
        clean = over_grpc(pack, example_graph(stack), policy_config)
        broken = over_grpc(pack, graph, policy_config)
    assert clean == in_process(example_graph(stack), facts_of(stack), policy_config)
    assert broken == in_process(graph, facts_of(stack), policy_config)
    assert {d.level for d in broken[0]} >= {"mandatory"}
