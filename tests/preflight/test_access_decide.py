"""The offline evaluator against cases whose AWS outcome the documentation states (quoted beside each case).

Sources (fetched for these tests, quoted verbatim):
- IAM UG "Policy evaluation logic" and "Policy evaluation for requests within a single account":
  POLICY = https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html
  SINGLE = https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic_policy-eval-basics.html
  DENYALLOW = .../reference_policies_evaluation-logic_policy-eval-denyallow.html
- CROSS = https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic-cross-account.html
- KEYS = https://docs.aws.amazon.com/kms/latest/developerguide/key-policies.html
- CONDITIONS = https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html
- BOUNDARIES = https://docs.aws.amazon.com/IAM/latest/UserGuide/access_policies_boundaries.html
- GRANTS = https://docs.aws.amazon.com/kms/latest/developerguide/grants.html
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from gpuinfra.preflight.access import Grant, Policies, Principal, Request, evaluate, parse

A, B = "111111111111", "333333333333"
ROLE = Principal(f"arn:aws:iam::{A}:role/uploader", A)
BUCKET = "arn:aws:s3:::weights"
OBJECT = f"{BUCKET}/models/x.safetensors"
KEY = f"arn:aws:kms:us-east-1:{B}:key/k1"


def doc(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def allow(action: Any, resource: Any = "*", **extra: Any) -> dict[str, Any]:
    return {"Effect": "Allow", "Action": action, "Resource": resource, **extra}


def deny(action: Any, resource: Any = "*", **extra: Any) -> dict[str, Any]:
    return {"Effect": "Deny", "Action": action, "Resource": resource, **extra}


def identity(*statements: dict[str, Any]) -> Any:
    return parse(doc(*statements), "identity")


def resource_policy(*statements: dict[str, Any]) -> Any:
    return parse(doc(*statements), "resource policy")


def req(action: str, resource: str, account: str, principal: Principal = ROLE, **context: Any) -> Request:
    return Request(principal, action, resource, account, context)


# DENYALLOW: "An explicit deny overrides an explicit allow."
def test_explicit_deny_in_a_resource_policy_overrides_an_identity_allow() -> None:
    p = Policies(
        identity=identity(allow("s3:GetObject", OBJECT)),
        resource=resource_policy(deny("s3:*", [BUCKET, f"{BUCKET}/*"], Principal="*")),
    )
    d = evaluate(req("s3:GetObject", OBJECT, A), p)
    assert d.outcome == "deny" and "explicitly denied" in d.reason


# DENYALLOW: "By default, all requests are implicitly denied"; SINGLE: "If either the identity-based policy or
# the resource-based policy within the same account allows the request and the other doesn't, the request is
# still allowed."
@pytest.mark.parametrize(
    ("identity_statements", "resource_statements", "outcome"),
    [
        ([allow("s3:GetObject", OBJECT)], None, "allow"),  # identity alone, no bucket policy
        ([], [allow("s3:GetObject", OBJECT, Principal={"AWS": ROLE.arn})], "allow"),  # resource policy names the role
        ([], None, "deny"),  # nothing allows: implicit deny
        ([allow("s3:GetObject", f"{BUCKET}/other/*")], None, "deny"),  # an Allow for another prefix
    ],
)
def test_within_one_account_either_policy_is_enough(
    identity_statements: list[dict[str, Any]], resource_statements: list[dict[str, Any]] | None, outcome: str
) -> None:
    p = Policies(
        identity=identity(*identity_statements) if identity_statements else (),
        resource=resource_policy(*resource_statements) if resource_statements else None,
    )
    assert evaluate(req("s3:GetObject", OBJECT, A), p).outcome == outcome


# CROSS: "To allow cross-account access, you attach a resource-based policy to the resource that you want to
# share. You must also attach an identity-based policy to the identity that acts as the principal in the
# request." ... "The principal's identity-based policy must allow the requested access to the resource in the
# trusting service."
@pytest.mark.parametrize(
    ("identity_allows", "resource_allows", "outcome", "lacking"),
    [
        (True, True, "allow", None),
        (True, False, "deny", "resource policy"),
        (False, True, "deny", "identity policies"),
    ],
)
def test_across_accounts_both_must_allow(
    identity_allows: bool, resource_allows: bool, outcome: str, lacking: str | None
) -> None:
    p = Policies(
        identity=identity(allow("s3:PutObject", f"{BUCKET}/*")) if identity_allows else (),
        resource=resource_policy(
            allow("s3:PutObject", f"{BUCKET}/*", Principal={"AWS": f"arn:aws:iam::{A}:root"})
            if resource_allows
            else allow("s3:GetObject", f"{BUCKET}/*", Principal={"AWS": f"arn:aws:iam::{A}:root"})
        ),
    )
    d = evaluate(req("s3:PutObject", OBJECT, B), p)
    assert d.outcome == outcome
    if lacking:
        assert lacking in d.missing


# KEYS: "Unless the key policy explicitly allows it, you cannot use IAM policies to allow access to a KMS key.
# Without permission from the key policy, IAM policies that allow permissions have no effect."
def test_an_iam_allow_does_nothing_for_a_key_whose_policy_does_not_enable_iam() -> None:
    mine = Principal(f"arn:aws:iam::{B}:role/app", B)
    p = Policies(
        identity=identity(allow("kms:Decrypt", KEY)),
        resource=resource_policy(allow("kms:*", "*", Principal={"AWS": f"arn:aws:iam::{B}:role/admin"})),
        key=True,
    )
    d = evaluate(req("kms:Decrypt", KEY, B, mine), p)
    assert d.outcome == "deny" and "resource policy" in d.missing


# KEYS: "The default key policy enables IAM policies" (the statement that allows the account root `kms:*`).
def test_the_account_root_statement_delegates_the_key_to_iam() -> None:
    mine = Principal(f"arn:aws:iam::{B}:role/app", B)
    root = resource_policy(allow("kms:*", "*", Principal={"AWS": f"arn:aws:iam::{B}:root"}))
    assert (
        evaluate(
            req("kms:Decrypt", KEY, B, mine), Policies(identity(allow("kms:Decrypt", KEY)), None, root, key=True)
        ).outcome
        == "allow"
    )
    # delegation is not a grant: without the IAM Allow the role has nothing
    assert evaluate(req("kms:Decrypt", KEY, B, mine), Policies((), None, root, key=True)).outcome == "deny"


# KEYS (cross-account, "Allowing users in other accounts to use a KMS key"): the key policy must allow the
# external account and an IAM policy there must allow the user; one without the other is not enough.
def test_an_external_account_needs_the_key_policy_for_exactly_the_operation() -> None:
    key_policy = resource_policy(
        allow(["kms:GenerateDataKey", "kms:Encrypt"], "*", Principal={"AWS": f"arn:aws:iam::{A}:root"})
    )
    p = Policies(identity=identity(allow(["kms:Decrypt", "kms:GenerateDataKey"], KEY)), resource=key_policy, key=True)
    assert evaluate(req("kms:GenerateDataKey", KEY, B), p).outcome == "allow"
    d = evaluate(req("kms:Decrypt", KEY, B), p)
    assert d.outcome == "deny" and "kms:Decrypt" in d.missing and "resource policy" in d.missing


# BOUNDARIES: "An entity's permissions boundary allows it to perform only the actions that are allowed by both
# its identity-based policies and its permissions boundaries."
def test_a_boundary_caps_the_identity_policy() -> None:
    p = Policies(identity=identity(allow("s3:*", "*")), boundary=identity(allow("s3:GetObject", "*")))
    assert evaluate(req("s3:GetObject", OBJECT, A), p).outcome == "allow"
    d = evaluate(req("s3:PutObject", OBJECT, A), p)
    assert d.outcome == "deny" and "permissions boundary" in d.missing


# GRANTS: "A grant is a policy instrument that allows AWS principals to use KMS keys in cryptographic operations."
def test_a_grant_allows_its_grantee_only_its_operations() -> None:
    grant = Grant("grant g1", KEY, ROLE.arn, ("Decrypt",))
    p = Policies(
        resource=resource_policy(allow("kms:*", "*", Principal={"AWS": f"arn:aws:iam::{B}:root"})),
        key=True,
        grants=(grant,),
    )
    assert evaluate(req("kms:Decrypt", KEY, B), p).outcome == "allow"
    assert evaluate(req("kms:Encrypt", KEY, B), p).outcome == "deny"


# CONDITIONS: "If the key that you specify in a policy condition is not present in the request context, the
# values do not match and the condition is false. If the policy condition requires that the key is not
# matched, such as StringNotLike or ArnNotLike, and the right key is not present, the condition is true."
@pytest.mark.parametrize(
    ("condition", "context", "outcome"),
    [
        (
            {"StringEquals": {"kms:ViaService": "s3.us-east-1.amazonaws.com"}},
            {"kms:ViaService": "s3.us-east-1.amazonaws.com"},
            "allow",
        ),
        (
            {"StringEquals": {"kms:ViaService": "s3.us-east-1.amazonaws.com"}},
            {"kms:ViaService": "s3.us-west-2.amazonaws.com"},
            "deny",
        ),
        ({"StringEquals": {"kms:ViaService": "s3.us-east-1.amazonaws.com"}}, {}, "deny"),  # key absent: false
        ({"StringNotEquals": {"kms:ViaService": "ec2.us-east-1.amazonaws.com"}}, {}, "allow"),  # negated, absent: true
        ({"StringEqualsIfExists": {"kms:ViaService": "s3.us-east-1.amazonaws.com"}}, {}, "allow"),
        ({"Null": {"kms:ViaService": "false"}}, {}, "deny"),
        # values of one key are ORed; keys are ANDed
        (
            {"StringEquals": {"kms:ViaService": ["s3.eu-central-1.amazonaws.com", "s3.us-east-1.amazonaws.com"]}},
            {"kms:ViaService": "s3.us-east-1.amazonaws.com"},
            "allow",
        ),
        (
            {
                "StringEquals": {
                    "kms:ViaService": "s3.us-east-1.amazonaws.com",
                    "kms:EncryptionContext:aws:s3:arn": BUCKET,
                }
            },
            {"kms:ViaService": "s3.us-east-1.amazonaws.com", "kms:EncryptionContext:aws:s3:arn": OBJECT},
            "deny",
        ),
        ({"Bool": {"aws:SecureTransport": "true"}}, {"aws:SecureTransport": "true"}, "allow"),
        ({"StringLike": {"s3:prefix": ["models/*"]}}, {"s3:prefix": "models/llama/"}, "allow"),
        ({"StringLike": {"s3:prefix": ["models/*"]}}, {"s3:prefix": "uploads/"}, "deny"),
    ],
)
def test_condition_operators(condition: dict[str, Any], context: dict[str, str], outcome: str) -> None:
    p = Policies(identity=identity(allow("kms:Decrypt", "*", Condition=condition)))
    assert evaluate(req("kms:Decrypt", KEY, A, **context), p).outcome == outcome


# "IAM JSON policy elements: Action": "Action names are case-insensitive"; Resource: a `/*` names the objects,
# not the bucket itself.
def test_wildcards_follow_the_grammar() -> None:
    p = Policies(identity=identity(allow("S3:Get*", f"{BUCKET}/*")))
    assert evaluate(req("s3:GetObject", OBJECT, A), p).outcome == "allow"
    assert evaluate(req("s3:GetObject", BUCKET, A), p).outcome == "deny"
    assert evaluate(req("s3:PutObject", OBJECT, A), p).outcome == "deny"


def test_an_unreadable_managed_policy_makes_an_identity_gap_unknown_not_denied() -> None:
    p = Policies(identity=(), identity_unknown=("arn:aws:iam::aws:policy/Example",))
    assert evaluate(req("s3:GetObject", OBJECT, A), p).outcome == "unknown"


def test_a_service_principal_is_judged_by_the_resource_policy_alone() -> None:
    s3 = Principal("s3.amazonaws.com")
    p = Policies(
        resource=resource_policy(allow("kms:Decrypt", "*", Principal={"Service": "s3.amazonaws.com"})), key=True
    )
    assert evaluate(req("kms:Decrypt", KEY, B, s3), p).outcome == "allow"
    assert evaluate(req("kms:Encrypt", KEY, B, s3), p).outcome == "deny"


# NotPrincipal (IAM UG, "AWS JSON policy elements: NotPrincipal"): the statement applies to every principal it does
# not name; with Deny, "you must also specify the account ARN of the not-denied principal".
def test_a_not_principal_deny_denies_everyone_it_does_not_exclude() -> None:
    other = Principal(f"arn:aws:iam::{A}:role/other", A)
    statement = deny("s3:GetObject", OBJECT, NotPrincipal={"AWS": [ROLE.arn, f"arn:aws:iam::{A}:root"]})
    p = Policies(identity=identity(allow("s3:GetObject", OBJECT)), resource=resource_policy(statement))
    assert evaluate(req("s3:GetObject", OBJECT, A), p).outcome == "allow"  # the role and its account: excluded
    assert evaluate(req("s3:GetObject", OBJECT, A, other), p).outcome == "deny"


def test_a_not_principal_naming_only_the_role_does_not_exclude_it() -> None:
    statement = deny("s3:GetObject", OBJECT, NotPrincipal={"AWS": ROLE.arn})
    p = Policies(identity=identity(allow("s3:GetObject", OBJECT)), resource=resource_policy(statement))
    assert evaluate(req("s3:GetObject", OBJECT, A), p).outcome == "deny"


def test_a_not_principal_allow_grants_everyone_else() -> None:
    outsider = Principal(f"arn:aws:iam::{B}:role/reader", B)
    statement = allow("s3:GetObject", OBJECT, NotPrincipal={"AWS": f"arn:aws:iam::{A}:root"})
    p = Policies(identity=identity(allow("s3:GetObject", OBJECT)), resource=resource_policy(statement))
    assert evaluate(req("s3:GetObject", OBJECT, A, outsider), p).outcome == "allow"


def test_a_federated_principal_is_judged_by_the_trust_policy_alone() -> None:
    """IAM UG, "AWS JSON policy elements: Principal" (Federated): a web identity provider's users assume the role
    with AssumeRoleWithWebIdentity, which the role's trust policy alone allows (they have no identity policy)."""
    role = f"arn:aws:iam::{A}:role/deployer"
    trust = resource_policy(
        allow("sts:AssumeRoleWithWebIdentity", role, Principal={"Federated": "accounts.google.com"})
    )
    google = Principal("accounts.google.com", None, "federated")
    assert evaluate(req("sts:AssumeRoleWithWebIdentity", role, A, google), Policies(resource=trust)).outcome == "allow"
    other = Principal("cognito-identity.amazonaws.com", None, "federated")
    assert evaluate(req("sts:AssumeRoleWithWebIdentity", role, A, other), Policies(resource=trust)).outcome == "deny"


