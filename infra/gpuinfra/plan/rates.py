"""Hourly rates of a node from the catalog, per way of buying it: the planner's prices (the cost stage prices
the graph; this prices a run or a month). Unknown is None, never zero."""

from __future__ import annotations

from decimal import Decimal

from gpuinfra.catalog import Catalog
from gpuinfra.plan.memory import Plain


class NodeRates(Plain):
    """USD per node-hour of one instance type in one region, with the catalog sources they came from."""

    instance_type: str
    region: str
    on_demand: Decimal | None
    spot: Decimal | None
    """On-demand less the catalog's spot discount (the region's zone mean, else its default estimate)."""
    capacity_block: Decimal | None
    sources: list[str]


def node_rates(catalog: Catalog, instance_type: str, region: str) -> NodeRates:
    od = catalog.on_demand(instance_type, region)
    sources: list[str] = []
    spot = None
    if od is not None:
        sources.append(od.source)
        found = catalog.spot_discount(instance_type, region)
        spot = od.usd_per_hour * (Decimal(1) - found.discount)
        sources.append(found.entry.source)
    block = catalog.service(f"ec2_capacity_block/{instance_type}/{region}")
    if block is not None:
        sources.append(block.source)
    return NodeRates(
        instance_type=instance_type,
        region=region,
        on_demand=od.usd_per_hour if od else None,
        spot=spot,
        capacity_block=block.usd if block else None,
        sources=sorted(set(sources)),
    )


def cluster_hourly(rates: NodeRates, capacity: str, on_demand_nodes: int, spot_nodes: int) -> Decimal | None:
    """USD an hour of the whole cluster at its capacity mix; None when a rate it needs is unknown. An On-Demand
    Capacity Reservation (capacity_reservation) is billed at the on-demand rate, used or not (EC2 User Guide,
    "Capacity Reservation pricing and billing")."""
    if capacity == "capacity_block":
        total = on_demand_nodes + spot_nodes
        return None if rates.capacity_block is None else rates.capacity_block * total
    if rates.on_demand is None or (spot_nodes and rates.spot is None):
        return None
    return rates.on_demand * on_demand_nodes + (rates.spot or Decimal(0)) * spot_nodes


def lowest_rate(rates: NodeRates, capacity: str) -> Decimal | None:
    """The lowest per-node rate `cluster_hourly` mixes for `capacity`: no cluster of that capacity costs less
    per node-hour (None when a rate it mixes is unknown)."""
    if capacity == "capacity_block":
        return rates.capacity_block
    if capacity == "spot":
        return None if rates.on_demand is None or rates.spot is None else min(rates.on_demand, rates.spot)
    return rates.on_demand


__all__ = ["NodeRates", "cluster_hourly", "lowest_rate", "node_rates"]
