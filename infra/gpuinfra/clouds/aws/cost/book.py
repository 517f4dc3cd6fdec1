"""AWS's price book (the registry's `prices` for the aws and aws-native packages, and Karpenter's NodePool):
every resource gets its lines from the pricer for its type, is known to be free, or is listed as unpriced
(unknown, never zero). One dict lookup per resource."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpuinfra.catalog import Catalog
from gpuinfra.clouds.aws.cost.batch import price_compute_environment
from gpuinfra.clouds.aws.cost.compute import (
    price_group,
    price_instance,
    price_node_group,
    price_pcs_cluster,
    price_pcs_node_group,
)
from gpuinfra.clouds.aws.cost.fleets import price_fleet
from gpuinfra.clouds.aws.cost.lines import Ctx
from gpuinfra.clouds.aws.cost.node_pools import node_pool_where, price_node_pool
from gpuinfra.clouds.aws.cost.prices import PriceBook
from gpuinfra.clouds.aws.cost.sagemaker import price_endpoint_configuration
from gpuinfra.clouds.aws.cost.services import (
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
from gpuinfra.cost.model import NOT_IN_CATALOG, Line, ResourceCost, Where, unknown
from gpuinfra.cost.usage import Usage
from gpuinfra.graph import Graph, Resource, tokens
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


def book(graph: Graph, catalog: Catalog, usage: Usage) -> Callable[[Resource, dict[str, Any]], ResourceCost]:
    """The pricer of `graph`'s AWS resources: `base` (urn, type, name, component, where) -> its cost."""
    prices = PriceBook(catalog)

    def price(r: Resource, base: dict[str, Any]) -> ResourceCost:
        locator = LOCATORS.get(r.type)
        where = (locator(r, graph) if locator else None) or base["where"]
        base = {**base, "where": where}
        pricer = PRICERS.get(r.type)
        if pricer is not None:
            lines = pricer(r, Ctx(graph, prices, usage, where))
            if lines is None:
                return ResourceCost(**base, free=True, note=FREE_IN_CONFIGURATION.get(r.type))
            return ResourceCost(**base, lines=tuple(lines))
        free = prices.free(r.type)
        if free is not None:
            return ResourceCost(**base, free=True, note=free.note)
        return ResourceCost(
            **base,
            lines=(unknown("Resource", "resources", NOT_IN_CATALOG, f"gpuinfra has no price model for {r.type}"),),
        )

    return price


__all__ = ["FREE_IN_CONFIGURATION", "LOCATORS", "PRICERS", "Pricer", "book"]
