"""AWS's policy evaluation logic, offline: one request judged by every policy that bears on it.

Rules implemented, each from the IAM User Guide or the AWS KMS Developer Guide:
- "Policy evaluation logic" (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html):
  an explicit Deny in any applicable policy overrides every Allow; without an Allow the request is implicitly
  denied; a permissions boundary sets the maximum: an action it does not allow is denied even when an identity
  policy allows it.
- "Policy evaluation for requests within a single account" (same page): within one account an Allow in the
  identity policy OR in the resource-based policy is enough; a resource policy that names the account
  (`arn:aws:iam::<account>:root`) delegates to IAM, so the identity policy must allow.
- "Cross-account policy evaluation logic"
  (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic-cross-account.html):
  "the identity-based policy of the requester must allow ... AND the resource-based policy of the trusting
  account must allow" the request.
- KMS "Key policies in AWS KMS" (https://docs.aws.amazon.com/kms/latest/developerguide/key-policies.html):
  "Every KMS key must have exactly one key policy"; "Unless the key policy explicitly allows it, you cannot use
  IAM policies to allow access to a KMS key"; the key policy statement for the account root "allows IAM policies
  in the account to control access" (so IAM must then allow); other accounts: "Allowing users in other accounts
  to use a KMS key" (https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-modifying-external-accounts.html)
  needs the key policy AND an IAM policy in the external account.
- KMS "Grants in AWS KMS" (https://docs.aws.amazon.com/kms/latest/developerguide/grants.html): a grant allows
  its grantee principal the grant's operations (within its encryption-context constraints) without a key-policy
  or IAM statement; an explicit Deny still wins.
Service principals (`s3.amazonaws.com`), federated users (AssumeRoleWithSAML / AssumeRoleWithWebIdentity: the
role's trust policy decides) and S3 canonical users (another account, whose identity policies are not in sight) are
judged by the resource policy alone.

A request whose context is not complete (`Request.complete`: the pack asks on behalf of a caller, not of one
request) leaves a condition on a key it lacks undecided: when such a statement's Allow is what would grant, the
outcome is "unknown" (cannot judge), never allow or deny; such a Deny is not counted (it may not apply).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from gpuinfra.preflight.access.conditions import Context, ContextValue, UnsupportedCondition, open_keys
from gpuinfra.preflight.access.statements import Statement

Outcome = Literal["allow", "deny", "unknown"]
SERVICE_SUFFIX = ".amazonaws.com"


PrincipalForm = Literal["aws", "federated", "canonical"]


@dataclass(frozen=True)
class Principal:
    """An IAM role (or user) by ARN in its account, a service principal (`s3.amazonaws.com`, no account), a
    federated identity provider's users (`form="federated"`: the provider's ARN, or a web identity provider's
    name) or an S3 canonical user (`form="canonical"`: its id)."""

    arn: str
    account: str | None = None
    form: PrincipalForm = "aws"

    @property
    def is_service(self) -> bool:
        return self.form == "aws" and self.account is None and self.arn.endswith(SERVICE_SUFFIX)

    @property
    def resource_only(self) -> bool:
        """Judged by the resource policy alone: no identity policy of its own is in sight."""
        return self.is_service or self.form != "aws"

    @property
    def root(self) -> str:
        return f"arn:aws:iam::{self.account}:root"


@dataclass(frozen=True)
class Grant:
    """A KMS grant (CreateGrant): who may call which operations on one key, under which context constraints."""

    origin: str
    key_arn: str
    grantee: str
    operations: tuple[str, ...]
    context_subset: Mapping[str, str] | None = None
    context_equals: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Policies:
    """What bears on one request. `resource is None`: the resource has no resource-based policy; `key`: the
    resource is a KMS key, whose key policy must allow; `unknown`: parts that could not be read (a managed
    policy whose text is not in the graph), which could add an Allow where this evaluation finds none."""

    identity: tuple[Statement, ...] = ()
    boundary: tuple[Statement, ...] | None = None
    resource: tuple[Statement, ...] | None = None
    resource_origin: str = "the resource policy"
    key: bool = False
    grants: tuple[Grant, ...] = ()
    identity_unknown: tuple[str, ...] = ()


@dataclass(frozen=True)
class Request:
    principal: Principal
    action: str
    resource: str
    resource_account: str
    context: Context = field(default_factory=dict)
    complete: bool = True
    """False: the context holds only what is known of the caller; other keys are undecided, not absent."""

    @property
    def full_context(self) -> Context:
        """The keys AWS adds to every request (IAM UG, "AWS global condition context keys"), under the caller's."""
        base: dict[str, ContextValue] = {"aws:PrincipalArn": self.principal.arn}
        if self.principal.account:
            base["aws:PrincipalAccount"] = self.principal.account
            if self.action.lower().startswith("kms:"):
                base["kms:CallerAccount"] = self.principal.account
        return {**base, **dict(self.context)}


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    reason: str
    statements: tuple[str, ...] = ()
    """Labels of the statements that decided (the Allows used, or the Deny)."""
    missing: str = ""
    """For a denial for lack of an Allow: the policy that needs one, and what it must allow."""


def _principal_match(s: Statement, p: Principal) -> Literal["direct", "account", None]:
    """How a resource-policy statement names the caller: itself (or everyone), its account, or not at all. A
    NotPrincipal statement names everyone it does not exclude; a role is excluded only when both it and its account
    are listed (IAM User Guide, "AWS JSON policy elements: NotPrincipal": with Deny, "you must also specify the
    account ARN of the not-denied principal", else the account's session is not excluded)."""
    if s.principals is None:
        return None
    if s.principals.negated:
        listed = (*s.principals.services, *s.principals.federated, *s.principals.canonical)
        return None if _excluded(s.principals.everyone, s.principals.aws, listed, p) else "direct"
    if s.principals.everyone or s.principals.names(p.arn):
        return "direct"
    if p.form == "aws" and p.account and (p.root in s.principals.aws or p.account in s.principals.aws):
        return "account"
    return None


