"""A Cluster Director cluster (hypercomputecluster.Cluster) priced from clouds/gcp/catalog/data/training.yaml: its GPU
nodeset's static nodes at the rate their compute resource buys them at (on-demand and reserved at on-demand rates,
Spot at Spot rates; flex-start's own SKUs are not in the catalog: unknown), its login nodes at on-demand rates, and
the Slurm controller Google runs for it, for which no source gives a price (unknown, never zero).

A reserved-instances resource names its reservation, not its machine type; the nodeset's instances carry the
machine type as the label MACHINE_LABEL (the program sets it from the spec), which is what prices them."""

from __future__ import annotations

from typing import Any

from gpuinfra.clouds.gcp.catalog.training import training_book
from gpuinfra.clouds.gcp.cost.training import vm_line
from gpuinfra.clouds.gcp.spec.slurm import MACHINE_LABEL
from gpuinfra.cost.model import NOT_IN_CATALOG, Line, ResourceCost
from gpuinfra.graph import Graph, Resource
from gpuinfra.graph.views import Location

CLUSTER = "gcp:hypercomputecluster/cluster:Cluster"
TYPES = frozenset({CLUSTER})
PURCHASES = {
    "newOnDemandInstances": "on_demand",
    "newReservedInstances": "on_demand",  # a reservation bills its VMs at on-demand rates (gcp-reservations)
    "newSpotInstances": "spot",
    "newFlexStartInstances": None,  # flex-start's SKUs: not in the catalog
}
CONTROLLER = "the Slurm controller Cluster Director runs for the cluster, and any charge of the service itself"


def _slurm(inputs: dict[str, Any]) -> dict[str, Any]:
    return (inputs.get("orchestrator") or {}).get("slurm") or {}


def _int(value: object) -> int:
    return int(str(value)) if str(value).isdigit() else 0


def nodesets(inputs: dict[str, Any]) -> list[tuple[str | None, str | None, int, int]]:
    """(machine type, purchase, static nodes, most nodes) of each nodeset of a cluster's inputs: its compute
    resource's config."""
    computes = {c.get("id"): (c.get("config") or {}) for c in inputs.get("computeResources") or []}
    found = []
    for nodeset in _slurm(inputs).get("nodeSets") or []:
        config = computes.get(nodeset.get("computeId"), {})
        kind = next((k for k in PURCHASES if k in config), None)
        labels = (nodeset.get("computeInstance") or {}).get("labels") or {}
        machine = (config.get(kind) or {}).get("machineType") if kind else None
        static = _int(nodeset.get("staticNodeCount"))
        found.append(
            (
                machine or labels.get(MACHINE_LABEL),
                PURCHASES.get(kind) if kind else None,
                static,
                static + _int(nodeset.get("maxDynamicNodeCount")),
            )
        )
    return found


def login_nodes(inputs: dict[str, Any]) -> tuple[str | None, int]:
    login = _slurm(inputs).get("loginNodes") or {}
    return login.get("machineType"), _int(login.get("count"))


def cluster_vms(graph: Graph, region: object) -> tuple[int, int]:
    """The region's Cluster Director VMs at the floor and ceiling (Cloud NAT bills per VM using it)."""
    low = high = 0
    for r in graph.resources:
        if r.type == CLUSTER and r.inputs.get("location") == region:
            logins = login_nodes(r.inputs)[1]
            low += logins + sum(n[2] for n in nodesets(r.inputs))
            high += logins + sum(n[3] for n in nodesets(r.inputs))
    return low, high


def _unknown(name: str, note: str) -> Line:
    return Line(
        name=name, quantity=None, unit="resources", hourly=None, monthly=None, flags=(NOT_IN_CATALOG,), note=note
    )


def _vms(name: str, machine: str | None, region: str, purchase: str | None, low: int, high: int) -> Line:
    book = training_book()
    rate = book.vm_hourly(machine or "", region, purchase) if purchase else None
    if rate is None:
        why = f"no {purchase.replace('_', '-')} price" if purchase else "flex-start VMs bill their own SKUs: no price"
        return _unknown(name, f"{why} for {machine} in {region} in the catalog")
    label = f"{'Spot ' if purchase == 'spot' else ''}{machine} {name}"
    return vm_line(label, (machine or "", region, purchase or ""), rate, low, high)


def slurm_price(r: Resource, graph: Graph, base: dict[str, Any]) -> ResourceCost:
    """The cluster's GPU nodes, its login nodes and its controller (unknown)."""
    region = str(r.inputs.get("location"))
    base = {**base, "where": Location(region, base["where"].account)}
    lines = [_vms("GPU nodes", m, region, p, low, high) for m, p, low, high in nodesets(r.inputs)]
    machine, count = login_nodes(r.inputs)
    lines.append(_vms("login nodes", machine, region, "on_demand", count, count))
    lines.append(_unknown("Slurm controller", f"{CONTROLLER}: no source in the catalog gives a price"))
    return ResourceCost(**base, lines=tuple(lines))


__all__ = ["CLUSTER", "TYPES", "cluster_vms", "login_nodes", "nodesets", "slurm_price"]
