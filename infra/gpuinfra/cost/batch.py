"""Pricing an AWS Batch managed compute environment: the instances its `maxVcpus` allows, from none up.

Batch launches instances for queued jobs and scales to zero (`minVcpus` 0), so, like a NodePool, it is priced
from 0 (or the usage file's `instances`) up to its maximum: `maxVcpus` over the vCPUs of the smallest type it may
launch (the most instances), priced at the dearest type per instance-hour; EC2 on-demand, SPOT at the catalog's
discount. Fargate environments launch no EC2 instances and are left to the jobs' own pricing (unknown here).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from gpuinfra.catalog import load_catalog
from gpuinfra.cost.compute import Counts, hours, instance_lines, volume_lines
from gpuinfra.cost.lines import Ctx, unknown_input
from gpuinfra.cost.model import Line
from gpuinfra.graph import Resource, tokens, views

SPOT = "SPOT"
EC2 = "EC2"


def batch_bounds(props: Mapping[str, Any]) -> tuple[list[str], int | None, str | None]:
    """(instance types the catalog knows, the most instances `maxVcpus` allows, 'spot' or None for on-demand);
    the count is None when it cannot be bounded (no known type, no maxVcpus, Fargate)."""
    resources = props.get("computeResources") or {}
    kind = str(resources.get("type") or "")
    market = "spot" if kind == SPOT else None
    catalog = load_catalog()
    types = [t for t in (views.text(x) for x in resources.get("instanceTypes") or []) if t and catalog.instance(t)]
    most = resources.get("maxVcpus")
    if kind not in (SPOT, EC2) or not types or not isinstance(most, int | float) or isinstance(most, bool):
        return types, None, market
    smallest = min(catalog.instance(t).vcpu for t in types)  # type: ignore[union-attr]
    return types, math.ceil(int(most) / smallest), market


def price_compute_environment(resource: Resource, ctx: Ctx) -> list[Line]:
    types, most, market = batch_bounds(resource.inputs)
    if most is None:
        return [unknown_input("Instances", "instances", "computeResources (type, instanceTypes, maxVcpus)")]
    dearest = max(types, key=lambda t: _hourly(t, ctx, market))
    explicit = ctx.usage.value(resource, "instances")
    counts = Counts(min(int(explicit.amount), most) if explicit is not None else 0, 0, most)
    note = f"up to {most} instances by maxVcpus; priced as {dearest}"
    lines = instance_lines(dearest, counts, ctx, market, views.capacity_terms({}, market), hours(resource, ctx), note)
    templates = ctx.graph.dependencies_of(resource, tokens.LAUNCH_TEMPLATE)
    return lines + volume_lines(templates[0] if templates else None, counts, ctx)


def _hourly(instance_type: str, ctx: Ctx, market: str | None) -> Decimal:
    """The type's hourly price, an unpriced type first (unknown may be the dearest: never priced as cheaper)."""
    price = ctx.book.on_demand(instance_type, ctx.where.region)
    return Decimal("Infinity") if price is None else price.usd


__all__ = ["batch_bounds", "price_compute_environment"]