def test_a_principal_form_iam_does_not_define_is_unreadable_not_guessed() -> None:
    from gpuinfra.preflight.access.statements import UnreadablePolicy

    with pytest.raises(UnreadablePolicy, match="a principal of form Anonymous is not one IAM defines"):
        resource_policy(allow("s3:GetObject", OBJECT, Principal={"Anonymous": "*"}))


# CONDITIONS: "If the key that you specify in a policy condition is not present in the request context, the values
# do not match" -- for a complete request. A probe that knows only the caller cannot tell: unknown, never a guess.
def test_a_condition_on_a_key_only_a_request_sets_is_unknown_for_an_incomplete_context() -> None:
    outsider = Principal(f"arn:aws:iam::{B}:role/reader", B)
    statement = allow(
        "s3:GetObject", OBJECT, Principal={"AWS": B}, Condition={"StringEquals": {"aws:SourceVpce": "vpce-1a2b3c4d"}}
    )
    p = Policies(identity=identity(allow("s3:GetObject", OBJECT)), resource=resource_policy(statement))
    complete = Request(outsider, "s3:GetObject", OBJECT, A)
    assert evaluate(complete, p).outcome == "deny"  # a real request without the key: the condition is false
    probe = Request(outsider, "s3:GetObject", OBJECT, A, complete=False)
    decided = evaluate(probe, p)
    assert decided.outcome == "unknown" and "aws:SourceVpce" in decided.reason, decided
    pinned = allow(
        "s3:GetObject", OBJECT, Principal="*", Condition={"StringEquals": {"aws:PrincipalAccount": A}}
    )  # a key the probe holds (the caller's account) decides
    p = Policies(identity=identity(allow("s3:GetObject", OBJECT)), resource=resource_policy(pinned))
    assert evaluate(Request(outsider, "s3:GetObject", OBJECT, A, complete=False), p).outcome == "deny"


@pytest.mark.parametrize(
    "condition",
    [
        {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}},
        {"DateGreaterThan": {"aws:CurrentTime": "2020-01-01T00:00:00Z"}},
        {"NumericLessThan": {"s3:max-keys": "ten"}},
    ],
    ids=["IpAddress", "DateGreaterThan", "not-a-number"],
)
def test_an_operator_it_does_not_evaluate_is_unknown(condition: dict[str, Any]) -> None:
    outsider = Principal(f"arn:aws:iam::{B}:role/reader", B)
    statement = allow("s3:GetObject", OBJECT, Principal={"AWS": B}, Condition=condition)
    p = Policies(identity=identity(allow("s3:GetObject", OBJECT)), resource=resource_policy(statement))
    context = {"aws:SourceIp": "10.1.2.3", "aws:CurrentTime": "2025-01-01T00:00:00Z", "s3:max-keys": "5"}
    assert evaluate(Request(outsider, "s3:GetObject", OBJECT, A, context), p).outcome == "unknown"
