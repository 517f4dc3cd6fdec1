"""Quota needs: vCPUs per account, region and quota code at the stack's maximum size.

Like Cluster Toolkit, needs are summed over everything a stack creates before anything exists, then
compared with what the organization file says was granted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from gpuinfra.catalog import Catalog, Purchase
from gpuinfra.plan.memory import Plain


@dataclass(frozen=True)
class InstanceDemand:
    """Instances of one type, bought one way, in one region."""

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


def quota_needs(
    demands: Iterable[InstanceDemand],
    catalog: Catalog,
    account: str,
    account_id: str,
    granted: dict[str, dict[str, int]],
) -> list[QuotaNeed]:
    totals: dict[tuple[str, str | None, str, Purchase], int] = defaultdict(int)
    reasons: dict[tuple[str, str | None, str, Purchase], str] = {}
    for use in demands:
        info = catalog.instance(use.instance_type)
        if info is None or use.count <= 0:
            continue
        code = catalog.quota_code(info.family, use.purchase)
        key = (
            use.region,
            code.code if code else None,
            code.name if code else f"{info.family} {use.purchase}",
            use.purchase,
        )
        totals[key] += use.count * info.vcpu
        if code is None:
            stated = catalog.quota_unknown(info.family, use.purchase)
            reasons[key] = (
                stated.reason if stated else f"the catalog has no quota code for {info.family} {use.purchase}"
            )
    return [
        QuotaNeed(
            account=account,
            account_id=account_id,
            region=region,
            code=code,
            name=name,
            purchase=purchase,
            vcpus=vcpus,
            granted=granted.get(region, {}).get(code) if code else None,
            unknown=reasons.get((region, code, name, purchase)),
        )
        for (region, code, name, purchase), vcpus in sorted(
            totals.items(), key=lambda kv: (kv[0][0], kv[0][1] or "", kv[0][3])
        )
    ]


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
    "quota_needs",
    "requested_by_program",
    "site_gpus_over",
    "with_held",
]
