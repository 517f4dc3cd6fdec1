"""Pricing an EC2 Fleet or a Spot Fleet request: the instances its target capacity holds (graph/fleets.py), at the
dearest type it may launch, on-demand for its on-demand share and spot for the rest, with its launch template's
volumes. A fleet holds its capacity (types maintain and request), so expected, fewest and most are one count."""

from __future__ import annotations

from gpuinfra.clouds.aws.cost.compute import Counts, hours, instance_lines, volume_lines
from gpuinfra.clouds.aws.cost.lines import Ctx, unknown_input
from gpuinfra.cost.model import Line
from gpuinfra.graph import Resource, tokens
from gpuinfra.graph.fleets import fleet
from gpuinfra.graph.launchers import size_of


def price_fleet(resource: Resource, ctx: Ctx) -> list[Line]:
    templates = ctx.graph.dependencies_of(resource, tokens.LAUNCH_TEMPLATE)
    bounds = fleet(resource.type, resource.inputs, [t.inputs for t in templates], size_of)
    if bounds.most is None:
        return [unknown_input("Instances", "instances", "the target capacity or the instance types")]
    prices = {t: ctx.book.on_demand(t, ctx.where.region) for t in bounds.instance_types}
    unpriced = [t for t, p in prices.items() if p is None]
    dearest = unpriced[0] if unpriced else max(prices, key=lambda t: prices[t].usd)  # type: ignore[union-attr]
    counts = Counts(bounds.most, bounds.most, bounds.most)
    note = f"{bounds.most} instances by its target capacity; priced as {dearest}"
    terms = (bounds.on_demand, 0)
    lines = instance_lines(dearest, counts, ctx, None, terms, hours(resource, ctx), note)
    return lines + volume_lines(templates[0] if templates else None, counts, ctx)


__all__ = ["price_fleet"]
