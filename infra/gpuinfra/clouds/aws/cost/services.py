"""Pricing the services around the instances: FSx for Lustre, S3, load balancers, NAT gateways, public IPv4,
Global Accelerator, EKS control planes (by their version's support tier), KMS keys, CloudWatch alarms, Route 53,
EBS volumes, VPC endpoints."""

from __future__ import annotations

import datetime
from decimal import Decimal

from gpuinfra.clouds.aws.catalog.eks import eks_versions
from gpuinfra.clouds.aws.cost.lines import (
    Ctx,
    not_in_catalog,
    per_hour,
    per_month,
    quantity,
    unknown,
    unknown_input,
    usage_line,
)
from gpuinfra.cost.model import USAGE_BASED, Line
from gpuinfra.graph import Resource, is_known, tokens

SCRATCH_2 = "SCRATCH_2"
DEFAULT_LUSTRE_DEPLOYMENT = "SCRATCH_1"
"""terraform-provider-aws's default deployment_type."""


def price_lustre(resource: Resource, ctx: Ctx) -> list[Line]:
    """FSx for Lustre: storage capacity (GiB, billed as GB-months) at the rate of its deployment type,
    throughput tier (MB/s per TiB) and storage type."""
    inputs = resource.inputs
    deployment = inputs.get("deploymentType") or DEFAULT_LUSTRE_DEPLOYMENT
    tier = inputs.get("perUnitStorageThroughput")
    storage = inputs.get("storageType") or "SSD"
    capacity = quantity(inputs.get("storageCapacity"))
    if capacity is None:
        return [unknown_input("Storage", "GB", "storageCapacity")]
    if not (is_known(deployment) and is_known(tier) and is_known(storage)):
        return [unknown_input("Storage", "GB", "deploymentType/perUnitStorageThroughput")]
    tier_label = "" if deployment == SCRATCH_2 or tier is None else f", {tier} MB/s/TiB"
    name = f"Storage ({deployment}{tier_label}, {storage})"
    key = f"fsx_lustre/{deployment}" if deployment == SCRATCH_2 else f"fsx_lustre/{deployment}/{tier}"
    price = ctx.book.service(key, ctx.where.region) if storage == "SSD" else None
    if price is None:
        return [not_in_catalog(name, "GB", f"FSx for Lustre {deployment} {storage} at {tier} MB/s/TiB", capacity)]
    return [per_month(name, capacity, "GB", price), *metadata_iops_lines(inputs.get("metadataConfiguration"), ctx)]


def metadata_iops_lines(config: object, ctx: Ctx) -> list[Line]:
    """Metadata IOPS (PERSISTENT_2). AUTOMATIC (what an EFA-enabled file system gets here) provisions them with the
    storage capacity (FSx API, CreateFileSystemLustreMetadataConfiguration): the storage line is the charge, like
    gp3's included baseline. USER_PROVISIONED buys IOPS above that: a line the catalog states it cannot price
    (fsx_lustre/PERSISTENT_2/metadata_iops), never a guess."""
    if not isinstance(config, dict) or config.get("mode") != "USER_PROVISIONED":
        return []
    key = "fsx_lustre/PERSISTENT_2/metadata_iops"
    stated = ctx.book.catalog.unknown_price(key)
    why = f"{key} ({stated.reason})" if stated else f"FSx for Lustre metadata IOPS ({key})"
    return [not_in_catalog("Metadata IOPS (user-provisioned)", "IOPS", why, quantity(config.get("iops")))]


def price_bucket(resource: Resource, ctx: Ctx) -> list[Line]:
    price = ctx.book.service("s3/standard", ctx.where.region)
    return [usage_line(resource, ctx, "storage_gb", "Storage (Standard)", "GB", price, "S3 Standard storage")]


def price_ecr(resource: Resource, ctx: Ctx) -> list[Line]:
    """ECR: the GB of images stored, from usage (the repository holds what the mirror command pushed)."""
    price = ctx.book.service("ecr/storage", ctx.where.region)
    return [usage_line(resource, ctx, "storage_gb", "Storage", "GB", price, "ECR private repository storage")]


