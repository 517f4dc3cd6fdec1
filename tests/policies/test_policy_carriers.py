"""Every policy document in the graph, whatever resource carries it, is read: the carriers are derived from the
provider schemas, not a list of the common ones.

A carrier is a pulumi-aws or pulumi-aws-native type whose inputs hold a policy document or attach one (`policy`,
`policy_document`, `access_policy`, `assume_role_policy`, `resource_policy`, `key_policy`, `inline_policies`,
`managed_policy_arns`, `policy_arn`, ... at any depth: tests/provider_tokens.py). Each is refused by
`unrecognised-resource` unless listed; each listed one is judged by the access evaluator
(separation-cross-account-grants: a resource policy or trust policy) or by the identity-policy rules
(security-iam-*), or only narrows what another grant allows (said why below).

The gap this found: pulumi-aws 7's `aws.s3.Bucket` takes an inline bucket policy (`policy`), which no rule read
(only BucketPolicy and the old BucketV2 were): a bucket granting the inference account passed.
"""

from __future__ import annotations

import json

from gpuinfra.graph import tokens
from gpuinfra.policy.allowlist import allow_list
from gpuinfra.policy.pack import pack_config, police
from gpuinfra.policy.rules.security import IAM_ATTACHMENTS, IAM_POLICY_DOCS
from gpuinfra.policy.rules.separation import POLICY_FIELDS, RESOURCE_POLICIES
from helpers import example_graph
from policy_helpers import facts_for, one_of_each, planted
from provider_tokens import types_with_argument

COVERS = ["separation-cross-account-grants"]
"""Failing and passing cases below (test_registration reads this)."""

POLICY_ARGUMENTS = frozenset(
    {
        "policy", "policy_document", "access_policy", "access_policies", "assume_role_policy", "resource_policy",
        "policy_text", "key_policy", "inline_policies", "policies", "managed_policy_arns", "policy_arn",
    }
)  # fmt: skip
NARROWS_ONLY = {
    tokens.VPC_ENDPOINT: "an endpoint policy only limits what the endpoint carries; it grants nothing (AWS PrivateLink "
    "Guide, 'Control access to VPC endpoints using endpoint policies')",
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": "a session policy: the pods' permissions are the "
    "intersection of the role's and this (EKS User Guide, Pod Identity associations, policy)",
}
"""Listed carriers whose document can only narrow another grant, and why."""


def carriers() -> dict[str, str]:
    return types_with_argument(("pulumi_aws", "pulumi_aws_native"), POLICY_ARGUMENTS)


def test_the_carriers_are_read_from_the_providers() -> None:
    found = carriers()
    expected = (
        *(tokens.BUCKET, tokens.BUCKET_POLICY, tokens.KMS_KEY, tokens.IAM_ROLE, "aws:sns/topicPolicy:TopicPolicy"),
        *("aws:ecr/repositoryPolicy:RepositoryPolicy", "aws:efs/fileSystemPolicy:FileSystemPolicy"),
        "aws-native:s3:BucketPolicy",
    )
    assert [t for t in expected if t not in found] == []
    assert len(found) > 150


def test_every_listed_carrier_is_read() -> None:
    rows = allow_list()
    read = {*RESOURCE_POLICIES, *POLICY_FIELDS, *IAM_POLICY_DOCS, *IAM_ATTACHMENTS, tokens.IAM_ROLE}
    listed = [t for t in carriers() if t in rows]
    assert tokens.BUCKET in listed and tokens.IAM_ROLE in listed
    assert [t for t in listed if t not in read and t not in NARROWS_ONLY] == []


def test_every_unlisted_carrier_is_refused() -> None:
    unlisted = sorted(t for t in carriers() if t not in allow_list())
    graph, extra = one_of_each(example_graph("llm-train"), unlisted, "c")
    run = police(graph, facts_for("llm-train"), pack_config())
    refused = {
        v.urn for v in run.violations if v.rule == "unrecognised-resource" and v.level.enforcement == "mandatory"
    }
    assert [r.type for r in extra if r.urn not in refused] == []


def test_a_buckets_inline_policy_granting_the_other_workload_is_refused() -> None:
    document = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "Reader",
                "Effect": "Allow",
                "Principal": {"AWS": "arn:aws:iam::222222222222:root"},
                "Action": "s3:GetObject",
                "Resource": "arn:aws:s3:::llm-train-extra/*",
            }
        ],
    }
    inputs = {"bucket": "llm-train-extra", "policy": json.dumps(document)}
    graph = planted(example_graph("llm-train"), tokens.BUCKET, "extra", inputs)
    run = police(graph, facts_for("llm-train"), pack_config())
    found = [v for v in run.violations if v.rule == "separation-cross-account-grants"]
    assert [v.level.enforcement for v in found] == ["mandatory"]
    assert found[0].message.startswith("extra: statement Reader grants ml-inference (222222222222, inference)")
