"""The stack's plan counted account-wide: quotas are granted per account and region, not per stack.

Two stacks in one account each within the grant alone can need twice it together, so `validate`, the program
(whose ServiceQuota request sets the account's value) and the pack count what the repository's other stacks hold
in the same account at full size. What they hold is folded once, from their plans, by the workspace
(gpuinfra.workspace) and handed in here as plain data (`AccountQuotas`): nothing in this module reads a file.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from gpuinfra.plan.quotas import with_held

P = TypeVar("P")

HeldQuotas = dict[tuple[str, str, str], list[tuple[str, int]]]
"""(account id, region, quota code) -> [(stack, vCPUs at full size)]."""


@dataclass(frozen=True)
class Holding:
    """One stack's need at full size on one account, region and quota code (from its plan)."""

    stack: str
    account_id: str
    region: str
    code: str
    vcpus: int


@dataclass(frozen=True)
class AccountQuotas:
    """What the account's other stacks hold, and the stacks that could not be counted (never zero)."""

    held: HeldQuotas = field(default_factory=dict)
    problems: tuple[tuple[str | None, str], ...] = ()
    """(account id, why) of each stack that could not be counted; None: its account cannot be told (any)."""

    def problems_for(self, account_id: str) -> list[str]:
        return [why for account, why in self.problems if account in (None, account_id)]


def holdings_of(stack: str, account_id: str, plan: object) -> tuple[Holding, ...]:
    """A planned stack's quota needs with a known code, as holdings of `account_id`."""
    needs = getattr(plan, "quotas", None) or []
    return tuple(Holding(stack, account_id, n.region, n.code, n.vcpus) for n in needs if n.code is not None)


def held_by(holdings: Iterable[Holding]) -> HeldQuotas:
    """Holdings keyed as `with_held` reads them, in the order given."""
    held: HeldQuotas = defaultdict(list)
    for h in holdings:
        held[(h.account_id, h.region, h.code)].append((h.stack, h.vcpus))
    return dict(held)


def in_account(plan: P, quotas: AccountQuotas) -> P:
    """The plan with its quota needs counted account-wide."""
    needs = getattr(plan, "quotas", None)
    if needs and quotas.held:
        plan = plan.model_copy(update={"quotas": with_held(needs, quotas.held)})  # type: ignore[attr-defined]
    return plan


__all__ = ["AccountQuotas", "HeldQuotas", "Holding", "held_by", "holdings_of", "in_account"]