def price_efs(resource: Resource, ctx: Ctx) -> list[Line]:
    """EFS: the GB stored, from usage (a file system grows with what is written), at the Standard rate; throughput
    is bursting (no charge of its own) for the file systems gpuinfra creates."""
    mode = resource.inputs.get("throughputMode") or "bursting"
    if mode != "bursting":
        return [not_in_catalog(f"Throughput ({mode})", "MBps", f"EFS {mode} throughput")]
    price = ctx.book.service("efs/standard", ctx.where.region)
    return [usage_line(resource, ctx, "storage_gb", "Storage (Standard)", "GB", price, "EFS Standard storage")]


EFS_BACKUP_PRICE = "backup/efs_warm"


def price_efs_backup_policy(resource: Resource, ctx: Ctx) -> list[Line]:
    """An EFS backup policy ENABLED: AWS Backup keeps a daily backup of the file system for 35 days in the default
    vault (Amazon EFS User Guide, "Backing up EFS file systems"), billed per GB-month of backup storage: the size
    is usage (set backup_gb in a usage file), never zero. DISABLED costs nothing."""
    policy = resource.inputs.get("backupPolicy") or {}
    if policy.get("status") != "ENABLED":
        return []
    price = ctx.book.service(EFS_BACKUP_PRICE, ctx.where.region)
    return [
        usage_line(resource, ctx, "backup_gb", "Backups (AWS Backup storage)", "GB", price, "AWS Backup EFS storage")
    ]


def price_load_balancer(resource: Resource, ctx: Ctx) -> list[Line]:
    kind = resource.inputs.get("loadBalancerType") or "application"
    short = {"application": "alb", "network": "nlb"}.get(kind)
    if short is None:
        return [not_in_catalog(f"Load balancer ({kind})", "hours", f"a {kind} load balancer")]
    region = ctx.where.region
    lines: list[Line] = []
    hourly = ctx.book.service(f"elb/{short}", region)
    lines.append(
        not_in_catalog(f"{kind.title()} load balancer", "load balancers", f"elb/{short}")
        if hourly is None
        else per_hour(f"{kind.title()} load balancer", Decimal(1), "load balancers", hourly)
    )
    units = "LCU" if short == "alb" else "NLCU"
    lines.append(
        usage_line(
            resource,
            ctx,
            "capacity_units",
            f"Capacity units ({units})",
            units,
            ctx.book.service(f"elb/{short}_lcu", region),
            f"{units}-hours",
        )
    )
    if resource.inputs.get("internal") is not True:
        zones = resource.inputs.get("subnets") or resource.inputs.get("subnetMappings") or []
        lines.append(
            public_ipv4(
                Decimal(len(zones)) if isinstance(zones, list) and zones else None, ctx, "Public IPv4 (one per zone)"
            )
        )
    return lines


def public_ipv4(count: Decimal | None, ctx: Ctx, name: str = "Public IPv4 address") -> Line:
    price = ctx.book.service("public_ipv4/address", ctx.where.region)
    if count is None:
        return unknown_input(name, "addresses", "the subnets")
    if price is None:
        return not_in_catalog(name, "addresses", "public IPv4 addresses", count)
    return per_hour(name, count, "addresses", price)


def price_nat_gateway(resource: Resource, ctx: Ctx) -> list[Line]:
    region = ctx.where.region
    hourly = ctx.book.service("nat/gateway", region)
    lines = [
        not_in_catalog("NAT gateway", "gateways", "nat/gateway")
        if hourly is None
        else per_hour("NAT gateway", Decimal(1), "gateways", hourly)
    ]
    lines.append(
        usage_line(
            resource,
            ctx,
            "monthly_data_processed_gb",
            "Data processed",
            "GB",
            ctx.book.service("nat/data_processed", region),
            "NAT data processing",
        )
    )
    return lines


