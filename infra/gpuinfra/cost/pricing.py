"""Price a resource graph: every custom resource gets its lines from the pricer for its type, is known to be
free, or is listed as unpriced (unknown, never zero). Providers, components and the stack cost nothing and
are skipped. One pass over the graph, one dict lookup per resource."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from gpuinfra.catalog import Catalog
from gpuinfra.clouds import type_part
from gpuinfra.cost.batch import price_compute_environment
from gpuinfra.cost.compute import price_group, price_instance, price_node_group, price_pcs_cluster, price_pcs_node_group
from gpuinfra.cost.fleets import price_fleet
from gpuinfra.cost.lines import Ctx, unknown
from gpuinfra.cost.locate import Locator
from gpuinfra.cost.model import NOT_IN_CATALOG, Breakdown, Line, ResourceCost, Where
from gpuinfra.cost.node_pools import node_pool_where, price_node_pool
from gpuinfra.cost.prices import PriceBook
from gpuinfra.cost.sagemaker import price_endpoint_configuration
from gpuinfra.cost.services import (
    fixed,
    price_alarm,
    price_bucket,
    price_ecr,
    price_efs,
    price_efs_backup_policy,
    price_eip,
    price_eks_cluster,
    price_flow_log,
    price_load_balancer,
    price_log_group,
    price_lustre,
    price_nat_gateway,
    price_record,
    price_replication,
    price_secret,
    price_sns_subscription,
    price_sns_topic,
    price_ssm_parameter,
    price_volume,
    price_vpc_endpoint,
    price_web_acl,
)
from gpuinfra.cost.usage import Usage
from gpuinfra.graph import STACK_TYPE, Graph, Resource, tokens
from gpuinfra.graph.sagemaker import ENDPOINT_CONFIGURATION

Pricer = Callable[[Resource, Ctx], list[Line] | None]
"""Lines for one resource; None means: free in this configuration."""

PRICERS: dict[str, Pricer] = {
    tokens.ASG: price_group,
    tokens.INSTANCE: price_instance,
    tokens.EKS_NODE_GROUP: price_node_group,
    tokens.PCS_NODE_GROUP: price_pcs_node_group,
    tokens.PCS_CLUSTER: price_pcs_cluster,
    tokens.KARPENTER_NODE_POOL: price_node_pool,
    tokens.BATCH_COMPUTE_ENVIRONMENT: price_compute_environment,
    tokens.EC2_FLEET: price_fleet,
    tokens.SPOT_FLEET: price_fleet,
    ENDPOINT_CONFIGURATION: price_endpoint_configuration,
    tokens.LUSTRE: price_lustre,
    tokens.BUCKET: price_bucket,
    tokens.EFS_FILE_SYSTEM: price_efs,
    tokens.EFS_BACKUP_POLICY: price_efs_backup_policy,
    tokens.ECR_REPOSITORY: price_ecr,
    tokens.BUCKET_V2: price_bucket,
    tokens.LOAD_BALANCER: price_load_balancer,
    tokens.ALB_LOAD_BALANCER: price_load_balancer,
    tokens.NAT_GATEWAY: price_nat_gateway,
    tokens.LOG_GROUP: price_log_group,
    tokens.FLOW_LOG: price_flow_log,
    tokens.EIP: price_eip,
    tokens.GA_ACCELERATOR: fixed("global_accelerator/fixed", "Accelerator (fixed fee)", "accelerators"),
    tokens.EKS_CLUSTER: price_eks_cluster,
    tokens.KMS_KEY: fixed("kms/key", "Customer managed key", "keys"),
    tokens.METRIC_ALARM: price_alarm,
    tokens.ROUTE53_HEALTH_CHECK: fixed("route53/health_check_aws", "Health check (AWS endpoint)", "checks"),
    tokens.ROUTE53_ZONE: fixed("route53/hosted_zone", "Hosted zone", "zones"),
    tokens.ROUTE53_RECORD: price_record,
    tokens.EBS_VOLUME: price_volume,
    tokens.VPC_ENDPOINT: price_vpc_endpoint,
    tokens.BUCKET_REPLICATION: price_replication,
    tokens.WAF_WEB_ACL: price_web_acl,
    tokens.SECRETS_MANAGER_SECRET: price_secret,
    tokens.SSM_PARAMETER: price_ssm_parameter,
    tokens.SNS_TOPIC: price_sns_topic,
    tokens.SNS_SUBSCRIPTION: price_sns_subscription,
}
LOCATORS: dict[str, Callable[[Resource, Graph], Where | None]] = {tokens.KARPENTER_NODE_POOL: node_pool_where}
"""Types that bill somewhere their provider does not say (a Kubernetes provider names no region or account)."""
FREE_IN_CONFIGURATION = {
    tokens.ROUTE53_RECORD: "alias record: queries to AWS resources are free",
    tokens.VPC_ENDPOINT: "gateway endpoint: no additional charge",
    tokens.FLOW_LOG: "delivery to CloudWatch Logs is priced on the log group (ingestion and storage)",
    tokens.SSM_PARAMETER: "standard-tier parameter: no additional charge",
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
        locator = LOCATORS.get(r.type)
        where = (locator(r, graph) if locator else None) or locate.where(r)
        base: dict[str, Any] = {
            "urn": r.urn,
            "type": r.type,
            "name": r.name,
            "component": locate.component(r),
            "where": where,
        }
        own = type_part(r.type, "prices")  # a cloud's own price book for its types; None: built-in
        if own is not None:
            out.append(own(r, graph, base))
            continue
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
    from gpuinfra.catalog import load_catalog

    breakdown = price_graph(graph, catalog or load_catalog(), usage)
    return breakdown.monthly if any(r.priced for r in breakdown.resources) else None


__all__ = ["LOCATORS", "PRICERS", "Pricer", "monthly_total", "price_graph"]