def _excluded(everyone: bool, aws: tuple[str, ...], services: tuple[str, ...], p: Principal) -> bool:
    if everyone:
        return True
    if p.resource_only:
        return p.arn in services
    return p.arn in aws and bool(p.account) and (p.root in aws or p.account in aws)


def _applying(statements: Iterable[Statement], r: Request, effect: str, maybe: bool = False) -> list[Statement]:
    """Statements of `effect` that apply; with `maybe`, also an Allow that only an undecided condition could stop."""
    ctx = r.full_context
    wanted = (True, None) if maybe and effect == "Allow" else (True,)
    return [s for s in statements if s.effect == effect and s.applies(r.action, r.resource, ctx, r.complete) in wanted]


def _grant_allows(g: Grant, r: Request) -> bool:
    operation = r.action.split(":", 1)[1]
    if g.key_arn != r.resource or g.grantee not in (r.principal.arn, r.principal.root):
        return False
    if not any(op.lower() == operation.lower() for op in g.operations):
        return False
    prefix = "kms:EncryptionContext:"
    have = {k[len(prefix) :]: v for k, v in r.context.items() if k.startswith(prefix)}
    if g.context_equals is not None and dict(g.context_equals) != have:
        return False
    return g.context_subset is None or all(have.get(k) == v for k, v in g.context_subset.items())


def _denied_explicitly(r: Request, p: Policies) -> Decision | None:
    denies = _applying(p.identity, r, "Deny") + _applying(p.boundary or (), r, "Deny")
    denies += [s for s in _applying(p.resource or (), r, "Deny") if _principal_match(s, r.principal)]
    if denies:
        labels = tuple(s.label for s in denies)
        return Decision("deny", f"explicitly denied by {', '.join(labels)}", labels)
    return None


def evaluate(r: Request, p: Policies) -> Decision:
    """Allow, deny (explicitly or for lack of an Allow, naming the policy that lacks one) or unknown: a condition
    operator it does not implement, or (for an incomplete context) an Allow that turns on a key it lacks."""
    try:
        decided = _evaluate(r, p)
        if decided.outcome == "allow" or r.complete:
            return decided
        maybe = _evaluate(r, p, maybe=True)
    except UnsupportedCondition as exc:
        return Decision("unknown", str(exc))
    if maybe.outcome != "allow":
        return decided
    every = [s for s in (*p.identity, *(p.boundary or ()), *(p.resource or ())) if s.label in maybe.statements]
    turning = [s for s in every if open_keys(s.condition, r.full_context)]
    keys = sorted({k for s in turning for k in open_keys(s.condition, r.full_context)})
    labels = tuple(s.label for s in turning)
    return Decision(
        "unknown",
        f"{', '.join(labels)} would allow it under a condition on {', '.join(keys)}, which only a request sets",
        labels,
    )


def _evaluate(r: Request, p: Policies, maybe: bool = False) -> Decision:
    denied = _denied_explicitly(r, p)
    if denied:
        return denied
    resource_allows = [s for s in _applying(p.resource or (), r, "Allow", maybe) if _principal_match(s, r.principal)]
    direct = [s for s in resource_allows if _principal_match(s, r.principal) == "direct"]
    identity = _applying(p.identity, r, "Allow", maybe)
    what = f"{r.action} on {r.resource}"
    if r.principal.resource_only:
        if direct:
            return Decision("allow", f"{p.resource_origin} allows the principal", tuple(s.label for s in direct))
        return _lacking(p.resource_origin, f"an Allow of {what} to the principal {r.principal.arn}")
    if p.boundary is not None and not _applying(p.boundary, r, "Allow", maybe):
        return _lacking("the permissions boundary", f"an Allow of {what} (a boundary caps every other Allow)")
    grants = [g for g in p.grants if _grant_allows(g, r)] if p.key else []
    if grants:
        return Decision("allow", "a KMS grant allows it", tuple(g.origin for g in grants))
    same_account = r.principal.account == r.resource_account
    if p.key and not resource_allows:
        return _lacking(
            p.resource_origin, f"an Allow of {what} to {r.principal.arn} or to its account {r.principal.root}"
        )
    if same_account and direct:
        return Decision("allow", f"{p.resource_origin} names the caller", tuple(s.label for s in direct))
    if not same_account and not resource_allows:
        return _lacking(
            p.resource_origin,
            f"an Allow of {what} to {r.principal.arn} or to its account {r.principal.root} "
            "(across accounts the resource policy must allow too)",
        )
    if identity:
        used = tuple(s.label for s in identity + resource_allows)
        if same_account:
            return Decision("allow", "the identity policy allows it in the resource's account", used)
        return Decision("allow", "both the identity and the resource policy allow it across accounts", used)
    where = f"the identity policies of {r.principal.arn}"
    if p.identity_unknown:
        return Decision(
            "unknown", f"no statement of {where} allows {what}, and {', '.join(p.identity_unknown)} is not readable"
        )
    return _lacking(where, f"an Allow of {what}")


def _lacking(where: str, what: str) -> Decision:
    return Decision("deny", f"implicitly denied: {where} has no statement that grants it", missing=f"{where}: {what}")


__all__ = ["Decision", "Grant", "Outcome", "Policies", "Principal", "PrincipalForm", "Request", "evaluate"]