def price_flow_log(resource: Resource, ctx: Ctx) -> list[Line] | None:
    """Flow logs to S3: vended-log delivery per GB (usage: `monthly_ingested_gb`); to CloudWatch Logs the log
    group carries ingestion and storage, so the flow log itself is free in that configuration."""
    if resource.inputs.get("logDestinationType") != "s3":
        return None
    return [
        usage_line(
            resource,
            ctx,
            "monthly_ingested_gb",
            "Vended logs delivered to S3",
            "GB",
            ctx.book.service("cloudwatch_logs/vended_to_s3", ctx.where.region),
            "CloudWatch vended logs delivery to S3",
        )
    ]


def vended_destination(resource: Resource, ctx: Ctx) -> bool:
    """Whether a vended-log delivery destination of the graph names this log group: its data then arrives as
    vended logs, billed per GB delivered at the vended rate instead of the group's ingestion rate."""
    return any(resource.urn in d.dependencies for d in ctx.graph.of_type(tokens.LOG_DELIVERY_DESTINATION))


def price_log_group(resource: Resource, ctx: Ctx) -> list[Line]:
    """CloudWatch Logs: ingestion (or, for a vended-log destination, delivery) per GB and storage per GB-month,
    both usage (unknown without a usage file: no spec says how many flows a VPC carries or how much Slurm logs)."""
    region = ctx.where.region
    vended = vended_destination(resource, ctx)
    return [
        usage_line(
            resource,
            ctx,
            "monthly_ingested_gb",
            "Vended logs delivered" if vended else "Data ingested",
            "GB",
            ctx.book.service("cloudwatch_logs/vended_to_cwl" if vended else "cloudwatch_logs/ingested", region),
            "CloudWatch vended logs delivery to CloudWatch Logs" if vended else "CloudWatch Logs ingestion",
        ),
        usage_line(
            resource,
            ctx,
            "storage_gb",
            "Storage",
            "GB",
            ctx.book.service("cloudwatch_logs/stored", region),
            "CloudWatch Logs storage",
        ),
    ]


def price_ssm_parameter(resource: Resource, ctx: Ctx) -> list[Line] | None:
    """Parameter Store: a standard-tier parameter has no charge of its own (AWS Systems Manager pricing, "Parameter
    Store": standard parameters at no additional charge; Infracost's aws_ssm_parameter prices the advanced tier
    only); an advanced one is not in the catalog."""
    if resource.inputs.get("tier", "Standard") == "Standard":
        return None
    return [not_in_catalog("Advanced parameter", "parameters", "ssm/advanced_parameter", Decimal(1))]


def price_sns_topic(resource: Resource, ctx: Ctx) -> list[Line]:
    """SNS: a topic has no standing charge; its publish requests are priced per million (Infracost's aws_sns_topic:
    "API requests (over 1M)", the first million a month being the account's free tier, ignored as Infracost does)."""
    price = ctx.book.service("sns/requests", ctx.where.region)
    return [usage_line(resource, ctx, "monthly_requests_1m", "API requests", "1M requests", price, "SNS requests")]


SNS_DELIVERIES = {
    "email": ("sns/email", "Email notifications"),
    "email-json": ("sns/email", "Email notifications"),
    "http": ("sns/https", "HTTP/HTTPS notifications"),
    "https": ("sns/https", "HTTP/HTTPS notifications"),
}
"""Subscription protocols the catalog prices deliveries of (Infracost's aws_sns_topic notification lines)."""


def price_sns_subscription(resource: Resource, ctx: Ctx) -> list[Line]:
    """An SNS subscription: each notification delivered, per 100,000, at its protocol's price."""
    protocol = str(resource.inputs.get("protocol", ""))
    key, name = SNS_DELIVERIES.get(protocol, (f"sns/{protocol}", "Notifications"))
    price = ctx.book.service(key, ctx.where.region)
    unit = "100k notifications"
    return [usage_line(resource, ctx, "monthly_notifications_100k", name, unit, price, f"SNS {protocol} deliveries")]


def price_eip(resource: Resource, ctx: Ctx) -> list[Line]:
    return [public_ipv4(Decimal(1), ctx)]


