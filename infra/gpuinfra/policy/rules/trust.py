"""Trusted facts: the organization file a stack is judged by is the one the platform pinned, not one the stack
chose.

The facts the pack judges by (accounts and their purposes, quotas, budgets, clusters) sit in the
organization file. A stack cannot name it: `gpuinfra:org` pointing anywhere but the trusted file is refused
when the stack is read (gpuinfra.load.named_org_problems). Which file is trusted is the host's choice: by
default stacks/org.yaml of the project (guarded by the protected branch's review), or the file this policy's
config pins, which a platform team sets where pull requests cannot reach it: a Pulumi Cloud policy group's
pack config (`pulumi policy enable ORG/gpuinfra VERSION --config FILE`), or the `--policy-pack-config` file
of the CI job. Under the Pulumi CLI the pack reads its facts from the pinned file (rules.serve records it when
the engine calls Configure); in-process the host has read them already, and this policy checks it read the
pinned one. Without a pinned file, under the CLI the pack trusts the organization file of a git revision, never the
change under review: `base_ref`, or in a pull request's GitHub Actions run the base branch (origin/$GITHUB_BASE_REF,
gpuinfra.workspace.pack); in-process, `gpuinfra preview --policy-config` reads `base_ref`'s file the same way
(gpuinfra.commands.options.with_trusted_revision), and `gpuinfra diff --base-ref` judges a change by the base's file.
"""

from __future__ import annotations

from pathlib import Path

from pulumi_policy import StackValidationArgs

from gpuinfra.policy.facts import FactsError, current, pinned_path
from gpuinfra.policy.rules.declare import MANDATORY, ReportViolation, stack_policy

POLICY = "separation-trusted-organization"
PROPERTY = "organization_file"
BASE_PROPERTY = "base_ref"


@stack_policy(
    POLICY,
    "The stack is judged by the organization file the platform pinned (this policy's organization_file, "
    "else stacks/org.yaml of the project), never one the stack names.",
    MANDATORY,
    config={
        PROPERTY: {
            "type": "string",
            "default": "",
            "description": "The trusted organization file, relative to the project directory (or absolute); "
            "empty: stacks/org.yaml.",
        },
        BASE_PROPERTY: {
            "type": "string",
            "default": "",
            "description": "A git revision (origin/main) whose stacks/org.yaml is trusted instead of the working "
            "tree's (gpuinfra preview --policy-config reads it too); empty: under the Pulumi CLI, "
            "origin/$GITHUB_BASE_REF in a pull request's GitHub Actions run, else the working tree's. "
            "organization_file takes precedence.",
        },
    },
)
def trusted_organization(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    try:
        facts = current()
    except FactsError:
        args.not_applicable("the stack's facts cannot be read: separation-facts-readable refuses it")
        return
    if facts is None:
        args.not_applicable(
            "not a gpuinfra stack: its config holds no gpuinfra:training, :inference, :registry or :finetune"
        )
        return
    pinned = pinned_path(str(args.get_config().get(PROPERTY, "") or ""))
    if pinned is None or facts.org_file is None:
        return
    if _resolved(pinned) != _resolved(facts.org_file):
        report_violation(
            f"{facts.stack} was read against the organization file {facts.org_file}, but the pack is pinned to "
            f"{pinned}: accounts, purposes, quotas and budgets are judged only from the pinned file; run with "
            "that file (gpuinfra preview --org PATH) or change the pin in the pack's config"
        )


def _resolved(path: object) -> str:
    try:
        return str(Path(str(path)).resolve())
    except (OSError, RuntimeError):
        return str(path)


__all__ = ["BASE_PROPERTY", "POLICY", "PROPERTY", "trusted_organization"]
