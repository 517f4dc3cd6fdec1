"""Quota needs in Compute Engine's units: GPUs per region for on-demand VMs (NVIDIA_L4_GPUS), GPUs per region for
Spot VMs (their own pool, PREEMPTIBLE_NVIDIA_L4_GPUS), and GPUs over every region (GPUS_ALL_REGIONS, `global`),
as Cluster Toolkit's quota validator sums them (pkg/validators/quota.go). Each need is a QuotaNeed whose amount
counts GPUs (`vcpus` holds the metric's own unit), so the workspace folds a project's stacks into it as it folds
an AWS account's."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from gpuinfra.clouds.gcp.catalog import GcpBook
from gpuinfra.plan.quotas import QuotaNeed

GLOBAL = "global"


@dataclass(frozen=True)
class GpuDemand:
    region: str
    purchase: str
    """on_demand or spot."""
    gpus: int


def quota_name(book: GcpBook, metric: str) -> str:
    """How the report names a metric: its GPU and purchase (NVIDIA_L4_GPUS -> L4 GPUs, on-demand)."""
    found = next(q for q in book.quotas if q.metric == metric)
    if found.scope == GLOBAL:
        return "GPUs, all regions"
    return f"{found.accelerator} GPUs, {'Spot VMs' if found.purchase == 'spot' else 'on-demand'}"


def gpu_quota_needs(
    demands: Iterable[GpuDemand], book: GcpBook, account: str, project_id: str, granted: dict[str, dict[str, int]]
) -> list[QuotaNeed]:
    """Per metric and scope, the GPUs the stack holds at full size against the project's grant."""
    totals: dict[tuple[str, str, str], int] = defaultdict(int)
    for d in demands:
        if d.gpus <= 0:
            continue
        metric = book.quota_metric(d.purchase)
        totals[(d.region, metric.metric, d.purchase)] += d.gpus
        totals[(GLOBAL, book.quota_metric("any", GLOBAL).metric, "on_demand")] += d.gpus
    return [
        QuotaNeed(
            account=account,
            account_id=project_id,
            region=region,
            code=metric,
            name=quota_name(book, metric),
            purchase=purchase,  # type: ignore[arg-type]
            vcpus=gpus,
            granted=granted.get(region, {}).get(metric),
        )
        for (region, metric, purchase), gpus in sorted(totals.items())
    ]


__all__ = ["GLOBAL", "GpuDemand", "gpu_quota_needs", "quota_name"]
