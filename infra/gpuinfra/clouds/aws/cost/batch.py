"""Pricing an AWS Batch managed compute environment: the instances its `maxVcpus` allows, from none up.

Batch launches instances for queued jobs and scales to zero (`minVcpus` 0), so, like a NodePool, it is priced
from 0 (or the usage file's `instances`) up to its maximum: `maxVcpus` over the vCPUs of the smallest type it may
launch (the most instances), priced at the dearest type per instance-hour; EC2 on-demand, SPOT at the catalog's
discount. Fargate environments launch no EC2 instances and are left to the jobs' own pricing (unknown here).
"""

from __future__ import annotations

from decimal import Decimal

from gpuinfra.clouds.aws.cost.compute import Counts, hours, instance_lines, volume_lines
from gpuinfra.clouds.aws.cost.lines import Ctx, unknown_input
from gpuinfra.cost.model import Line
from gpuinfra.graph import Resource, tokens, views
from gpuinfra.graph.launchers import batch_bounds


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


__all__ = ["price_compute_environment"]
