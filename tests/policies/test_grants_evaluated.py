"""The pack judges every resource policy through the one access evaluator the flows use
(gpuinfra.preflight.access: decide.evaluate, asked on each grantee's behalf by reach.py), planted into real graphs.

Each case is one the pack's old reading of principals (a list of accounts per statement, the registry's shape
compared by its Action list) got wrong: grants it missed (NotAction, which the registry check read as "no
actions", a subset of anything), grants it reported that AWS would deny (an Allow a Deny removes, a `Principal *`
pinned to the stack's own account by aws:PrincipalAccount), and grants it mis-attributed (`Principal *` pinned to
another purpose's account). Conditions the pack cannot decide are "cannot judge", mandatory: never an allow.
Sources: IAM User Guide, "Policy evaluation logic", "IAM JSON policy elements: NotAction", "Condition operators",
"AWS global condition context keys" (aws:PrincipalAccount, aws:SourceVpce, aws:PrincipalOrgID).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from gpuinfra.preflight.access import Policies, Principal, Request, evaluate, parse
from policy_helpers import PolicyCase, run_case

POLICY = "separation-cross-account-grants"
BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy"
KEY = "aws:kms/key:Key"
ROLE = "aws:iam/role:Role"
TRAINING, INFERENCE, REGISTRY = "111111111111", "222222222222", "333333333333"
CHECKPOINTS = "arn:aws:s3:::llm-train-checkpoints/*"
TRAIN_BUCKET_POLICY = "llm-train-storage-checkpoints-policy"
UPLOADS = "arn:aws:s3:::acme-model-registry/uploads/*"  # stacks/org.yaml: registry.bucket, upload_prefix
MODELS = "arn:aws:s3:::acme-model-registry/models/"  # and its model prefix


def document(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def allow(sid: str, principal: Any, action: Any = "s3:GetObject", resource: Any = CHECKPOINTS, **extra: Any) -> dict:
    return {"Sid": sid, "Effect": "Allow", "Principal": principal, "Action": action, "Resource": resource, **extra}


def on_training_bucket(*statements: dict[str, Any]) -> tuple[tuple[str, str, dict[str, str]], ...]:
    return ((BUCKET_POLICY, TRAIN_BUCKET_POLICY, {"policy": document(*statements)}),)


MISSED = [
    # The registry's check compared Action with its allowed set: NotAction has no Action, and the empty set is a
    # subset of every set, so "everything but DeleteObject" to a training account passed as the registry's write.
    PolicyCase(
        POLICY,
        "model-registry",
        edits=(
            (
                BUCKET_POLICY,
                "model-registry-primary-policy",
                {
                    "policy": document(
                        {
                            "Sid": "TrainingEverythingButDelete",
                            "Effect": "Allow",
                            "Principal": {"AWS": f"arn:aws:iam::{TRAINING}:root"},
                            "NotAction": "s3:DeleteObject",
                            "Resource": UPLOADS,
                        }
                    )
                },
            ),
        ),
        message=r"statement TrainingEverythingButDelete grants ml-training \(111111111111, training\) every "
        r"action but s3:DeleteObject \(NotAction\)",
        level="mandatory",
        label="registry-NotAction",
    ),
    PolicyCase(
        POLICY,
        "model-registry",
        edits=(
            (
                KEY,
                "model-registry-primary-key",
                {
                    "policy": document(
                        {
                            "Sid": "Admin",
                            "Effect": "Allow",
                            "Principal": {"AWS": f"arn:aws:iam::{REGISTRY}:root"},
                            "Action": "kms:*",
                            "Resource": "*",
                        },
                        {
                            "Sid": "InferenceAllButSchedule",
                            "Effect": "Allow",
                            "Principal": {"AWS": f"arn:aws:iam::{INFERENCE}:root"},
                            "NotAction": "kms:ScheduleKeyDeletion",
                            "Resource": "*",
                        },
                    )
                },
            ),
        ),
        message=r"statement InferenceAllButSchedule grants ml-inference \(222222222222, inference\) every action "
        r"but kms:ScheduleKeyDeletion",
        level="mandatory",
        label="registry-key-NotAction",
    ),
    # A principal naming no account (the unique id IAM leaves when a named role is deleted) was dropped unread.
    PolicyCase(
        POLICY,
        "llm-train",
        edits=on_training_bucket(allow("UniqueId", {"AWS": "AROAEXAMPLEID12345678"})),
        message=r"statement UniqueId: cannot judge whether it grants account AROAEXAMPLEID12345678: the principal "
        r"AROAEXAMPLEID12345678 names no account",
        level="mandatory",
        label="unique-id",
    ),
    # `Principal *` pinned to the inference account: the old reading said "anyone"; the evaluator names who.
    PolicyCase(
        POLICY,
        "llm-train",
        edits=on_training_bucket(
            allow("PinnedElsewhere", "*", Condition={"StringEquals": {"aws:PrincipalAccount": INFERENCE}})
        ),
        message=r"statement PinnedElsewhere grants ml-inference \(222222222222, inference\) s3:GetObject",
        level="mandatory",
        label="star-pinned-to-inference",
    ),
]

DECIDED_BY_AWS = [
    # An Allow that an explicit Deny for the same account removes grants nothing (IAM UG, "Policy evaluation
    # logic": an explicit deny overrides any allow).
    PolicyCase(
        POLICY,
        "llm-train",
        fires=False,
        edits=on_training_bucket(
            allow("InferenceReads", {"AWS": INFERENCE}),
            {
                "Sid": "ButNotReally",
                "Effect": "Deny",
                "Principal": {"AWS": INFERENCE},
                "Action": "s3:*",
                "Resource": CHECKPOINTS,
            },
        ),
        label="allow-then-deny",
    ),
    # `Principal *` that only the stack's own account can use: aws:PrincipalAccount is the caller's account, which
    # the evaluator knows on every grantee's behalf.
    PolicyCase(
        POLICY,
        "llm-train",
        fires=False,
        edits=on_training_bucket(
            allow("OwnAccountOnly", "*", Condition={"StringEquals": {"aws:PrincipalAccount": TRAINING}})
        ),
        label="star-pinned-to-own-account",
    ),
    # A Deny that spells the wildcard one way does not hide the rest of the Allow's resources.
    PolicyCase(
        POLICY,
        "llm-train",
        edits=on_training_bucket(
            allow("InferenceReads", {"AWS": INFERENCE}),
            {
                "Sid": "DenyOneSpelling",
                "Effect": "Deny",
                "Principal": {"AWS": INFERENCE},
                "Action": "s3:GetObject",
                "Resource": "arn:aws:s3:::llm-train-checkpoints/g*",
            },
        ),
        message=r"statement InferenceReads grants ml-inference \(222222222222, inference\) s3:GetObject",
        label="deny-one-spelling",
    ),
]

CANNOT_JUDGE = [
    (
        {"StringEquals": {"aws:SourceVpce": "vpce-1a2b3c4d"}},
        r"statement Planted: cannot judge whether it grants anyone \(Principal \*\): .*condition on aws:SourceVpce, "
        "which only a request sets; the pack fails closed",
    ),
    (
        {"StringEquals": {"aws:PrincipalOrgID": "o-exampleorg"}},
        r"cannot judge whether it grants anyone \(Principal \*\): .*aws:PrincipalOrgID",
    ),
    (
        {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}},
        r"cannot judge whether it grants anyone \(Principal \*\): condition operator IpAddress is not evaluated",
    ),
    (
        {"NumericLessThan": {"s3:max-keys": "ten"}},
        r"cannot judge whether it grants anyone \(Principal \*\): condition NumericLessThan on s3:max-keys",
    ),
    (
        {"StringEqualsIfExists": {"s3:x-amz-acl": "bucket-owner-full-control"}},
        r"cannot judge whether it grants anyone \(Principal \*\): .*s3:x-amz-acl",
    ),
]


NOT_RESOURCE = [
    # NotResource grants every resource but those listed (IAM User Guide, "IAM JSON policy elements: NotResource"):
    # to the other workload, or to a training account everywhere in the registry but models/ (not its upload prefix).
    PolicyCase(
        POLICY,
        "llm-train",
        edits=on_training_bucket(
            {"Sid": "NR", "Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{INFERENCE}:root"},
             "Action": "s3:GetObject", "NotResource": "arn:aws:s3:::other/*"}
        ),
        message=r"statement NR grants ml-inference \(222222222222, inference\) s3:GetObject",
        level="mandatory",
        label="NotResource-other-workload",
    ),
    PolicyCase(
        POLICY,
        "model-registry",
        edits=(
            (
                BUCKET_POLICY,
                "model-registry-primary-policy",
                {"policy": document({"Sid": "NR", "Effect": "Allow", "Principal": {"AWS": TRAINING},
                                     "Action": "s3:PutObject", "NotResource": f"{MODELS}*"})},
            ),
        ),
        message=r"primary-policy: statement NR grants ml-training \(111111111111, training\) s3:PutObject",
        level="mandatory",
        label="NotResource-registry",
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", MISSED + DECIDED_BY_AWS + NOT_RESOURCE, ids=lambda c: c.id)
def test_grants_are_decided_by_the_evaluator(case: PolicyCase) -> None:
    run_case(case)


@pytest.mark.parametrize(("condition", "message"), CANNOT_JUDGE, ids=[next(iter(c)) for c, _ in CANNOT_JUDGE])
def test_a_condition_the_pack_cannot_decide_is_cannot_judge_and_mandatory(condition: dict, message: str) -> None:
    run_case(
        PolicyCase(
            POLICY,
            "llm-train",
            edits=on_training_bucket(allow("Planted", "*", Condition=condition)),
            message=message,
            level="mandatory",
        )
    )


def test_a_secret_policy_document_is_not_passed_unjudged() -> None:
    """In-process, a secret is blinded; the pack cannot read the grant, so it fails closed."""
    from gpuinfra.graph import SECRET

    run_case(
        PolicyCase(
            POLICY,
            "llm-train",
            edits=((BUCKET_POLICY, TRAIN_BUCKET_POLICY, {"policy": SECRET}),),
            message=r"cannot judge its policy: the document is a secret",
            level="mandatory",
        )
    )


# ---- the pack and a flow ask the same evaluator ----------------------------------------------------------------
AGREEMENT = [
    [allow("A", {"AWS": INFERENCE})],
    [allow("A", {"AWS": f"arn:aws:iam::{INFERENCE}:root"}, action="s3:Get*")],
    [allow("A", "*", Condition={"StringEquals": {"aws:PrincipalAccount": INFERENCE}})],
    [allow("A", "*", Condition={"StringNotEquals": {"aws:PrincipalAccount": INFERENCE}})],
    [
        allow("A", {"AWS": INFERENCE}),
        {"Sid": "D", "Effect": "Deny", "Principal": "*", "Action": "s3:GetObject", "Resource": CHECKPOINTS},
    ],
    [
        {
            "Sid": "N",
            "Effect": "Allow",
            "NotPrincipal": {"AWS": TRAINING},
            "Action": "s3:GetObject",
            "Resource": CHECKPOINTS,
        }
    ],
    [
        {
            "Sid": "N",
            "Effect": "Allow",
            "NotPrincipal": {"AWS": [INFERENCE, f"arn:aws:iam::{INFERENCE}:role/other"]},
            "Action": "s3:GetObject",
            "Resource": CHECKPOINTS,
        }
    ],
]


@pytest.mark.parametrize("statements", AGREEMENT, ids=[str(n) for n in range(len(AGREEMENT))])
def test_the_pack_refuses_exactly_what_the_evaluator_allows_an_inference_role(statements: list[dict]) -> None:
    """A request a flow would make (a role of the inference account reading a checkpoint, its own identity policy
    allowing it) is allowed by the evaluator exactly when the pack reports the grant to that account."""
    from gpuinfra.policy.pack import pack_config, police
    from helpers import example_graph
    from policy_helpers import edited, facts_for

    role = Principal(f"arn:aws:iam::{INFERENCE}:role/r", INFERENCE)
    policies = Policies(
        identity=parse(document({"Effect": "Allow", "Action": "s3:*", "Resource": "*"}), "identity"),
        resource=parse(document(*statements), "bucket policy"),
    )
    request = Request(
        role,
        "s3:GetObject",
        "arn:aws:s3:::llm-train-checkpoints/step-100/model.pt",
        TRAINING,
        {"aws:SecureTransport": "true"},
    )
    allowed = evaluate(request, policies).outcome == "allow"
    run = police(
        edited(example_graph("llm-train"), on_training_bucket(*statements)), facts_for("llm-train"), pack_config()
    )
    reported = [v.message for v in run.violations if v.rule == POLICY]
    to_inference = any("grants ml-inference (222222222222" in m for m in reported)
    assert to_inference == allowed, (allowed, reported)
