"""Accounts: each stack deploys into an account of its own purpose, within its granted quotas."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.plan import AnyPlan
from gpuinfra.plan.quotas import blocks, requested_by_program
from gpuinfra.spec import PURPOSE_OF_WORKLOAD, Account, Organization, WorkloadSpec, with_article
from gpuinfra.validators.base import Failure, Level, rule


def purpose_of(spec: WorkloadSpec) -> str:
    workload = type(spec).__name__.removesuffix("Spec").lower()
    return PURPOSE_OF_WORKLOAD.get(workload, workload)


@rule(Level.ERROR)
def account_purpose_mismatch(spec: WorkloadSpec, account: Account | None, org: Organization) -> Iterator[Failure]:
    """Training, inference and the registry each live in accounts of their own purpose."""
    wanted = purpose_of(spec)
    if account is not None and not account.serves(wanted):
        matching = sorted(n for n, a in org.accounts.items() if a.purpose == wanted)
        near = [n for n in matching if type(org.accounts[n]) is type(account)]  # the same cloud's entries
        yield Failure(
            f"account {spec.account!r} has purpose {account.purpose!r}, but this is {with_article(wanted)} stack",
            ("account",),
            f"write `account: {(near or matching)[0]}` ({with_article(wanted)} account: {', '.join(matching)})"
            if matching
            else f"add {with_article(wanted)} account to the organization file's `accounts` and name it in `account`",
        )


@rule(Level.ERROR)
def quota_short(
    spec: WorkloadSpec,
    plan: AnyPlan,
    org: Organization,
    account_problems: list[str],
) -> Iterator[Failure]:
    """The stack at full size, with the account's other stacks (plan/account.py), needs more vCPUs than the
    organization file says were granted, and it does not ask AWS for the increase (the verdict the policy
    quota-within-grant shares: plan.quotas.blocks). A sibling that cannot be counted fails closed."""
    account = org.accounts.get(spec.account)
    asks = account is not None and account.request_quota_increases
    for problem in account_problems:
        yield Failure(
            f"the account-wide quota totals cannot be checked: {problem}",
            ("account",),
            "fix that stack file (gpuinfra validate names what to change), or move it out of the stack directory",
        )
    for need in getattr(plan, "quotas", []):
        if need.code is None and need.vcpus > 0:
            yield Failure(
                f"{need.account} {need.region}: the quota for {need.name} ({need.vcpus} vCPUs at full size) cannot "
                f"be checked: {need.unknown}",
                ("account",),
                "use a purchase option or instance family whose quota the catalog names (`gpuinfra catalog "
                "<type>` shows it), or add the code with its source to the cloud's own catalog (its quotas.yaml)",
            )
        elif blocks(need, requested_by_program(need, asks)):
            others = "".join(f", {stack} {vcpus}" for stack, vcpus in need.held)
            total = f" (this stack {need.own}{others})" if need.held else ""
            yield Failure(
                f"{need.account} {need.region}: {need.code} ({need.name}) needs {need.vcpus} vCPUs at full size"
                f"{total}, granted {need.granted or 0}",
                ("account",),
                f"request an increase of {need.shortfall} vCPUs, or write `request_quota_increases: true` on "
                f"accounts.{need.account} in the organization file (the stack asks AWS for it)",
            )


__all__ = ["account_purpose_mismatch", "purpose_of", "quota_short"]
