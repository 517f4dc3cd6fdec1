"""Price a resource graph: each custom resource is priced by the price book of the cloud whose package its type
is (the registry's `prices` part), is known to be free, or is listed as unpriced (unknown, never zero).
Providers, components and the stack cost nothing and are skipped. One pass over the graph."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from gpuinfra.catalog import Catalog
from gpuinfra.clouds import owner_of
from gpuinfra.cost.free import FreeTypes
from gpuinfra.cost.locate import Locator
from gpuinfra.cost.model import NOT_IN_CATALOG, Breakdown, ResourceCost, unknown
from gpuinfra.cost.usage import Usage
from gpuinfra.graph import STACK_TYPE, Graph, Resource

Book = Callable[[Resource, dict[str, Any]], ResourceCost]
"""A cloud's pricer for one graph: (resource, base: urn, type, name, component, where) -> its cost."""


def price_graph(
    graph: Graph, catalog: Catalog, usage: Usage | None = None, default_region: str | None = None
) -> Breakdown:
    """The cost of every resource of `graph`, from the catalog and usage."""
    usage = usage or Usage()
    free = FreeTypes(catalog)
    locate = Locator(graph, default_region)
    books: dict[str, Book] = {}
    out = []
    for r in graph.resources:
        if not r.custom or r.is_provider or r.type == STACK_TYPE:
            continue
        base: dict[str, Any] = {
            "urn": r.urn,
            "type": r.type,
            "name": r.name,
            "component": locate.component(r),
            "where": locate.where(r),
        }
        owner = owner_of(r.type)
        if owner is None:
            out.append(_unowned(r, base, free))
            continue
        if owner.name not in books:
            books[owner.name] = owner.part("prices")(graph, catalog, usage)
        out.append(books[owner.name](r, base))
    return Breakdown(graph.stack, tuple(out), usage.source)


def _unowned(r: Resource, base: dict[str, Any], free: FreeTypes) -> ResourceCost:
    """A type no cloud owns: free by free.yaml, a Kubernetes object (it runs on the cluster's nodes), or unknown."""
    listed = free.free(r.type)
    if listed is not None:
        return ResourceCost(**base, free=True, note=listed.note)
    if r.type.startswith("kubernetes:"):
        return ResourceCost(**base, free=True, note="no charge of its own: it runs on the cluster's nodes")
    return ResourceCost(
        **base,
        lines=(unknown("Resource", "resources", NOT_IN_CATALOG, f"gpuinfra has no price model for {r.type}"),),
    )


def monthly_total(graph: Graph, catalog: Catalog | None = None, usage: Usage | None = None) -> Decimal | None:
    """The expected monthly cost of `graph` (sum of its known lines), None when nothing in it has a price.
    The budget policy's estimate (policies/budget.py)."""
    from gpuinfra.catalog import load_catalog

    breakdown = price_graph(graph, catalog or load_catalog(), usage)
    return breakdown.monthly if any(r.priced for r in breakdown.resources) else None


__all__ = ["Book", "monthly_total", "price_graph"]
