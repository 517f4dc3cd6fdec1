"""IAM policy documents and KMS key policies: well-formed, and naming the principals that use the key."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from gpuinfra.catalog import Catalog
from gpuinfra.clouds.aws.preflight.rules.base import Violation, rule
from gpuinfra.graph import Graph, Resource, judgeable, tokens

GRAMMAR = "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_grammar.html"
ACTION = re.compile(r"^(\*|[a-z0-9-]+:[A-Za-z0-9*?]+)\Z")
# (type, input) -> the document is a resource policy (names principals) or an identity policy (does not).
DOCUMENTS = {
    (tokens.IAM_ROLE, "assumeRolePolicy"): "trust",
    (tokens.IAM_ROLE_POLICY, "policy"): "identity",
    (tokens.IAM_POLICY, "policy"): "identity",
    (tokens.BUCKET_POLICY, "policy"): "resource",
    (tokens.KMS_KEY, "policy"): "resource",
    (tokens.VPC_ENDPOINT, "policy"): "resource",
    (tokens.SECRETS_MANAGER_SECRET, "policy"): "resource",
}


def document(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def statements(doc: Any) -> list[Any]:
    found = doc.get("Statement") if isinstance(doc, dict) else None
    return found if isinstance(found, list) else [found] if isinstance(found, dict) else []


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value] if value is not None else []


def _problems(doc: Any, kind: str) -> Iterator[tuple[str, Any, str]]:
    if not isinstance(doc, dict):
        yield "", doc, "not a JSON object"
        return
    if doc.get("Version") not in ("2012-10-17", "2008-10-17"):
        yield "Version", doc.get("Version"), "Version must be 2012-10-17 (or the legacy 2008-10-17)"
    if not statements(doc):
        yield "Statement", doc.get("Statement"), "no Statement"
    for n, s in enumerate(statements(doc)):
        at = f"Statement[{n}]"
        if not isinstance(s, dict):
            yield at, s, "a statement is an object"
            continue
        if s.get("Effect") not in ("Allow", "Deny"):
            yield f"{at}.Effect", s.get("Effect"), "Effect is Allow or Deny"
        if ("Action" in s) == ("NotAction" in s):
            yield at, sorted(s), "exactly one of Action and NotAction"
        for a in _listed(s.get("Action", s.get("NotAction"))):
            if not (isinstance(a, str) and ACTION.match(a)):
                yield f"{at}.Action", a, "an action is '*' or service:Action"
        has_principal = "Principal" in s or "NotPrincipal" in s
        has_resource = "Resource" in s or "NotResource" in s
        if kind == "identity" and has_principal:
            yield at, s.get("Principal"), "an identity policy names no Principal"
        if kind in ("trust", "resource") and not has_principal:
            yield at, None, f"a {kind} policy names a Principal"
        if kind == "identity" and not has_resource:
            yield at, None, "an identity policy statement names a Resource"
        if kind == "trust" and has_resource:
            yield at, s.get("Resource"), "a trust policy takes no Resource"
        condition = s.get("Condition")
        if condition is not None and not (
            isinstance(condition, dict) and all(isinstance(v, dict) for v in condition.values())
        ):
            yield f"{at}.Condition", condition, "Condition maps operators to {key: values}"


@rule(
    "PF-IAM-DOC",
    "policy documents are JSON with Version 2012-10-17 and statements of Effect, Action (service:Action), "
    "Resource (identity policies) or Principal (trust and resource policies)",
    f"IAM User Guide, JSON policy grammar ({GRAMMAR}) and element reference",
)
def policy_documents(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for (type_, key), kind in DOCUMENTS.items():
        for r in graph.of_type(type_):
            raw = r.inputs.get(key)
            if raw is None or not judgeable(raw if isinstance(raw, str) else ""):
                continue
            try:
                doc = document(raw)
            except json.JSONDecodeError as exc:
                yield Violation(r, key, raw, f"not valid JSON: {exc}")
                continue
            for path, value, message in _problems(doc, kind):
                yield Violation(r, f"{key}:{path}" if path else key, value, message)


def account_of(arn: Any) -> str | None:
    match = re.match(r"arn:aws[\w-]*:[\w-]*:[\w-]*:(\d{12}):", arn) if isinstance(arn, str) else None
    return match.group(1) if match else None


def provider_account(graph: Graph, r: Resource) -> str | None:
    provider = graph.provider_of(r)
    raw = provider.inputs.get("allowedAccountIds") if provider else None
    try:
        ids = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return None
    return ids[0] if isinstance(ids, list) and len(ids) == 1 else None


def _principals(doc: Any) -> set[str]:
    """AWS principals allowed by a key policy (accounts as 12 digits, ARNs as given)."""
    found: set[str] = set()
    for s in statements(doc):
        if not isinstance(s, dict) or s.get("Effect") != "Allow":
            continue
        principal = s.get("Principal")
        values = _listed(principal.get("AWS")) if isinstance(principal, dict) else _listed(principal)
        for p in values:
            if isinstance(p, str):
                found.add(p)
                if account_of(p) and p.endswith(":root"):
                    found.add(str(account_of(p)))
                if re.fullmatch(r"\d{12}", p):
                    found.add(p)
    return found


ASG_ROLE = "arn:aws:iam::{account}:role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling"


@rule(
    "PF-KMS-POLICY",
    "a key policy lets its own account administer the key, and names every principal of another account that "
    "uses it and the Auto Scaling service-linked role that launches volumes encrypted with it",
    "AWS KMS Developer Guide, default key policy and cross-account access "
    "(https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html); Amazon EC2 Auto Scaling User "
    "Guide, required KMS key policy for use with encrypted volumes "
    "(https://docs.aws.amazon.com/autoscaling/ec2/userguide/key-policy-requirements-EBS-encryption.html)",
)
def key_policies(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for key in graph.of_type(tokens.KMS_KEY):
        account = provider_account(graph, key)
        raw = key.inputs.get("policy")
        if raw is not None and not (isinstance(raw, str) and judgeable(raw)):
            continue
        try:
            principals = _principals(document(raw)) if raw else ({account} if account else set())
        except json.JSONDecodeError:
            continue  # PF-IAM-DOC reports it
        if raw and account and account not in principals:
            yield Violation(key, "policy", raw, f"the key's own account {account} cannot administer it")
        users = [r for r in graph.resources if key.urn in r.dependencies]
        for user in users:
            if user.type == tokens.IAM_ROLE_POLICY:
                other = provider_account(graph, user)
                if other and account and other != account and other not in principals:
                    yield Violation(key, "policy", sorted(principals), f"{user.name} (account {other}) uses the key")
            if user.type == tokens.LAUNCH_TEMPLATE and _encrypts_volumes(user, key, graph) and account:
                launched_by_asg = any(
                    user.urn in g.dependencies for g in graph.of_type(tokens.ASG, tokens.EKS_NODE_GROUP)
                )
                role = ASG_ROLE.format(account=account)
                if launched_by_asg and role not in principals:
                    message = (
                        f"{user.name}'s volumes are encrypted with the key but the key policy does not name {role}"
                    )
                    yield Violation(key, "policy", sorted(principals) or None, message)


def _encrypts_volumes(lt: Resource, key: Resource, graph: Graph) -> bool:
    for mapping in lt.inputs.get("blockDeviceMappings") or []:
        kms = (mapping.get("ebs") or {}).get("kmsKeyId")
        if isinstance(kms, str) and kms:
            return True
    return False


@rule(
    "PF-KMS-ALIAS",
    "an alias name begins with alias/ and not alias/aws/ (reserved for AWS managed keys)",
    "AWS KMS API Reference, CreateAlias.AliasName",
)
def aliases(graph: Graph, catalog: Catalog) -> Iterator[Violation]:
    for r in graph.of_type(tokens.KMS_ALIAS):
        name = r.inputs.get("name")
        if (
            isinstance(name, str)
            and judgeable(name)
            and (not name.startswith("alias/") or name.startswith("alias/aws/"))
        ):
            yield Violation(r, "name", name, "alias name outside alias/ or inside alias/aws/")


__all__ = ["DOCUMENTS", "account_of", "document", "provider_account", "statements"]