def fixed(key: str, name: str, unit: str):  # type: ignore[no-untyped-def]
    """A pricer for a resource billed a fixed amount per hour or per month."""

    def price(resource: Resource, ctx: Ctx) -> list[Line]:
        found = ctx.book.service(key, ctx.where.region)
        if found is None:
            return [not_in_catalog(name, unit, key, Decimal(1))]
        if found.unit == "hour":
            return [per_hour(name, Decimal(1), unit, found)]
        return [per_month(name, Decimal(1), unit, found)]

    return price


def price_eks_cluster(resource: Resource, ctx: Ctx, day: datetime.date | None = None) -> list[Line]:
    """An EKS control plane at the rate of its version's support tier on `day` (default today, UTC): standard,
    or extended when the version is past standard support and the upgrade policy keeps it there (EXTENDED, EKS's
    default). A version without catalog dates is priced at the standard rate with the extended rate as its
    upper bound (eks.yaml; EKS User Guide, "Amazon EKS Kubernetes release calendar")."""
    day = day or datetime.datetime.now(datetime.UTC).date()
    version = resource.inputs.get("version")
    policy = (resource.inputs.get("upgradePolicy") or {}).get("supportType") or "EXTENDED"
    standard = ctx.book.service("eks/cluster", ctx.where.region)
    extended = ctx.book.service("eks/cluster_extended", ctx.where.region)
    if standard is None or extended is None:
        return [not_in_catalog("EKS control plane", "clusters", "eks/cluster, eks/cluster_extended", Decimal(1))]
    support = eks_versions().support(version) if isinstance(version, str) and is_known(version) else None
    if support is None:
        return [
            per_hour(
                "EKS control plane",
                Decimal(1),
                "clusters",
                standard,
                low=Decimal(1),
                high=extended.usd / standard.usd,
                note=f"Kubernetes {version}: support dates not in the catalog; extended support would bill "
                f"${extended.usd}/hour",
            )
        ]
    tier = support.tier(day)
    if tier == "standard" or policy != "EXTENDED":
        return [per_hour(f"EKS control plane (standard support, {version})", Decimal(1), "clusters", standard)]
    return [
        per_hour(
            f"EKS control plane (extended support, {version})",
            Decimal(1),
            "clusters",
            extended,
            note=f"Kubernetes {version} left standard support on {support.standard_end}; "
            f"extended support ends {support.extended_end}",
        )
    ]


def price_alarm(resource: Resource, ctx: Ctx) -> list[Line]:
    period = resource.inputs.get("period")
    high = isinstance(period, int) and period < 60
    queries = [q for q in resource.inputs.get("metricQueries") or [] if isinstance(q, dict) and q.get("metric")]
    metrics = Decimal(max(1, len(queries)))
    key = "cloudwatch/alarm_high_resolution" if high else "cloudwatch/alarm_standard"
    price = ctx.book.service(key, ctx.where.region)
    name = f"Alarm metrics ({'high' if high else 'standard'} resolution)"
    return [
        not_in_catalog(name, "metrics", key, metrics) if price is None else per_month(name, metrics, "metrics", price)
    ]


def price_record(resource: Resource, ctx: Ctx) -> list[Line] | None:
    """Alias records answer queries for free; others cost per million queries (usage, not in the catalog).
    Returns None for a free record."""
    if resource.inputs.get("aliases"):
        return None
    return [
        unknown(
            "DNS queries",
            "queries",
            USAGE_BASED,
            "standard and latency queries are billed per million (usage); no catalog price",
        )
    ]


def price_volume(resource: Resource, ctx: Ctx) -> list[Line]:
    from gpuinfra.clouds.aws.cost.compute import Counts, gp3_performance_lines, volume_line

    volume_type = resource.inputs.get("type") or "gp3"
    one = Counts(1, 1, 1)
    return [
        volume_line("EBS volume", resource.inputs.get("size"), volume_type, one, ctx),
        *gp3_performance_lines("EBS volume", resource.inputs, volume_type, one, ctx),
    ]


