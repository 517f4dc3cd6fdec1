"""GPU quotas: what the stack can run at its maximum size stays within what each account was granted.

What the stack holds of a cloud's quotas is the cloud's own reading of the graph (its registry part `quota_usage`:
AWS counts every compute group at maximum size and every instance against EC2 quota codes, clouds/aws/policy/), in
the units and codes of the cloud's quota model (its part `quotas`, the planner's own); this rule counts them per
account, region and code with the repository's other stacks (the workspace's fold) and compares them with the
organization file. A cloud without a `quota_usage` part has none for this rule to judge (its registry entry says
what holds its quotas instead; on premises, quota-site-gpus below).

A shortfall the same stack asks the cloud to raise (on AWS a Service Quotas request of its own for that code and
region, emitted when the account sets `request_quota_increases`) is not a mandatory violation: the
request is in the change under review, but the cloud approves it later and until then the groups cannot
reach full size. That case is reported by the advisory `quota-increase-requested` instead; a request
smaller than the need stays mandatory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pulumi_policy import StackValidationArgs

from gpuinfra.catalog import Catalog
from gpuinfra.clouds import CLOUDS, Cloud, cloud
from gpuinfra.graph import tokens
from gpuinfra.plan.quotas import QuotaNeed, blocks, site_gpus_over
from gpuinfra.policy.facts import StackFacts, require
from gpuinfra.policy.rules.declare import ADVISORY, MANDATORY, ReportViolation, stack_policy
from gpuinfra.policy.rules.values import StackView, as_int, get, view

CLUSTER_QUEUE = tokens.KUEUE_CLUSTER_QUEUE


@dataclass(frozen=True)
class Shortfall:
    need: QuotaNeed
    """The stack's need; `granted` is what the account's other stacks leave of the grant."""
    users: tuple[tuple[str, str], ...]
    """(name, URN) of the groups and instances counted against the code."""
    requested: int | None
    """The value this stack asks the cloud for, if it requests an increase of this code."""
    unit: str
    """What the cloud's quotas count (its registry entry's `quota_unit`: vCPUs on AWS)."""
    held: tuple[tuple[str, int], ...] = ()
    """(stack, vCPUs at maximum size) of the repository's other stacks on this account, region and code."""
    grant: int | None = None
    """The whole grant (before the other stacks' share)."""

    @property
    def account_need(self) -> QuotaNeed:
        """The account's need on this code: the stack's plus the other stacks', against the whole grant. A
        quota is the account's, so an increase request must ask for this total (AWS sets the quota's value)."""
        if not self.held:
            return self.need
        total = self.need.vcpus + sum(v for _, v in self.held)
        return self.need.model_copy(update={"vcpus": total, "granted": self.grant})

    @property
    def covered(self) -> bool:
        return not blocks(self.account_need, self.requested)

    def describe(self) -> str:
        need = self.need
        base = (
            f"{need.account} ({need.account_id}) {need.region} {need.code} ({need.name}): the stack needs "
            f"{need.vcpus} {self.unit} at maximum size ({', '.join(n for n, _ in self.users)}), {need.granted or 0} "
            "available"
        )
        if not self.held:
            return base
        holders = ", ".join(f"{stack} ({vcpus})" for stack, vcpus in self.held)
        total = need.vcpus + sum(v for _, v in self.held)
        return (
            f"{base} of the {self.grant or 0} granted: the account's other stacks hold {holders}, so together "
            f"they need {total}"
        )

    @property
    def urn(self) -> str | None:
        """The one resource that needs the quota, if only one does (else the stack as a whole)."""
        return self.users[0][1] if len(self.users) == 1 else None


Users = dict[tuple[str, str, str | None], set[tuple[str, str]]]
"""(account id, region, code or None) -> (name, URN) of the groups and instances counted against it."""


@dataclass(frozen=True)
class QuotaUsage:
    """What a stack's resources of one cloud hold of its quotas at maximum size: a cloud's `quota_usage` part
    reads it from the graph, in the demands its own quota model (its `quotas` part) counts."""

    demands: dict[str, list[Any]]
    """Account id -> the demands the cloud's quota model counts (AWS: InstanceDemands)."""
    users: Users
    requests: dict[tuple[str, str, str], int]
    """(account id, region, code) -> the value the stack itself asks the cloud to raise the quota to."""


QuotaReader = Callable[[StackView, Catalog], QuotaUsage]


def quota_clouds() -> list[Cloud]:
    """The clouds whose quota holdings the rule reads from a graph (each names a `quota_usage` part)."""
    return [entry for entry in CLOUDS.values() if entry.parts.quota_usage is not None]


def shortfalls(stack: StackView, facts: StackFacts) -> list[Shortfall]:
    """Every (account, region, code) whose need at maximum size, with what the repository's other stacks hold
    there (from their plans, as `validate` counts them: plan/account.py), exceeds the organization's grant."""
    out: list[Shortfall] = []
    for entry in quota_clouds():
        out += _cloud_shortfalls(entry, entry.part("quota_usage")(stack, facts.catalog), facts)
    return out


