"""IAM hygiene, planted into real graphs: service-wide wildcards on sensitive services, Allow + NotAction, PassRole
on every resource, administrator-equivalent managed policies, actions no AWS service defines, and an EKS endpoint
made public by the union of its CIDR blocks. The unchanged examples pass.

Where each rule comes from: IAM User Guide, "IAM JSON policy elements: NotAction" (Allow + NotAction "can
result in granting more permissions than intended"); "Grant a user permissions to pass a role to an AWS
service" (PassRole scoped to roles); AWS Managed Policy Reference, IAMFullAccess (`iam:*`); Amazon EKS API,
VpcConfigRequest.publicAccessCidrs. Action validity: parliament's bundled IAM catalog.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from gpuinfra.graph import Graph
from gpuinfra.policy.pack import pack_config, police
from helpers import EXAMPLES, example_graph
from policy_helpers import edited, facts_for, planted, run_example

ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"

COVERS = ["security-iam-least-privilege", "security-iam-known-actions"]
"""Failing and passing cases below (test_registration reads this)."""


def doc(**statement: Any) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [{"Sid": "Planted", "Effect": "Allow", **statement}]})


def found(stack: str, graph: Graph, policy: str) -> list[tuple[str, str]]:
    run = police(graph, facts_for(stack), pack_config())
    return [(v.level.enforcement, v.message) for v in run.violations if v.rule == policy]


IAM_PATTERNS = [
    (doc(Action="iam:*", Resource="*"), "security-iam-least-privilege", "allows iam:*: every action of a sensitive"),
    (
        doc(Action=["kms:*"], Resource="arn:aws:kms:us-east-1:111111111111:key/k"),
        "security-iam-least-privilege",
        "allows kms:*",
    ),
    (doc(Action="sts:*", Resource="*"), "security-iam-least-privilege", "allows sts:*"),
    (doc(NotAction="iam:*", Resource="*"), "security-iam-least-privilege", "allows NotAction ['iam:*']"),
    (doc(Action="iam:PassRole", Resource="*"), "security-iam-least-privilege", "allows iam:PassRole on every role"),
    (doc(Action="iam:Pass*", Resource=["*"]), "security-iam-least-privilege", "allows iam:PassRole on every role"),
    (doc(Action="s3:GetObjekt", Resource="*"), "security-iam-known-actions", "names s3:GetObjekt, which no AWS"),
    (doc(Action="nosuchservice:Get*", Resource="*"), "security-iam-known-actions", "names nosuchservice:Get*"),
]


@pytest.mark.parametrize(("policy_doc", "policy", "message"), IAM_PATTERNS, ids=[c[2][:40] for c in IAM_PATTERNS])
def test_each_iam_pattern_is_caught(policy_doc: str, policy: str, message: str) -> None:
    graph = example_graph("llm-train")
    assert found("llm-train", graph, policy) == []
    hits = found("llm-train", planted(graph, ROLE_POLICY, "planted", {"role": "r", "policy": policy_doc}), policy)
    assert any(message in m for _, m in hits), hits
    assert {level for level, _ in hits} == {"advisory" if policy.endswith("known-actions") else "mandatory"}


def test_scoped_statements_pass() -> None:
    scoped = doc(Action=["iam:PassRole"], Resource="arn:aws:iam::111111111111:role/trainer")
    graph = planted(example_graph("llm-train"), ROLE_POLICY, "planted", {"role": "r", "policy": scoped})
    assert found("llm-train", graph, "security-iam-least-privilege") == []
    assert found("llm-train", graph, "security-iam-known-actions") == []


@pytest.mark.parametrize("managed", ["IAMFullAccess", "AdministratorAccess-Amplify", "AWSOrganizationsFullAccess"])
def test_admin_equivalent_managed_policies_are_caught(managed: str) -> None:
    arn = f"arn:aws:iam::aws:policy/{managed}"
    graph = planted(example_graph("llm-train"), ATTACHMENT, "planted", {"role": "r", "policyArn": arn})
    ((level, message),) = found("llm-train", graph, "security-iam-least-privilege")
    assert level == "mandatory" and f"attaches {arn}, which is administrator-equivalent" in message


def test_an_eks_endpoint_open_to_the_union_of_two_halves_is_public() -> None:
    cluster = "aws:eks/cluster:Cluster"
    halves = edited(
        example_graph("llm-train-eks"),
        [
            (
                cluster,
                None,
                {"vpcConfig.endpointPublicAccess": True, "vpcConfig.publicAccessCidrs": ["0.0.0.0/1", "128.0.0.0/1"]},
            )
        ],
    )
    ((level, message),) = found("llm-train-eks", halves, "security-eks-endpoint")
    assert level == "mandatory" and "public to 0.0.0.0/1 + 128.0.0.0/1 (together every IPv4 address)" in message
    half = edited(
        example_graph("llm-train-eks"),
        [(cluster, None, {"vpcConfig.endpointPublicAccess": True, "vpcConfig.publicAccessCidrs": ["203.0.113.0/24"]})],
    )
    assert found("llm-train-eks", half, "security-eks-endpoint") == []


@pytest.mark.parametrize("stack", EXAMPLES)
def test_the_unchanged_examples_pass(stack: str) -> None:
    run = run_example(stack)
    assert [v for v in run.violations if v.rule.startswith("security-iam")] == []


# IAM wildcards expanded against the action catalog (parliament's bundled Service Authorization Reference), as IAM
# expands them: spellings the list of literal patterns missed (the red team's `iam:?*`, `*:*` on an ARN pattern,
# `iam:Attach*`), each planted into the real llm-train graph.
EXPANDED = [
    (doc(Action="iam:?*", Resource="*"), "allows iam:?*: every action of a sensitive service"),
    (doc(Action="*:*", Resource="arn:aws:*:*:*:*"), "allows *:*: every action of a sensitive service"),
    (doc(Action="i?m:*", Resource="arn:aws:iam::111111111111:role/x"), "allows i?m:*: every action"),
    (
        doc(Action="iam:Attach*", Resource="*"),
        "allows iam:AttachGroupPolicy, iam:AttachRolePolicy, iam:AttachUserPolicy on every role: IAM permissions "
        "management",
    ),
    (
        doc(Action=["iam:PutRolePolicy", "s3:GetObject"], Resource="arn:aws:iam::*:role/*"),
        "allows iam:PutRolePolicy on every role",
    ),
    (doc(Action="iam:Pass*", Resource="arn:aws:*:*:*:*"), "allows iam:PassRole on every role"),
]


@pytest.mark.parametrize(("policy_doc", "message"), EXPANDED, ids=[c[1][:40] for c in EXPANDED])
def test_wildcards_are_read_as_iam_expands_them(policy_doc: str, message: str) -> None:
    graph = planted(example_graph("llm-train"), ROLE_POLICY, "planted", {"role": "r", "policy": policy_doc})
    hits = found("llm-train", graph, "security-iam-least-privilege")
    assert any(message in m for _, m in hits), hits
    assert {level for level, _ in hits} == {"mandatory"}


def test_permissions_management_scoped_to_named_roles_passes() -> None:
    scoped = doc(Action="iam:PutRolePolicy", Resource="arn:aws:iam::111111111111:role/llm-train-node")
    graph = planted(example_graph("llm-train"), ROLE_POLICY, "planted", {"role": "r", "policy": scoped})
    assert found("llm-train", graph, "security-iam-least-privilege") == []
