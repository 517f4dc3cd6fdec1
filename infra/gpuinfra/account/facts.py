"""AccountFacts: the account-wide aggregates a stack is judged against.

Quotas and budgets are granted per account, data flows reach into the registry's account: each check is about
several stacks at once. The workspace reads, plans and builds the repository's other stacks once and hands the
result to the stages below as this value; a stack that could not be counted is a `problem`, never zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from gpuinfra.graph import Graph
from gpuinfra.plan.account import AccountQuotas


@dataclass(frozen=True)
class StackTotal:
    """One other stack of the account at maximum size."""

    stack: str
    monthly_max: Mapping[str, Decimal] = field(default_factory=dict)
    """Account id -> the stack's maximum monthly cost there (USD)."""
    problem: str | None = None
    """Why the stack could not be totalled (then it holds an unknown amount, not zero)."""
    unknown: tuple[str, ...] = ()
    """Lines its total leaves out for want of a price (cost.Breakdown.unknown_keys): the total is a lower bound."""


@dataclass(frozen=True)
class AccountFacts:
    """What the repository's other stacks hold where the stack under review is judged."""

    quotas: AccountQuotas = field(default_factory=AccountQuotas)
    """Quota holdings of every other stack, by (account id, region, code)."""
    totals: tuple[StackTotal, ...] = ()
    """The other stacks of the stack's account (and those whose account cannot be told), at maximum size."""
    registries: tuple[Graph, ...] = ()
    """The model registry's graphs, which the stack's data flows reach into."""


__all__ = ["AccountFacts", "StackTotal"]
