"""Data preparation: the tokens go to training and nothing else does. A dataprep stack may grant only the training
accounts its spec names, and only read (and list) of the output prefix and decrypt through S3, never the raw corpus
or the scratch intermediates; its workers may write only under the declared output and scratch prefixes; and it
launches no accelerator instance unless the spec asks for a GPU stage, in an account allowed GPUs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import PolicyResource, StackValidationArgs

from gpuinfra.graph import tokens
from gpuinfra.policy.facts import StackFacts, require
from gpuinfra.policy.rules.declare import MANDATORY, ReportViolation, stack_policy
from gpuinfra.policy.rules.groups import groups
from gpuinfra.policy.rules.values import get, listed, statements, view
from gpuinfra.spec import DataprepSpec

READ = {"s3:GetObject"}
LIST = {"s3:ListBucket"}
DECRYPT = {"kms:Decrypt"}
WRITES = ("s3:PutObject", "s3:*", "s3:Put*", "*")


def _bucket_prefix(uri: str) -> tuple[str, str]:
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    return bucket, (prefix.rstrip("/") + "/") if prefix else ""


def dataprep_grant_allowed(
    facts: StackFacts, resource: PolicyResource, statement: Mapping[str, Any], account: str, purpose: str
) -> bool:
    """A dataprep stack's one cross-account grant: a training account the spec lists as a reader may get and list
    the output prefix, and decrypt it through S3 with the stack's key."""
    spec = facts.spec
    if facts.workload != "dataprep" or not isinstance(spec, DataprepSpec) or purpose != "training":
        return False
    if account not in {facts.org.accounts[r].id for r in spec.output.readers if r in facts.org.accounts}:
        return False
    actions = {str(a) for a in listed(statement.get("Action"))}
    resources = [str(r) for r in listed(statement.get("Resource"))]
    bucket, prefix = _bucket_prefix(spec.output.uri)
    if resource.resource_type == tokens.KMS_KEY:
        return actions <= DECRYPT
    if resource.resource_type != tokens.BUCKET_POLICY:
        return False
    if actions <= READ:
        return bool(resources) and all(r == f"arn:aws:s3:::{bucket}/{prefix}*" for r in resources)
    if actions <= LIST:
        condition = statement.get("Condition") or {}
        prefixes = [str(p) for op in condition.values() if isinstance(op, Mapping) for p in listed(op.get("s3:prefix"))]
        return (
            resources == [f"arn:aws:s3:::{bucket}"] and bool(prefixes) and all(p.startswith(prefix) for p in prefixes)
        )
    return False


def _dataprep(args: StackValidationArgs) -> tuple[StackFacts, DataprepSpec]:
    """The facts and spec of a dataprep stack (the policy is not applicable to any other)."""
    facts = require(args, "dataprep")
    assert isinstance(facts.spec, DataprepSpec)
    return facts, facts.spec


def _writable(spec: DataprepSpec) -> list[str]:
    out = []
    for uri in (spec.output.uri, spec.scratch.uri):
        bucket, prefix = _bucket_prefix(uri)
        out.append(f"arn:aws:s3:::{bucket}/{prefix}")
    return out


@stack_policy(
    "dataprep-writes-only-declared",
    "A dataprep stack's roles write only under the spec's output and scratch prefixes: never into the raw corpus, "
    "and never anywhere training reads that the spec did not declare.",
    MANDATORY,
)
def writes_only_declared(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    _, spec = _dataprep(args)
    allowed = _writable(spec)
    stack = view(args)
    for policy in stack.of_type(tokens.IAM_ROLE_POLICY):
        for statement in statements(get(policy.props, "policy")):
            if statement.get("Effect") != "Allow":
                continue
            actions = [str(a) for a in listed(statement.get("Action"))]
            if not any(a in WRITES for a in actions):
                continue
            for target in (str(r) for r in listed(statement.get("Resource"))):
                if not any(target.startswith(prefix) and "*" not in target[: len(prefix)] for prefix in allowed):
                    report_violation(
                        f"{policy.name}: statement {statement.get('Sid') or '(no Sid)'} lets the workers write "
                        f"{target}, outside the declared output and scratch ({', '.join(allowed)})",
                        policy.urn,
                    )


@stack_policy(
    "dataprep-no-accelerators",
    "A dataprep stack launches CPU instances only, unless its spec asks for a GPU stage (stages.dedup.accelerator: "
    "gpu), and then only in an account allowed GPUs (allow_accelerators in the organization file).",
    MANDATORY,
)
def no_accelerators(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts, spec = _dataprep(args)
    asked = spec.stages.dedup is not None and spec.stages.dedup.accelerator == "gpu"
    allowed = asked and facts.account.allow_accelerators
    for group in groups(view(args)):
        for name in group.instance_types:
            info = facts.catalog.instance(name)
            if info is None or info.accelerator is None or allowed:
                continue
            why = (
                f"account {facts.account_name} is not allowed GPUs (allow_accelerators)"
                if asked
                else "no stage asks for one (stages.dedup.accelerator is cpu)"
            )
            report_violation(
                f"{group.resource.name} launches {name}, an accelerator instance: {why}", group.resource.urn
            )


__all__ = ["dataprep_grant_allowed"]
