"""Whom a resource policy lets in from other accounts, asked of the one evaluator (decide.py) on each grantee's
behalf, so the policy pack and the flows judge a policy the same way.

An Allow statement names its grantees in its Principal (every form: decide.py, statements.py); for each the
evaluator is asked every request the statement covers: its actions expanded against AWS's action catalog (and
taken as written, for an action newer than the catalog), on its resources (each wildcard spelled three ways, so
a Deny on one spelling cannot hide the others), with a context that holds only what is known of the caller (its
ARN and account, TLS on). A statement naming everyone (`*`, NotPrincipal, a web identity provider's users) is
asked on behalf of an account nobody lists and of each account the caller names (a condition may pin one).
Conditions on other keys are only known at request time: a grant that turns on one is "cannot judge".
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from gpuinfra.graph.views import account_of_arn
from gpuinfra.preflight.access.catalog import expand
from gpuinfra.preflight.access.decide import Decision, Policies, Principal, Request, evaluate
from gpuinfra.preflight.access.statements import Statement, parse

STRANGER = "000000000000"
"""An account no organization lists: the probe for 'anyone'."""
PROBE_ROLE = "gpuinfra-probe"
SPELLINGS = (PROBE_ROLE, "~", "*")
"""How a resource wildcard is spelled in the probes (a name, a character no prefix uses, the wildcard itself)."""
ALLOW_ALL = parse({"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}, "the grantee's own policies")
"""Another account's identity policies are not in sight: assume they allow (its administrator can)."""
PROBE_CONTEXT = {"aws:SecureTransport": "true"}


@dataclass(frozen=True)
class Grantee:
    """Whom a statement may grant: an account id (`account`), anyone (`anyone`), or an S3 canonical user."""

    principal: Principal
    account: str = ""
    anyone: bool = False
    how: str = ""
    """For anyone: how the statement says it ("Principal *", "NotPrincipal: ...")."""
    unreadable: str = ""
    """Why whom it names cannot be told (a unique id names no account): the answer is unknown."""

    @property
    def label(self) -> str:
        if self.principal.form == "canonical":
            return f"canonical user {self.principal.arn}"
        return self.account or self.principal.arn


@dataclass(frozen=True)
class Reach:
    """One grantee of one Allow statement, and what the evaluator decides for the requests the statement covers."""

    statement: Statement
    grantee: Grantee
    decision: Decision


def _role(account: str) -> Principal:
    return Principal(f"arn:aws:iam::{account}:role/{PROBE_ROLE}", account)


def _anyone(statement: Statement) -> str | None:
    p = statement.principals
    if p is None:
        return None
    if p.negated:
        return "NotPrincipal: everyone but those listed"
    if p.everyone:
        return "Principal *"
    return None


def grantees(statement: Statement, accounts: Iterable[str]) -> Iterator[Grantee]:
    """Whom an Allow statement may grant: the accounts it names (AWS principals, SAML/OIDC providers), S3
    canonical users, and for a statement naming everyone a stranger plus each of `accounts`. A principal naming
    no account (a unique id) is a grantee whose account is unknown: the evaluator's answer is reported as is."""
    p = statement.principals
    if p is None:
        return
    how = _anyone(statement)
    if how is not None:
        yield Grantee(_role(STRANGER), STRANGER, anyone=True, how=how)
        yield from (Grantee(_role(a), a) for a in accounts)
        return
    for value in p.aws:
        account = value if value.isdigit() else account_of_arn(value)
        if not account:
            why = f"the principal {value} names no account (a deleted role's unique id, or a malformed ARN)"
            yield Grantee(_role(STRANGER), value, unreadable=why)
            continue
        named = value.startswith("arn:") and (":role/" in value or ":user/" in value or ":assumed-role/" in value)
        yield Grantee(Principal(value, account) if named else _role(account), account)
    for value in p.federated:
        if value.startswith("arn:"):
            yield Grantee(Principal(value, account_of_arn(value), "federated"), account_of_arn(value))
        else:
            how = "Federated: every user of a web identity provider"
            yield Grantee(Principal(value, None, "federated"), anyone=True, how=how)
    for value in p.canonical:
        yield Grantee(Principal(value, None, "canonical"))


def _actions(statement: Statement, services: tuple[str, ...]) -> list[str]:
    """Concrete actions the statement covers, within `services`; its own spellings too (newer than the catalog)."""
    if statement.not_actions:
        candidates = [a for s in services or ("*",) for a in expand(f"{s}:*", services)]
        return [a for a in candidates if statement.covers_action(a)] or ["*"]
    out = [a for pattern in statement.actions for a in expand(pattern, services)]
    return sorted(set(out)) + [a for a in statement.actions if a.lower() not in out]


def _resources(statement: Statement, service: str) -> list[str]:
    """Each Resource pattern in three spellings; a resource of the service when the statement names none."""
    if not statement.resources:
        return [f"arn:aws:{service or 'probe'}:::{PROBE_ROLE}"]
    return sorted({r.replace("?", "x").replace("*", s) for r in statement.resources for s in SPELLINGS})


def ask(
    statement: Statement,
    grantee: Grantee,
    document: tuple[Statement, ...],
    own_account: str,
    services: tuple[str, ...] = (),
    key: bool = False,
) -> Decision:
    """The evaluator's answer for the grantee over every request `statement` covers: allow as soon as one is
    allowed, else unknown when one is, else deny."""
    if grantee.unreadable:
        return Decision("unknown", grantee.unreadable)
    policies = Policies(
        identity=ALLOW_ALL if not grantee.principal.resource_only else (),
        resource=document,
        resource_origin="the resource policy",
        key=key,
    )
    unknown: Decision | None = None
    denied = Decision("deny", "no request the statement covers is allowed")
    for action in _actions(statement, services):
        for resource in _resources(statement, services[0] if services else ""):
            request = Request(grantee.principal, action, resource, own_account, PROBE_CONTEXT, complete=False)
            decision = evaluate(request, policies)
            if decision.outcome == "allow":
                return decision
            if decision.outcome == "unknown" and unknown is None:
                unknown = decision
    return unknown or denied


def reach(
    document: tuple[Statement, ...],
    own_account: str,
    accounts: Iterable[str],
    services: tuple[str, ...] = (),
    key: bool = False,
) -> list[Reach]:
    """Every grantee outside `own_account` of each Allow statement of `document`, and whether it gets in."""
    others = [a for a in accounts if a != own_account]
    out = []
    for statement in document:
        if statement.effect != "Allow":
            continue
        for grantee in grantees(statement, others):
            if grantee.account == own_account and not grantee.anyone:
                continue
            out.append(Reach(statement, grantee, ask(statement, grantee, document, own_account, services, key)))
    return out


__all__ = ["STRANGER", "Grantee", "Reach", "ask", "grantees", "reach"]