def _cloud_shortfalls(entry: Cloud, usage: QuotaUsage, facts: StackFacts) -> list[Shortfall]:
    """One cloud's holdings through its quota model, per account, against what the other stacks leave."""
    model = entry.part("quotas")
    out = []
    for account_id, account_usages in sorted(usage.demands.items()):
        known = facts.account_with_id(account_id)
        if known is None:
            continue  # separation-accounts reports accounts the organization does not list
        name, account = known
        held = _held_by_others(facts, account_id)
        left = {
            region: {
                code: max(0, grant - sum(v for _, v in held.get((region, code), []))) for code, grant in grants.items()
            }
            for region, grants in account.quotas.items()
        }
        for need in model(account_usages, facts.catalog, name, account_id, left):
            if need.code is not None and not need.shortfall:
                continue
            out.append(
                Shortfall(
                    need,
                    tuple(sorted(usage.users[(account_id, need.region, need.code)])),
                    usage.requests.get((account_id, need.region, need.code)) if need.code else None,
                    entry.quota_unit,
                    tuple(held.get((need.region, need.code or ""), [])),
                    account.quotas.get(need.region, {}).get(need.code or ""),
                )
            )
    return out


def _held_by_others(facts: StackFacts, account_id: str) -> dict[tuple[str, str], list[tuple[str, int]]]:
    """(region, code) -> [(stack, vCPUs)] the other stacks hold on `account_id` (the workspace's fold)."""
    held = facts.held.quotas.held
    return {(region, code): users for (account, region, code), users in held.items() if account == account_id}


def _shortfalls(args: StackValidationArgs) -> list[Shortfall]:
    facts = require(args)
    stack = view(args)
    return stack.memo("quota-shortfalls", lambda: shortfalls(stack, facts))


@stack_policy(
    "quota-within-grant",
    "At maximum size the stack's instances, with the repository's other stacks in the same account, fit the EC2 "
    "quotas the organization file grants, per account, region and quota code (on-demand and spot apart).",
    MANDATORY,
)
def within_grant(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args)
    account = facts.org.accounts.get(facts.spec.account)
    if account is not None and cloud(facts.spec.target.cloud).account_quotas:  # as validate counts
        for problem in facts.held.quotas.problems_for(account.id):
            report_violation(f"the account-wide quota totals cannot be checked: {problem}")
    for short in _shortfalls(args):
        if short.covered:
            continue
        if short.need.code is None:
            report_violation(
                f"{short.need.account} ({short.need.account_id}) {short.need.region}: the quota for {short.need.name} "
                f"({short.need.vcpus} {short.unit} at maximum size, {', '.join(n for n, _ in short.users)}) cannot be "
                f"checked: {short.need.unknown}",
                short.urn,
            )
            continue
        asked = (
            f"; the stack's increase request asks for only {short.requested}"
            if short.requested is not None
            else ", or set request_quota_increases: true on the account"
        )
        report_violation(
            f"{short.describe()}; request an increase of {short.account_need.shortfall} {short.unit} "
            f"(to {short.account_need.vcpus}){asked}",
            short.urn,
        )


@stack_policy(
    "quota-increase-requested",
    "A quota shortfall the stack itself asks AWS to raise (ServiceQuota request): allowed, but the groups "
    "cannot reach full size until AWS approves it.",
    ADVISORY,
)
def increase_requested(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    for short in _shortfalls(args):
        if short.covered:
            report_violation(
                f"{short.describe()}; the stack requests an increase to {short.requested}, pending AWS "
                "approval: until then the groups stop short of full size",
                short.urn,
            )


def queue_gpus(queue_props: Any, accelerators: frozenset[str]) -> int:
    """The accelerators a Kueue ClusterQueue holds: its nominal quota of every device plugin's resource the
    catalog lists (accelerators.yaml `devices`: nvidia.com/gpu, aws.amazon.com/neuron) over every flavor."""
    return sum(
        as_int(get(resource, "nominalQuota"))
        for group in get(queue_props, "spec", "resourceGroups", default=[]) or []
        for flavor in get(group, "flavors", default=[]) or []
        for resource in get(flavor, "resources", default=[]) or []
        if get(resource, "name") in accelerators
    )


@stack_policy(
    "quota-site-gpus",
    "On premises, the GPUs the stack's Kueue ClusterQueues hold stay within the organization's GPU "
    "allotment for the site (the on-premises counterpart of an EC2 quota).",
    MANDATORY,
)
def site_gpus(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args, "training")
    site = getattr(facts.spec, "site", None)
    if not cloud(facts.spec.target.cloud).sites or site is None:
        args.not_applicable("applies to on-premises clusters; this one runs on AWS (EC2 quotas apply)")
        return
    allotment = facts.org.onprem_sites[site].gpu_allotment
    queues = view(args).of_type(CLUSTER_QUEUE)
    accelerators = frozenset(d.k8s_resource for d in facts.catalog.devices)
    held = {q.name: queue_gpus(q.props, accelerators) for q in queues}
    total = sum(held.values())
    if site_gpus_over(total, allotment):
        names = ", ".join(f"{name} ({gpus} GPUs)" for name, gpus in sorted(held.items()))
        report_violation(
            f"site {site}: the stack's ClusterQueues hold {total} GPUs ({names}) but the organization allots "
            f"{allotment}; lower the cluster by {total - allotment} GPUs or raise onprem_sites.{site}.gpu_allotment",
            queues[0].urn if len(queues) == 1 else None,
        )


__all__ = [
    "QuotaReader",
    "QuotaUsage",
    "Shortfall",
    "Users",
    "increase_requested",
    "queue_gpus",
    "quota_clouds",
    "shortfalls",
    "site_gpus",
    "within_grant",
]
