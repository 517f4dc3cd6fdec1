"""Policy documents as statements that know where they come from, and whether one applies to a request.

IAM User Guide, "IAM JSON policy element reference"
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements.html): Effect, Principal,
Action/NotAction, Resource/NotResource and Condition; a statement applies when each element it has matches.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from gpuinfra.preflight.access.conditions import Context, condition_state
from gpuinfra.preflight.access.match import action_matches, resource_matches


class UnreadablePolicy(ValueError):
    """A document that is not a policy (or is not known yet): what it would decide is unknown."""


def _many(value: Any) -> TypeGuard[Sequence[Any]]:
    """A list, or a list as pulumi-policy hands it to a pack (a read-only Sequence proxy)."""
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))


def _listed(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    return tuple(str(v) for v in (value if _many(value) else [value]))


@dataclass(frozen=True)
class Principals:
    """A Principal element, every form IAM reads (IAM User Guide, "AWS JSON policy elements: Principal"): `"*"`
    (everyone), AWS principals (ARNs, bare account ids or unique ids), service principals, federated principals
    (a SAML or OIDC provider's ARN, or a web identity provider's name such as `accounts.google.com`) and S3's
    canonical user ids."""

    everyone: bool = False
    aws: tuple[str, ...] = ()
    services: tuple[str, ...] = ()
    negated: bool = False
    """A NotPrincipal element: the statement applies to every principal except those it names."""
    federated: tuple[str, ...] = ()
    canonical: tuple[str, ...] = ()

    @classmethod
    def of(cls, value: Any, negated: bool = False) -> Principals:
        if value == "*":
            return cls(everyone=True, negated=negated)
        if not isinstance(value, Mapping):
            raise UnreadablePolicy(f"Principal {value!r} is neither '*' nor an object")
        unread = sorted(str(k) for k in set(value) - set(PRINCIPAL_FORMS))
        if unread:
            raise UnreadablePolicy(f"a principal of form {', '.join(unread)} is not one IAM defines")
        aws = _listed(value.get("AWS"))
        return cls(
            everyone="*" in aws,
            aws=aws,
            services=_listed(value.get("Service")),
            negated=negated,
            federated=_listed(value.get("Federated")),
            canonical=_listed(value.get("CanonicalUser")),
        )

    def names(self, arn: str) -> bool:
        """Whether the element lists `arn` (or id) itself, in any form."""
        return arn in self.aws or arn in self.services or arn in self.federated or arn in self.canonical


PRINCIPAL_FORMS = ("AWS", "Service", "Federated", "CanonicalUser")


@dataclass(frozen=True)
class Statement:
    """One statement, with the policy it belongs to (`origin`: resource name and policy kind)."""

    origin: str
    sid: str
    effect: str
    actions: tuple[str, ...]
    not_actions: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    not_resources: tuple[str, ...] = ()
    principals: Principals | None = None
    condition: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.origin} statement {self.sid!r}" if self.sid else f"{self.origin} (unnamed statement)"

    def covers_action(self, action: str) -> bool:
        if self.not_actions:
            return not any(action_matches(a, action) for a in self.not_actions)
        return any(action_matches(a, action) for a in self.actions)

    def covers_resource(self, arn: str) -> bool:
        """A key policy's or other resource policy's statement may omit Resource: it then means the resource."""
        if self.not_resources:
            return not any(resource_matches(r, arn) for r in self.not_resources)
        return not self.resources or any(resource_matches(r, arn) for r in self.resources)

    def applies(self, action: str, arn: str, context: Context, complete: bool = True) -> bool | None:
        """Action, resource and condition match (the principal is matched by the evaluator, which knows accounts);
        None when only a condition on a key an incomplete context lacks could decide."""
        if not (self.covers_action(action) and self.covers_resource(arn)):
            return False
        return condition_state(self.condition, context, complete)


def parse(document: Any, origin: str) -> tuple[Statement, ...]:
    """The statements of a policy document (a JSON string or an object)."""
    if isinstance(document, str):
        try:
            document = json.loads(document)
        except ValueError as exc:
            raise UnreadablePolicy(f"{origin}: not JSON ({exc})") from exc
    if not isinstance(document, Mapping):
        raise UnreadablePolicy(f"{origin}: not a policy document")
    raw = document.get("Statement")
    items: Sequence[Any] = raw if _many(raw) else [raw] if isinstance(raw, Mapping) else []
    out = []
    for n, s in enumerate(items):
        if not isinstance(s, Mapping) or s.get("Effect") not in ("Allow", "Deny"):
            raise UnreadablePolicy(f"{origin}: Statement[{n}] is not a statement")
        try:
            principals = (
                Principals.of(s["Principal"])
                if "Principal" in s
                else Principals.of(s["NotPrincipal"], negated=True)
                if "NotPrincipal" in s
                else None
            )
        except UnreadablePolicy as exc:
            raise UnreadablePolicy(f"{origin}: Statement[{n}]: {exc}") from None
        condition = s.get("Condition") or {}
        if not isinstance(condition, Mapping):
            raise UnreadablePolicy(f"{origin}: Statement[{n}]: Condition is not an object")
        out.append(
            Statement(
                origin=origin,
                sid=str(s.get("Sid", "")),
                effect=str(s["Effect"]),
                actions=_listed(s.get("Action")),
                not_actions=_listed(s.get("NotAction")),
                resources=_listed(s.get("Resource")),
                not_resources=_listed(s.get("NotResource")),
                principals=principals,
                condition=dict(condition),
            )
        )
    return tuple(out)


__all__ = ["PRINCIPAL_FORMS", "Principals", "Statement", "UnreadablePolicy", "parse"]
