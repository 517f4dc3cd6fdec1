"""A Google training cluster's resources priced from clouds/gcp/catalog/data/training.yaml: a GKE node pool's VMs as
Google bills them (the machine's cores, memory and Local SSD plus its GPUs, at on-demand rates for on-demand or
reserved nodes and Spot rates for Spot nodes; flex-start's own SKUs are not in the source: unknown), from its
floor to its ceiling; the GKE cluster's management fee; Managed Lustre and Filestore unknown (no dated price in
the catalog yet, never zero). The placement policy and the private services access peering have no charge of their
own."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any

from gpuinfra.clouds.gcp.catalog import HOURS_PER_MONTH
from gpuinfra.clouds.gcp.catalog.training import training_book
from gpuinfra.cost.model import NOT_IN_CATALOG, Line, ResourceCost
from gpuinfra.graph import Graph, Resource
from gpuinfra.graph.views import Location

NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"
LUSTRE = "gcp:lustre/instance:Instance"
FILESTORE = "gcp:filestore/instance:Instance"
NO_DATED_PRICE = (
    "no dated price: Cyclenerd's pricing.yml at fd66b26 (generated 2026-07-30), the export the catalog's G2 rates "
    "come from, has no {service} rows"
)
FREE: dict[str, str] = {
    "gcp:compute/resourcePolicy:ResourcePolicy": "a placement policy has no charge of its own: its VMs are priced on "
    "their node pool",
    "gcp:servicenetworking/connection:Connection": "VPC Network Peering has no charge of its own "
    "(https://cloud.google.com/vpc/network-pricing); traffic over it bills as the VMs' egress",
}
TYPES = frozenset({NODE_POOL, CLUSTER, LUSTRE, FILESTORE, *FREE})
"""The types this book prices (gpuinfra.clouds.gcp.cost.book hands them here)."""


def _region(location: object) -> str | None:
    """A zone's region (us-central1-b -> us-central1); a region stays itself."""
    if not isinstance(location, str):
        return None
    parts = location.split("-")
    return "-".join(parts[:2]) if len(parts) == 3 else location


def _unknown(name: str, note: str) -> Line:
    return Line(
        name=name, quantity=None, unit="resources", hourly=None, monthly=None, flags=(NOT_IN_CATALOG,), note=note
    )


def _bounds(pool: dict[str, Any]) -> tuple[int, int]:
    """The pool's nodes at its floor and its ceiling (a fixed count, or its autoscaler's totals)."""
    scaling = pool.get("autoscaling") or {}
    if scaling:
        return int(scaling.get("totalMinNodeCount") or 0), int(scaling.get("totalMaxNodeCount") or 0)
    count = int(pool.get("nodeCount") or pool.get("initialNodeCount") or 0)
    return count, count


def node_pool_vms(graph: Graph, region: object) -> tuple[int, int]:
    """The region's GKE nodes at the pools' floors and ceilings (Cloud NAT bills per VM using it)."""
    low = high = 0
    for pool in graph.resources:
        if pool.type == NODE_POOL and _region(pool.inputs.get("location")) == region:
            floor, ceiling = _bounds(pool.inputs)
            low, high = low + floor, high + ceiling
    return low, high


def node_pool_lines(r: Resource) -> tuple[Line, ...]:
    """The pool's VMs from its floor to its ceiling at the rate its capacity is bought at."""
    config: dict[str, Any] = r.inputs.get("nodeConfig") or {}
    machine, region = str(config.get("machineType")), _region(r.inputs.get("location"))
    if config.get("flexStart"):
        return (_unknown("VMs", f"flex-start {machine} VMs bill their own SKUs, which the catalog does not hold"),)
    purchase = "spot" if config.get("spot") else "on_demand"
    book = training_book()
    rate = book.vm_hourly(machine, region or "", purchase)
    if rate is None:
        return (_unknown("VMs", f"no {purchase.replace('_', '-')} price for {machine} in {region}"),)
    low, high = _bounds(r.inputs)
    reserved = (config.get("reservationAffinity") or {}).get("consumeReservationType") == "SPECIFIC_RESERVATION"
    kind = "Spot " if purchase == "spot" else "reserved " if reserved else ""
    line = vm_line(f"{kind}{machine} VMs", (machine, region or "", purchase), rate, low, high)
    if reserved:
        note = "a reservation bills its VMs at on-demand rates whether they run or not (gcp-reservations)"
        line = dataclasses.replace(line, note=note)
    return (line,)


def vm_line(name: str, priced: tuple[str, str, str], rate: Decimal, low: int, high: int) -> Line:
    """`low` to `high` VMs at `rate` an hour, with the source and date of the (machine, region, purchase) row."""
    book = training_book()
    date = book.rate_as_of(*priced)
    return Line(
        name=name,
        quantity=Decimal(low),
        unit="VMs",
        hourly=rate * low,
        monthly=rate * low * HOURS_PER_MONTH,
        monthly_min=rate * low * HOURS_PER_MONTH,
        monthly_max=rate * high * HOURS_PER_MONTH,
        unit_price=rate,
        price_unit="VM-hour",
        sources=(book.rate_source(*priced) or "",),
        as_of=(date,) if date else (),
    )


def cluster_lines() -> tuple[Line, ...]:
    fee = training_book().gke_cluster
    return (
        Line(
            name="Cluster management fee",
            quantity=Decimal(1),
            unit="clusters",
            hourly=fee.usd_per_hour,
            monthly=fee.usd_per_hour * HOURS_PER_MONTH,
            unit_price=fee.usd_per_hour,
            price_unit="cluster-hour",
            sources=(fee.source,),
        ),
    )


def training_price(r: Resource, graph: Graph, base: dict[str, Any]) -> ResourceCost:
    """One resource of a Google training cluster (`r.type` in TYPES)."""
    base = {**base, "where": Location(_region(r.inputs.get("location")), base["where"].account)}
    if r.type in FREE:
        return ResourceCost(**base, free=True, note=FREE[r.type])
    if r.type == NODE_POOL:
        return ResourceCost(**base, lines=node_pool_lines(r))
    if r.type == CLUSTER:
        return ResourceCost(**base, lines=cluster_lines())
    if r.type == FILESTORE:
        shares = r.inputs.get("fileShares") or {}
        note = f"{shares.get('capacityGb')} GiB of Filestore {r.inputs.get('tier')}: " + NO_DATED_PRICE.format(
            service="Filestore"
        )
        return ResourceCost(**base, lines=(_unknown("Storage capacity", note),))
    capacity = r.inputs.get("capacityGib")
    return ResourceCost(
        **base,
        lines=(_unknown("Storage capacity", f"{capacity} GiB of Managed Lustre: no price in the catalog yet"),),
    )


__all__ = ["TYPES", "node_pool_lines", "node_pool_vms", "training_price", "vm_line"]
