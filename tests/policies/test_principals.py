"""Every principal form as IAM reads it, planted into real graphs' grants (IAM User Guide, "AWS JSON policy
elements: Principal" and "NotPrincipal"): an Allow with NotPrincipal grants everyone but those listed, a web
identity provider's Federated principal grants its users, a CanonicalUser is another S3 account, and a SAML or OIDC
provider's ARN is its account. Each was a red-team grant the pack let through; the logs resource policy, which
no rule read, is judged too."""

from __future__ import annotations

import json
from typing import Any

import pytest
from policy_helpers import PolicyCase, run_case

POLICY = "separation-cross-account-grants"
BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy"
LOGS_POLICY = "aws:cloudwatch/logResourcePolicy:LogResourcePolicy"
ROLE = "aws:iam/role:Role"
CHECKPOINTS = "arn:aws:s3:::llm-train-checkpoints/*"


def document(**statement: Any) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [{"Sid": "Planted", "Effect": "Allow", **statement}]})


def _bucket(statement: str) -> tuple[tuple[str, str, dict[str, str]], ...]:
    return ((BUCKET_POLICY, "llm-train-storage-checkpoints-policy", {"policy": statement}),)


CASES = [
    PolicyCase(
        POLICY,
        "llm-train",
        edits=_bucket(
            document(
                NotPrincipal={"AWS": "arn:aws:iam::111111111111:root"}, Action="s3:GetObject", Resource=CHECKPOINTS
            )
        ),
        message=r"statement Planted grants to anyone \(NotPrincipal: everyone but those listed\)",
        label="NotPrincipal",
    ),
    PolicyCase(
        POLICY,
        "llm-train",
        edits=_bucket(
            document(
                Principal={"CanonicalUser": "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be"},
                Action="s3:GetObject",
                Resource=CHECKPOINTS,
            )
        ),
        message=r"grants canonical user 79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be s3:GetObject",
        label="CanonicalUser",
    ),
    PolicyCase(
        POLICY,
        "llm-train",
        edits=(
            (
                ROLE,
                "llm-train-slurm-role",
                {
                    "assumeRolePolicy": document(
                        Principal={"Federated": "accounts.google.com"}, Action="sts:AssumeRoleWithWebIdentity"
                    )
                },
            ),
        ),
        message=r"grants to anyone \(Federated: every user of a web identity provider\)",
        label="Federated-web-identity",
    ),
    PolicyCase(
        POLICY,
        "llm-train",
        edits=(
            (
                ROLE,
                "llm-train-slurm-role",
                {
                    "assumeRolePolicy": document(
                        Principal={"Federated": "arn:aws:iam::222222222222:saml-provider/corp"},
                        Action="sts:AssumeRoleWithSAML",
                    )
                },
            ),
        ),
        message=r"grants ml-inference \(222222222222, inference\) sts:AssumeRoleWithSAML",
        label="Federated-saml-other-account",
    ),
    PolicyCase(
        POLICY,
        "llm-train",
        edits=(
            (
                LOGS_POLICY,
                None,
                {
                    "policyDocument": document(
                        Principal={"AWS": "222222222222"}, Action="logs:PutLogEvents", Resource="*"
                    )
                },
            ),
        ),
        message=r"llm-train-slurm-logs-delivery: statement Planted grants ml-inference \(222222222222, inference\)",
        label="logs-resource-policy",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_every_principal_form_is_judged(case: PolicyCase) -> None:
    run_case(case)


# Grants carried by other resource types (each also refused by unrecognised-resource until allow-listed; here the
# grant itself is judged, so listing the type would not let it through).
CARRIERS = [
    (
        "aws:sns/topic:Topic",
        {
            "name": "alerts",
            "policy": document(Principal={"AWS": "arn:aws:iam::222222222222:root"}, Action="sns:Subscribe"),
        },
        r"planted: statement Planted grants ml-inference \(222222222222, inference\) sns:Subscribe",
    ),
    (
        "aws:s3control/accessPointPolicy:AccessPointPolicy",
        {
            "accessPointArn": "arn:aws:s3:us-east-1:111111111111:accesspoint/ckpt",
            "policy": document(Principal="*", Action="s3:GetObject", Resource="*"),
        },
        r"planted: statement Planted grants to anyone \(Principal \*\)",
    ),
    (
        "aws:lambda/permission:Permission",
        {"function": "export", "action": "lambda:InvokeFunction", "principal": "222222222222"},
        r"planted: lets account 222222222222 invoke the function",
    ),
    (
        "aws:ec2/snapshotCreateVolumePermission:SnapshotCreateVolumePermission",
        {"snapshotId": "snap-0123456789abcdef0", "accountId": "222222222222"},
        r"planted: shares its snapshot with account 222222222222",
    ),
]


@pytest.mark.parametrize(("kind", "inputs", "message"), CARRIERS, ids=[c[0].rsplit(":", 1)[1] for c in CARRIERS])
def test_grants_in_other_carriers_are_judged(kind: str, inputs: dict[str, Any], message: str) -> None:
    import re

    from gpuinfra.policy.pack import pack_config, police
    from helpers import example_graph
    from policy_helpers import facts_for, planted

    run = police(planted(example_graph("llm-train"), kind, "planted", inputs), facts_for("llm-train"), pack_config())
    found = [v for v in run.violations if v.rule == POLICY]
    assert any(re.search(message, v.message) for v in found), [v.message for v in run.violations]
    assert {v.level.enforcement for v in found} == {"mandatory"}
