"""Pricing a Karpenter NodePool: the nodes its limits allow, at the dearest type and way of buying it may use.

A NodePool launches from no node up to its limits (graph/launchers.py), so it is priced like an Auto Scaling group
from 0 to its maximum: expected 0 unless a usage file says how many `instances` run, the range up to the limits.
Its nodes bill in the cluster's region and account: the region its `topology.kubernetes.io/region` requirement
names, the account the stack's AWS providers for that region are pinned to. Without a region its price is unknown,
never zero. The nodes' root volumes come from the EC2NodeClass the pool references.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gpuinfra.clouds.aws.cost.compute import Counts, hours, instance_lines, volume_lines
from gpuinfra.clouds.aws.cost.lines import Ctx, unknown, unknown_input
from gpuinfra.cost.model import UNKNOWN_INPUT, Line, Where
from gpuinfra.graph import Graph, Resource, views
from gpuinfra.graph.launchers import NodePoolBounds, node_pool, size_of
from gpuinfra.graph.tokens import AWS_PROVIDER

NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"


def price_node_pool(resource: Resource, ctx: Ctx) -> list[Line]:
    bounds = node_pool(resource.inputs)
    if not bounds.instance_types:
        return [unknown_input("Nodes", "instances", "the instance-type requirement")]
    if bounds.region is None:
        return [
            unknown(
                f"Nodes ({', '.join(bounds.instance_types)})",
                "instances",
                UNKNOWN_INPUT,
                "the NodePool names no region (a topology.kubernetes.io/region requirement): its price is unknown",
            )
        ]
    kind = None if bounds.on_demand else "spot"
    priced = _dearest(bounds, ctx, kind)
    if priced is None:
        return [unknown_input(f"Nodes ({', '.join(bounds.instance_types)})", "instances", "limits")]
    instance_type, most = priced
    explicit = ctx.usage.value(resource, "instances")
    expected = min(int(explicit.amount), most) if explicit is not None else 0
    counts = Counts(expected, 0, most)
    others = [t for t in bounds.instance_types if t != instance_type]
    note = f"up to {most} nodes by its limits; priced as {instance_type}" + (
        f" (the dearest at its maximum; it may also launch {', '.join(others)})" if others else ""
    )
    lines = instance_lines(instance_type, counts, ctx, kind, views.capacity_terms({}, kind), hours(resource, ctx), note)
    return lines + volume_lines(_root_volumes(resource, ctx), counts, ctx)


def node_pool_where(resource: Resource, graph: Graph) -> Where | None:
    """Where a NodePool's nodes bill: the region its requirement names, and the account the stack's AWS providers
    in that region are pinned to (when they agree on one); None when it names no region."""
    region = node_pool(resource.inputs).region
    if region is None:
        return None
    accounts = {
        views.location(p.inputs).account
        for p in graph.resources
        if p.type == AWS_PROVIDER and views.location(p.inputs).region == region
    }
    accounts.discard(None)
    return Where(region, accounts.pop() if len(accounts) == 1 else None)


def _dearest(bounds: NodePoolBounds, ctx: Ctx, kind: str | None) -> tuple[str, int] | None:
    """The type whose maximum count costs most per hour (an unpriced type is priced as unknown if it is the only
    one), with that count."""
    best: tuple[Decimal, str, int] | None = None
    unpriced: tuple[str, int] | None = None
    for instance_type in bounds.instance_types:
        most = bounds.most(size_of(instance_type))
        if most is None:
            continue
        price = (
            ctx.book.on_demand(instance_type, ctx.where.region)
            if kind is None
            else (ctx.book.spot(instance_type, ctx.where.region) or (None,))[0]
        )
        if price is None:
            unpriced = unpriced or (instance_type, most)
            continue
        cost = price.usd * most
        if best is None or cost > best[0]:
            best = (cost, instance_type, most)
    if unpriced is not None:
        return unpriced  # an unknown price may be the dearest: price it as unknown, never as a cheaper one
    return (best[1], best[2]) if best else None


def _root_volumes(resource: Resource, ctx: Ctx) -> Resource | None:
    """The EC2NodeClass the pool references, its block devices in a launch template's shape (volume sizes in GB)."""
    spec = resource.inputs.get("spec") or {}
    ref = ((spec.get("template") or {}).get("spec") or {}).get("nodeClassRef") or {}
    for found in ctx.graph.resources:
        if found.type != NODE_CLASS or (found.inputs.get("metadata") or {}).get("name") != ref.get("name"):
            continue
        if found.provider != resource.provider:
            continue
        devices = ((found.inputs.get("spec") or {}).get("blockDeviceMappings")) or []
        mappings: list[dict[str, Any]] = []
        for d in views.mappings(devices):
            ebs = d.get("ebs") or {}
            size = _gib(ebs.get("volumeSize"))
            mappings.append(
                {
                    "deviceName": d.get("deviceName", "volume"),
                    "ebs": {**ebs, "volumeSize": size, "volumeType": ebs.get("volumeType") or "gp3"},
                }
            )
        return Resource(found.urn, found.type, found.name, inputs={"blockDeviceMappings": mappings})
    return None


def _gib(value: Any) -> Any:
    """A node class volume size ("200Gi") in GB as a launch template states it (EBS sizes are GiB, which EC2 calls
    GB); anything else stays as it is (and is priced as unknown)."""
    if isinstance(value, str) and value.endswith("Gi") and value[:-2].isdigit():
        return int(value[:-2])
    return value


__all__ = ["node_pool_where", "price_node_pool"]
