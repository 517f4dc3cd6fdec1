"""AWS's quota model: vCPUs per account, region and EC2 quota code at the stack's maximum size.

Like Cluster Toolkit, needs are summed over everything a stack creates before anything exists, then
compared with what the organization file says was granted. EC2 counts vCPUs per instance class and purchase
(the codes and their sources in AWS's catalog: clouds/aws/catalog/data/quotas.yaml); the shared planners and the pack's
`quota-within-grant` reach this through the registry (the `quotas` part), never by name.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from gpuinfra.catalog import Catalog, Purchase
from gpuinfra.clouds.aws.catalog import quota_book
from gpuinfra.plan.quotas import InstanceDemand, QuotaNeed


def quota_needs(
    demands: Iterable[InstanceDemand],
    catalog: Catalog,
    account: str,
    account_id: str,
    granted: dict[str, dict[str, int]],
) -> list[QuotaNeed]:
    book = quota_book()
    totals: dict[tuple[str, str | None, str, Purchase], int] = defaultdict(int)
    reasons: dict[tuple[str, str | None, str, Purchase], str] = {}
    for use in demands:
        info = catalog.instance(use.instance_type)
        if info is None or use.count <= 0:
            continue
        code = book.code(info.family, use.purchase)
        key = (
            use.region,
            code.code if code else None,
            code.name if code else f"{info.family} {use.purchase}",
            use.purchase,
        )
        totals[key] += use.count * info.vcpu
        if code is None:
            stated = book.unknown(info.family, use.purchase)
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


__all__ = ["quota_needs"]
