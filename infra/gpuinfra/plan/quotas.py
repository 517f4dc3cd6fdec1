"""Quota needs, cloud-neutral: what a stack holds of one quota at its maximum size, and the one verdict on it.

Each cloud's quota model (its registry part `quotas`, in the cloud's own package: EC2 vCPUs per quota code, GPUs
per metric) turns the planner's demands into these needs; the workspace folds an account's stacks into them, and
the validators and the pack judge them here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuinfra.catalog import Catalog, Purchase
from gpuinfra.plan.memory import Plain

if TYPE_CHECKING:
    from gpuinfra.clouds import Cloud


@dataclass(frozen=True)
class InstanceDemand:
    """Instances of one type, bought one way, in one region: what the shared planners ask of a cloud's quota
    model."""

    region: str
    instance_type: str
    purchase: Purchase
    count: int


class QuotaNeed(Plain):
    account: str
    account_id: str
    region: str
    code: str | None
    """None when no cited source names the quota that counts these instances (see `unknown`)."""
    name: str
    purchase: Purchase
    vcpus: int
    granted: int | None
    """From the organization file; None when it lists no grant for this code."""
    unknown: str | None = None
    """Why no quota code is known (the catalog's statement), when `code` is None."""
    held: tuple[tuple[str, int], ...] = ()
    """(stack, vCPUs at full size) of the repository's other stacks on this account, region and code: counted in
    `vcpus`, since a quota is the account's (plan/account.py)."""

    @property
    def shortfall(self) -> int:
        return max(0, self.vcpus - (self.granted or 0))

    @property
    def own(self) -> int:
        """The stack's own vCPUs, without the other stacks' share."""
        return self.vcpus - sum(v for _, v in self.held)


def with_held(needs: Iterable[QuotaNeed], held: dict[tuple[str, str, str], list[tuple[str, int]]]) -> list[QuotaNeed]:
    """The account's needs: each of the stack's needs plus what the account's other stacks hold on the same
    (account id, region, code), against the whole grant. An increase request asks for this total, since AWS sets
    the account's quota value, not a stack's share of it."""
    out = []
    for need in needs:
        others = tuple(held.get((need.account_id, need.region, need.code), [])) if need.code else ()
        total = need.vcpus + sum(v for _, v in others)
        out.append(need.model_copy(update={"vcpus": total, "held": others}) if others else need)
    return out


def needs_in(
    cloud: Cloud,
    demands: Iterable[InstanceDemand],
    catalog: Catalog,
    account: str,
    account_id: str,
    granted: dict[str, dict[str, int]],
) -> list[QuotaNeed]:
    """The shared planners' demands in `cloud`'s own quota model (its registry part `quotas`): the planners size
    instances, the cloud says which of its quotas they count against and in what unit."""
    needs: list[QuotaNeed] = cloud.part("quotas")(demands, catalog, account, account_id, granted)
    return needs


def blocks(need: QuotaNeed, requested: int | None) -> bool:
    """The one verdict the validator (`quota-short`) and the policy (`quota-within-grant`) share: a grant short
    of the stack's need at full size blocks the change, unless the change itself asks AWS for at least the need
    (a ServiceQuota request, emitted when the account sets request_quota_increases); then it is only reported,
    since the groups stop short of full size until AWS approves it. A need whose quota code no cited source
    names blocks too: it cannot be checked, so it is not assumed to fit."""
    if need.code is None:
        return True  # fail closed: a quota nobody can name cannot be shown to hold
    return need.shortfall > 0 and (requested is None or requested < need.vcpus)


def requested_by_program(need: QuotaNeed, requests_increases: bool) -> int | None:
    """What the program asks AWS for this need (components/quotas.py requests exactly the need)."""
    return need.vcpus if requests_increases and need.code is not None and need.shortfall > 0 else None


def site_gpus_over(gpus: int, allotment: int | None) -> int:
    """GPUs beyond what the organization allots an on-premises site (0 within it, or with no allotment): the
    one verdict the validator (`site-gpus-exceed-allotment`) and the policy (`quota-site-gpus`) share, both
    blocking, as an EC2 quota shortfall does."""
    return max(gpus - allotment, 0) if allotment is not None else 0


__all__ = [
    "InstanceDemand",
    "QuotaNeed",
    "blocks",
    "needs_in",
    "requested_by_program",
    "site_gpus_over",
    "with_held",
]
