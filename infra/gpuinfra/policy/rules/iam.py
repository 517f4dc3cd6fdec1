"""IAM hygiene beyond "* on *" (security.py): what else hands a principal the keys to the account.

- A service-wide wildcard on a sensitive service (`iam:*`, `kms:*`, `sts:*`, ...) in an identity policy: every
  present and future action of the service, including those that grant more permissions.
- `Allow` with `NotAction`: everything except the listed actions, in every service (IAM User Guide, "IAM JSON
  policy elements: NotAction": "can result in granting more permissions than intended").
- `iam:PassRole` on `Resource: "*"`: the principal can hand any role, an admin one included, to a service it
  controls (IAM User Guide, "Grant a user permissions to pass a role to an AWS service").
- AWS managed policies that are administrator-equivalent (AWS Managed Policy Reference: IAMFullAccess grants
  `iam:*`, with which a principal attaches AdministratorAccess to itself).
- Actions no AWS service defines (a typo grants nothing, silently), checked against the IAM action catalog
  bundled with the `parliament` library (its iam_definition.json, from the AWS Service Authorization
  Reference; read as data: importing parliament needs pkg_resources); advisory, since the bundled catalog can lag AWS.

Identity policies are judged (inline and managed documents, roles' inline policies, attachments); resource
policies legitimately give `kms:*` to the account root (the default key policy, AWS KMS Developer Guide,
"Default key policy"), so only their actions' validity is checked.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any

from pulumi_policy import ResourceValidationArgs

from gpuinfra.graph import tokens
from gpuinfra.policy.rules.declare import ADVISORY, MANDATORY, ReportViolation, resource_policy
from gpuinfra.policy.rules.security import IAM_ATTACHMENTS, IAM_POLICY_DOCS
from gpuinfra.policy.rules.separation import RESOURCE_POLICIES
from gpuinfra.policy.rules.values import get, listed, statements
from gpuinfra.preflight.access.catalog import definitions, iam_catalog

SENSITIVE = ("iam", "kms", "sts", "organizations", "secretsmanager", "ssm", "account", "cloudtrail", "s3")
"""Services whose wildcard hands over identities, keys, secrets, audit trails or all data."""
ADMIN_EQUIVALENT = frozenset(
    f"arn:aws:iam::aws:policy/{name}"
    for name in (
        "AdministratorAccess",
        "IAMFullAccess",
        "AdministratorAccess-Amplify",
        "AdministratorAccess-AWSElasticBeanstalk",
        "AWSOrganizationsFullAccess",
    )
)
PASS_ROLE = "iam:passrole"


def identity_documents(args: ResourceValidationArgs) -> list[Any]:
    if args.resource_type == tokens.IAM_ROLE:
        return [get(p, "policy") for p in get(args.props, "inlinePolicies", default=[])]
    return [get(args.props, "policy")]


@resource_policy(
    "security-iam-least-privilege",
    "No identity policy allows a sensitive service's every action (iam:*, kms:*, ...), Allow with NotAction, or "
    "iam:PassRole on every resource; no administrator-equivalent managed policy is attached.",
    MANDATORY,
    types=(*IAM_POLICY_DOCS, tokens.IAM_ROLE, *IAM_ATTACHMENTS),
)
def least_privilege(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    attached = [get(args.props, "policyArn")] if args.resource_type in IAM_ATTACHMENTS else []
    attached += listed(get(args.props, "managedPolicyArns")) if args.resource_type == tokens.IAM_ROLE else []
    for arn in attached:
        if arn in ADMIN_EQUIVALENT:
            report_violation(f"{args.name} attaches {arn}, which is administrator-equivalent; attach least privilege")
    if args.resource_type in IAM_ATTACHMENTS:
        return
    for document in identity_documents(args):
        for statement in statements(document):
            for problem in statement_problems(statement):
                report_violation(f"{args.name}: statement {statement.get('Sid') or '(no Sid)'} {problem}")


def statement_problems(statement: Mapping[str, Any]) -> Iterator[str]:
    if statement.get("Effect") != "Allow":
        return
    if "NotAction" in statement:
        yield (
            f"allows NotAction {sorted(str(a) for a in listed(statement.get('NotAction')))}: every other action of "
            "every service; list the actions it needs"
        )
    actions = [str(a) for a in listed(statement.get("Action"))]
    wide = sorted({a for a in actions if a == "*" or whole_services(a)})
    if wide:
        yield f"allows {', '.join(wide)}: every action of a sensitive service; name the actions it needs"
    resources = [str(r) for r in listed(statement.get("Resource"))]
    everywhere = "NotResource" in statement or any(any_role(r) for r in resources)
    if everywhere and any(fnmatchcase(PASS_ROLE, a.lower()) for a in actions):
        yield "allows iam:PassRole on every role (Resource *); name the roles it may pass"
    granting = sorted({g for a in actions if a not in wide for g in permissions_management(a)})
    if everywhere and granting:
        shown = ", ".join(granting[:6]) + (f" and {len(granting) - 6} more" if len(granting) > 6 else "")
        yield (
            f"allows {shown} on every role: IAM permissions management (the access level AWS's Service Authorization "
            "Reference gives them), with which the principal can grant itself any permission; name the roles and "
            "policies it may manage"
        )


def any_role(resource: str) -> bool:
    """A Resource pattern that matches any role of any account (`*`, `arn:aws:*:*:*:*`, `arn:aws:iam::*:role/*`):
    IAM matches `*` and `?` across every character of the ARN (IAM User Guide, "IAM JSON policy elements:
    Resource")."""
    return fnmatchcase(ANY_ROLE, resource.lower())


ANY_ROLE = "arn:aws:iam::123456789012:role/any-role"
"""An ARN no policy of ours names: a pattern that matches it matches every role."""


@lru_cache(maxsize=4096)
def whole_services(action: str) -> tuple[str, ...]:
    """The sensitive services all of whose actions `action` (with IAM's wildcards) matches, as IAM expands it
    against the action catalog: `iam:*`, `iam:?*`, `i*:*`, `*:*` each grant every IAM action."""
    prefix, _, pattern = action.lower().partition(":")
    if not pattern:
        return ()
    services = iam_catalog()
    return tuple(
        s
        for s in SENSITIVE
        if fnmatchcase(s, prefix) and services.get(s) and all(fnmatchcase(a, pattern) for a in services[s])
    )


@lru_cache(maxsize=4096)
def permissions_management(action: str) -> tuple[str, ...]:
    """The IAM actions `action` expands to whose access level is Permissions management (attach, put, create or
    set a policy, change a trust policy or a permissions boundary), from parliament's bundled catalog."""
    prefix, _, pattern = action.lower().partition(":")
    if action == "*":
        prefix, pattern = "*", "*"
    if not pattern or not fnmatchcase("iam", prefix):
        return ()
    return tuple(f"iam:{name}" for name in iam_permissions_management() if fnmatchcase(name.lower(), pattern))


@lru_cache(maxsize=1)
def iam_permissions_management() -> tuple[str, ...]:
    """IAM's actions of access level "Permissions management" (as the catalog spells them)."""
    return tuple(
        p["privilege"]
        for service in definitions()
        if service["prefix"].lower() == "iam"
        for p in service["privileges"]
        if p.get("access_level") == "Permissions management"
    )


@lru_cache(maxsize=4096)
def unknown_action(action: str) -> bool:
    """No action of the IAM catalog matches `action`: `service:pattern`, the pattern matched case-insensitively
    with IAM's wildcards (`*`, `?`), as parliament's expand_action matches it."""
    if action == "*":
        return False
    prefix, _, pattern = action.lower().partition(":")
    if not pattern or ":" in pattern:
        return True
    services = iam_catalog()
    names = [a for p, actions in services.items() if prefix in (p, "*") for a in actions]
    if prefix != "*" and prefix not in services:
        return True
    if prefix in services and not services[prefix] and pattern == "*":
        return False  # a service with no actions of its own (parliament: "the action must be *")
    return not any(fnmatchcase(name, pattern) for name in names)


@resource_policy(
    "security-iam-known-actions",
    "Every action an IAM, bucket, key or other resource policy names is one AWS defines (a typo grants nothing).",
    ADVISORY,
    types=(*IAM_POLICY_DOCS, tokens.IAM_ROLE, *RESOURCE_POLICIES),
)
def known_actions(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    documents = identity_documents(args) if args.resource_type in (*IAM_POLICY_DOCS, tokens.IAM_ROLE) else []
    if args.resource_type in RESOURCE_POLICIES:
        documents = [get(args.props, "policy")]
    if args.resource_type == tokens.IAM_ROLE:
        documents.append(get(args.props, "assumeRolePolicy"))
    for document in documents:
        for statement in statements(document):
            for field in ("Action", "NotAction"):
                unknown = sorted({str(a) for a in listed(statement.get(field)) if unknown_action(str(a))})
                if unknown:
                    report_violation(
                        f"{args.name}: statement {statement.get('Sid') or '(no Sid)'} names {', '.join(unknown)}, "
                        "which no AWS service defines (IAM action catalog bundled with parliament); check the spelling"
                    )


__all__ = [
    "ADMIN_EQUIVALENT",
    "SENSITIVE",
    "any_role",
    "known_actions",
    "least_privilege",
    "permissions_management",
    "statement_problems",
    "whole_services",
]