def price_vpc_endpoint(resource: Resource, ctx: Ctx) -> list[Line] | None:
    """Gateway endpoints (S3, DynamoDB) are free. An interface endpoint is billed per hour in each Availability
    Zone it has a network interface in (one per subnet in `subnetIds`), plus the GB it processes (usage)."""
    kind = resource.inputs.get("vpcEndpointType") or "Gateway"
    if kind == "Gateway":
        return None
    if kind != "Interface":
        return [not_in_catalog(f"Endpoint ({kind})", "endpoints", f"{kind} VPC endpoints", Decimal(1))]
    subnets = resource.inputs.get("subnetIds")
    hourly = ctx.book.service("vpc_endpoint/interface", ctx.where.region)
    if not isinstance(subnets, list):
        zones = unknown_input("Interface endpoint", "zones", "subnetIds")
    elif hourly is None:
        zones = not_in_catalog("Interface endpoint", "zones", "interface VPC endpoints", Decimal(len(subnets)))
    else:
        zones = per_hour(f"Interface endpoint ({len(subnets)} zones)", Decimal(len(subnets)), "zones", hourly)
    processed = usage_line(
        resource,
        ctx,
        "monthly_data_processed_gb",
        "Data processed",
        "GB",
        ctx.book.service("vpc_endpoint/data_processed", ctx.where.region),
        "VPC endpoint data processed",
    )
    return [zones, processed]


def price_web_acl(resource: Resource, ctx: Ctx) -> list[Line]:
    """AWS WAF: a monthly fee per web ACL and per rule (a managed rule group counts as one rule), plus
    requests inspected (usage)."""
    region = ctx.where.region
    lines: list[Line] = []
    acl = ctx.book.service("waf/web_acl", region)
    lines.append(
        not_in_catalog("Web ACL", "web ACLs", "waf/web_acl", Decimal(1))
        if acl is None
        else per_month("Web ACL", Decimal(1), "web ACLs", acl)
    )
    rules = resource.inputs.get("rules")
    count = Decimal(len(rules)) if isinstance(rules, list) else None
    rule_price = ctx.book.service("waf/rule", region)
    if count is None:
        lines.append(unknown_input("Rules", "rules", "rules"))
    elif rule_price is None:
        lines.append(not_in_catalog("Rules", "rules", "waf/rule", count))
    else:
        lines.append(per_month("Rules (managed rule groups count as one)", count, "rules", rule_price))
    lines.append(
        usage_line(
            resource,
            ctx,
            "monthly_requests_millions",
            "Requests",
            "1M requests",
            ctx.book.service("waf/requests", region),
            "WAF requests",
        )
    )
    return lines


def price_secret(resource: Resource, ctx: Ctx) -> list[Line]:
    """Secrets Manager: a monthly fee per secret, plus API calls (usage, per 10,000)."""
    region = ctx.where.region
    found = ctx.book.service("secretsmanager/secret", region)
    return [
        not_in_catalog("Secret", "secrets", "secretsmanager/secret", Decimal(1))
        if found is None
        else per_month("Secret", Decimal(1), "secrets", found),
        usage_line(
            resource,
            ctx,
            "monthly_api_calls_10k",
            "API calls",
            "10k requests",
            ctx.book.service("secretsmanager/requests", region),
            "Secrets Manager API calls",
        ),
    ]


def price_replication(resource: Resource, ctx: Ctx) -> list[Line]:
    return [
        unknown(
            "Replication transfer",
            "GB",
            USAGE_BASED,
            "inter-region transfer of replicated objects is billed per GB (usage); no catalog price",
        )
    ]


__all__ = [
    "fixed",
    "price_alarm",
    "price_bucket",
    "price_efs",
    "price_efs_backup_policy",
    "price_eip",
    "price_eks_cluster",
    "price_flow_log",
    "price_load_balancer",
    "price_log_group",
    "price_lustre",
    "price_nat_gateway",
    "price_record",
    "price_replication",
    "price_secret",
    "price_sns_subscription",
    "price_sns_topic",
    "price_ssm_parameter",
    "price_volume",
    "price_vpc_endpoint",
    "price_web_acl",
    "public_ipv4",
]
