"""Price a resource graph: every custom resource gets its lines from the pricer for its type, is known to be
free, or is listed as unpriced (unknown, never zero). Providers, components and the stack cost nothing and
are skipped. One pass over the graph, one dict lookup per resource."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from ..catalog import Catalog
from ..graph import STACK_TYPE, Graph, Resource
from .compute import GROUP, INSTANCE, NODE_GROUP, price_group, price_instance, price_node_group
from .lines import Ctx, unknown
from .locate import Locator
from .model import NOT_IN_CATALOG, Breakdown, Line, ResourceCost
from .prices import PriceBook
from .services import (
    fixed,
    price_alarm,
    price_bucket,
    price_eip,
    price_load_balancer,
    price_lustre,
    price_nat_gateway,
    price_record,
    price_replication,
    price_volume,
    price_vpc_endpoint,
)
from .usage import Usage

Pricer = Callable[[Resource, Ctx], list[Line] | None]
"""Lines for one resource; None means: free in this configuration."""

PRICERS: dict[str, Pricer] = {
    GROUP: price_group,
    INSTANCE: price_instance,
    NODE_GROUP: price_node_group,
    "aws:fsx/lustreFileSystem:LustreFileSystem": price_lustre,
    "aws:s3/bucket:Bucket": price_bucket,
    "aws:s3/bucketV2:BucketV2": price_bucket,
    "aws:lb/loadBalancer:LoadBalancer": price_load_balancer,
    "aws:alb/loadBalancer:LoadBalancer": price_load_balancer,
    "aws:ec2/natGateway:NatGateway": price_nat_gateway,
    "aws:ec2/eip:Eip": price_eip,
    "aws:globalaccelerator/accelerator:Accelerator": fixed(
        "global_accelerator/fixed", "Accelerator (fixed fee)", "accelerators"
    ),
    "aws:eks/cluster:Cluster": fixed("eks/cluster", "EKS control plane", "clusters"),
    "aws:kms/key:Key": fixed("kms/key", "Customer managed key", "keys"),
    "aws:cloudwatch/metricAlarm:MetricAlarm": price_alarm,
    "aws:route53/healthCheck:HealthCheck": fixed("route53/health_check_aws", "Health check (AWS endpoint)", "checks"),
    "aws:route53/record:Record": price_record,
    "aws:ebs/volume:Volume": price_volume,
    "aws:ec2/vpcEndpoint:VpcEndpoint": price_vpc_endpoint,
    "aws:s3/bucketReplicationConfig:BucketReplicationConfig": price_replication,
}
FREE_IN_CONFIGURATION = {
    "aws:route53/record:Record": "alias record: queries to AWS resources are free",
    "aws:ec2/vpcEndpoint:VpcEndpoint": "gateway endpoint: no additional charge",
}


def price_graph(
    graph: Graph, catalog: Catalog, usage: Usage | None = None, default_region: str | None = None
) -> Breakdown:
    """The cost of every resource of `graph`, from the catalog and usage."""
    book = PriceBook(catalog)
    usage = usage or Usage()
    locate = Locator(graph, default_region)
    out = []
    for r in graph.resources:
        if not r.custom or r.is_provider or r.type == STACK_TYPE:
            continue
        where = locate.where(r)
        base: dict[str, Any] = {
            "urn": r.urn,
            "type": r.type,
            "name": r.name,
            "component": locate.component(r),
            "where": where,
        }
        pricer = PRICERS.get(r.type)
        if pricer is not None:
            lines = pricer(r, Ctx(graph, book, usage, where))
            out.append(
                ResourceCost(**base, free=True, note=FREE_IN_CONFIGURATION.get(r.type))
                if lines is None
                else ResourceCost(**base, lines=tuple(lines))
            )
            continue
        free = book.free(r.type)
        if free is not None:
            out.append(ResourceCost(**base, free=True, note=free.note))
        elif r.type.startswith("kubernetes:"):
            out.append(
                ResourceCost(
                    **base,
                    free=True,
                    note="no charge of its own: it runs on the cluster's nodes",
                )
            )
        else:
            out.append(
                ResourceCost(
                    **base,
                    lines=(
                        unknown("Resource", "resources", NOT_IN_CATALOG, f"gpuinfra has no price model for {r.type}"),
                    ),
                )
            )
    return Breakdown(graph.stack, tuple(out), usage.source)


def monthly_total(graph: Graph, catalog: Catalog | None = None, usage: Usage | None = None) -> Decimal | None:
    """The expected monthly cost of `graph` (sum of its known lines), None when nothing in it has a price.
    The budget policy's estimate (policies/budget.py)."""
    from ..catalog import load_catalog

    breakdown = price_graph(graph, catalog or load_catalog(), usage)
    return breakdown.monthly if any(r.priced for r in breakdown.resources) else None


__all__ = ["PRICERS", "Pricer", "monthly_total", "price_graph"]
