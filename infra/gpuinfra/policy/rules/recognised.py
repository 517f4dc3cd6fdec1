"""Deny by default: a resource type the pack does not recognise for the account it lands in is refused.

The other policies judge the types they know; a type none of them knows would pass them all. This policy closes
that gap: every resource is of a type the allow-list (gpuinfra/policy/data/resource_types.yaml) names for the
purpose of the account it is deployed into, with the reason it may pass, or it is a mandatory violation naming
the type and what to do.
"""

from __future__ import annotations

from collections.abc import Mapping

from pulumi_policy import ResourceValidationArgs

from gpuinfra.catalog.pins import CHARTS, OPERATOR_CHART, OPERATOR_REPO, OPERATOR_VERSION
from gpuinfra.graph import tokens
from gpuinfra.graph.views import text
from gpuinfra.policy.allowlist import DATA_FILE, AllowListError, allow_list, exempt
from gpuinfra.policy.facts import StackFacts, require
from gpuinfra.policy.rules.declare import MANDATORY, ReportViolation, resource_policy
from gpuinfra.policy.rules.values import provider_account_ids
from gpuinfra.spec import with_article

NAME = "unrecognised-resource"
LIST_FILE = "infra/gpuinfra/policy/data/resource_types.yaml"
"""How messages name the allow-list: its place in the repository, where a change to it is reviewed."""


@resource_policy(
    NAME,
    "Deny by default: every resource is of a type the pack's allow-list names for the purpose of the account it "
    "is deployed into (training, inference or registry), each with the reason it may pass; any other type is "
    "refused, since no policy judges it.",
    MANDATORY,
)
def recognised(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    kind = args.resource_type
    if exempt(kind):
        return
    facts = require(args)
    try:
        rows = allow_list()
    except AllowListError as exc:
        report_violation(f"cannot judge {args.name} ({kind}): the allow-list is unreadable: {exc}")
        return
    account, purpose = _destination(args, facts)
    row = rows.get(kind)
    if row is None:
        report_violation(
            f"{args.name} is of type {kind}, which the pack does not recognise: no policy judges it, so it cannot "
            f"pass. If the stack needs it, add a row for {kind} to {LIST_FILE} (its category, the account purposes "
            "that may hold it and why), and a policy that judges it if it can grant access, move data, open a "
            "network path or launch instances; otherwise remove it from the program."
        )
        return
    if purpose not in row.purposes:
        report_violation(
            f"{args.name} is of type {kind}, which the pack allows only in {' and '.join(row.purposes)} accounts "
            f"({row.reason}); it would be deployed into {account}, {with_article(purpose)} account. Move it to a "
            f"stack of that purpose, or give {kind} the purpose {purpose} in {LIST_FILE} with the reason."
        )


def _destination(args: ResourceValidationArgs, facts: StackFacts) -> tuple[str, str]:
    """The account a resource is deployed into (its AWS provider's pinned account, when the organization file
    names it) and that account's purpose; else the stack's own account."""
    provider = args.provider
    if provider is not None and provider.resource_type.startswith("pulumi:providers:aws"):
        for account_id in provider_account_ids(provider.props):
            found = facts.account_with_id(account_id)
            if found is not None:
                return found[0], found[1].purpose
    return facts.account_name, facts.account.purpose


CHART_NAME = "unrecognised-chart"


def pinned_charts() -> frozenset[tuple[str, str, str]]:
    """(chart, version, repository) of every chart the program installs (gpuinfra.catalog.pins): the Kubernetes
    training add-ons and dataprep's KubeRay operator; "" for no repository (an OCI reference names its registry)."""
    return frozenset(
        {(p.source, p.version, p.repo or "") for p in CHARTS.values()}
        | {(OPERATOR_CHART, OPERATOR_VERSION, OPERATOR_REPO)}
    )


@resource_policy(
    CHART_NAME,
    "Deny by default inside a Helm release too: a release installs objects the graph does not show, so it must be a "
    "chart the program pins (name, version and repository); any other chart is refused.",
    MANDATORY,
    types=(tokens.HELM_RELEASE,),
)
def recognised_chart(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    chart = text(args.props.get("chart")) or ""
    version = text(args.props.get("version")) or ""
    repository = args.props.get("repositoryOpts") or {}
    repo = text(repository.get("repo") if isinstance(repository, Mapping) else None) or ""
    if (chart, version, repo) in pinned_charts():
        return
    where = f" from {repo}" if repo else ""
    report_violation(
        f"{args.name} installs chart {chart or '(unknown)'} {version or '(no version)'}{where}, which the pack does "
        "not recognise: a Helm release creates objects the graph does not show, so no policy can judge them. "
        "Install only the charts gpuinfra pins (infra/gpuinfra/catalog/pins.py), at their pinned version and "
        "repository, or declare the objects themselves"
    )


__all__ = ["CHART_NAME", "DATA_FILE", "LIST_FILE", "NAME", "pinned_charts", "recognised", "recognised_chart"]
