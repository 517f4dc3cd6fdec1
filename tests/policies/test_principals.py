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
