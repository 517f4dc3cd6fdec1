"""Google's resources priced from Google's catalog (clouds/gcp/catalog/data/g2.yaml): a managed instance group's VMs as
Google bills them, one line for the machine's cores and memory (the G2 core and RAM SKUs) and one for its L4s
(the GPU SKU), each at the group's purchase (on-demand or Spot rates), between the group's autoscaler bounds.
Types with no charge of their own say so with the page that says it; every other type is unknown, never zero.
The cost stage asks the cloud registry for this book for a `gcp:` type (`price`)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from gpuinfra.clouds.gcp.catalog import HOURS_PER_MONTH, gcp_book
from gpuinfra.clouds.gcp.catalog.book import Price, ServicePrice, gcp_services
from gpuinfra.clouds.gcp.cost import slurm, training
from gpuinfra.cost.model import NOT_IN_CATALOG, USAGE_BASED, Line, ResourceCost
from gpuinfra.graph import Graph, Resource
from gpuinfra.graph.views import Location

MIG = "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager"
TEMPLATE = "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate"
AUTOSCALER = "gcp:compute/regionAutoscaler:RegionAutoscaler"
VPC_PRICING = "https://cloud.google.com/vpc/network-pricing"
LB_PRICING = "https://cloud.google.com/vpc/network-pricing#lb"
IAM_PRICING = "https://cloud.google.com/iam/pricing"
FREE: dict[str, str] = {
    "gcp:compute/network:Network": f"VPC networks, subnets, routes and firewall rules have no charge ({VPC_PRICING})",
    "gcp:compute/subnetwork:Subnetwork": f"no charge of its own ({VPC_PRICING}); flow logs bill as Cloud Logging",
    "gcp:compute/firewall:Firewall": f"VPC firewall rules have no charge ({VPC_PRICING})",
    "gcp:compute/router:Router": f"a Cloud Router used only by Cloud NAT has no charge ({VPC_PRICING})",
    "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate": "a template: its VMs are priced on their group",
    "gcp:compute/regionAutoscaler:RegionAutoscaler": "autoscaling has no charge: its group's VMs are priced",
    "gcp:compute/healthCheck:HealthCheck": f"health checks of a load balancer have no charge ({LB_PRICING})",
    "gcp:compute/backendService:BackendService": f"billed through its forwarding rule ({LB_PRICING})",
    "gcp:compute/uRLMap:URLMap": f"billed through its forwarding rule ({LB_PRICING})",
    "gcp:compute/targetHttpsProxy:TargetHttpsProxy": f"billed through its forwarding rule ({LB_PRICING})",
    "gcp:compute/managedSslCertificate:ManagedSslCertificate": "Google-managed certificates have no charge",
    "gcp:serviceaccount/account:Account": f"service accounts have no charge ({IAM_PRICING})",
    "gcp:projects/iAMMember:IAMMember": f"IAM has no charge ({IAM_PRICING})",
    "gcp:storage/bucketIAMMember:BucketIAMMember": f"IAM has no charge ({IAM_PRICING})",
    "gcp:secretmanager/secretIamMember:SecretIamMember": f"IAM has no charge ({IAM_PRICING})",
    "gcp:cloudquota/sQuotaPreference:SQuotaPreference": "a quota request has no charge",
    "gcp:billing/budget:Budget": "Cloud Billing budgets have no charge",
    "random:index/randomPassword:RandomPassword": "generated locally; creates nothing in any cloud",
    "gcp:secretmanager/secretVersion:SecretVersion": "priced on its secret (per active version)",
    "gcp:compute/globalAddress:GlobalAddress": "a static external IP address assigned to a forwarding rule has no "
    "charge (https://cloud.google.com/vpc/network-pricing#ipaddress)",
}
RULE = "gcp:compute/globalForwardingRule:GlobalForwardingRule"
NAT = "gcp:compute/routerNat:RouterNat"
ARMOR = "gcp:compute/securityPolicy:SecurityPolicy"
SECRET = "gcp:secretmanager/secret:Secret"
BUCKET = "gcp:storage/bucket:Bucket"
TRANSFER = "gcp:storage/transferJob:TransferJob"


def where(r: Resource, graph: Graph) -> Location:
    """A Google resource's region (its own `region`) and project (its provider's)."""
    provider = graph.by_urn.get(r.provider or "")
    project = provider.inputs.get("project") if provider else None
    region = r.inputs.get("region")
    return Location(region if isinstance(region, str) else None, project if isinstance(project, str) else None)


def _depends(graph: Graph, r: Resource, kind: str) -> Resource | None:
    return next((d for u in r.dependencies if (d := graph.by_urn.get(u)) is not None and d.type == kind), None)


def _scaled_by(graph: Graph, mig: Resource) -> Resource | None:
    return next((a for a in graph.resources if a.type == AUTOSCALER and mig.urn in a.dependencies), None)


def _line(name: str, qty: int, unit: str, price: Price, low: int, high: int) -> Line:
    rate = price.usd_per_hour
    return Line(
        name=name,
        quantity=Decimal(qty),
        unit=unit,
        hourly=rate * qty,
        monthly=rate * qty * HOURS_PER_MONTH,
        monthly_min=rate * low * HOURS_PER_MONTH,
        monthly_max=rate * high * HOURS_PER_MONTH,
        unit_price=rate,
        price_unit=f"{unit.rstrip('s')}-hour",
        sources=(price.source,),
        as_of=(price.as_of,) if price.as_of else (),
    )


def _service(
    name: str, qty: Decimal, unit: str, p: ServicePrice, low: Decimal | None = None, high: Decimal | None = None
) -> Line:
    """A line at a service price per hour or per month (`low`/`high`: the quantity's range)."""
    hours = HOURS_PER_MONTH if p.unit == "hour" else Decimal(1)
    monthly = p.usd * qty * hours
    return Line(
        name=name,
        quantity=qty,
        unit=unit,
        hourly=p.usd * qty if p.unit == "hour" else None,
        monthly=monthly,
        monthly_min=None if low is None else p.usd * low * hours,
        monthly_max=None if high is None else p.usd * high * hours,
        unit_price=p.usd,
        price_unit=f"{unit.rstrip('s')}-{p.unit}",
        sources=(p.source,),
    )


def _usage(name: str, unit: str, note: str) -> Line:
    return Line(name=name, quantity=None, unit=unit, hourly=None, monthly=None, flags=(USAGE_BASED,), note=note)


def _region_vms(graph: Graph, region: object) -> tuple[int, int]:
    """The region's VMs at the floor and at the ceiling (its groups' autoscaler bounds): Cloud NAT's VM count."""
    low = high = 0
    for a in graph.resources:
        if a.type == AUTOSCALER and a.inputs.get("region") == region:
            policy = a.inputs.get("autoscalingPolicy") or {}
            low += int(policy.get("minReplicas") or 0)
            high += int(policy.get("maxReplicas") or 0)
    nodes = training.node_pool_vms(graph, region)  # a training cluster's GKE nodes use the NAT too
    cluster = slurm.cluster_vms(graph, region)  # and a Cluster Director cluster's nodes
    return low + nodes[0] + cluster[0], high + nodes[1] + cluster[1]


def service_lines(r: Resource, graph: Graph) -> tuple[Line, ...] | None:
    """The lines of a load balancer rule, a NAT gateway, a Cloud Armor policy, a secret, a bucket; None otherwise."""
    svc = gcp_services()
    if r.type == RULE:
        return (
            _service("Forwarding rule (first 5)", Decimal(1), "rules", svc["forwarding_rule"]),
            _usage("Data processed", "GiB", "$0.008 per GiB through the load balancer (gcp-lb-pricing)"),
        )
    if r.type == NAT:
        cap = int(svc["nat_cap_vms"].usd)
        low, high = (min(cap, v) for v in _region_vms(graph, r.inputs.get("region")))
        return (
            _service(
                "NAT gateway (per VM using it)", Decimal(low), "VMs", svc["nat_per_vm"], Decimal(low), Decimal(high)
            ),
            _service("NAT external IP address", Decimal(1), "addresses", svc["nat_ip"]),
            _usage("Data processed", "GiB", "$0.045 per GiB through the gateway (gcp-nat-pricing)"),
        )
    if r.type == ARMOR:
        rules = Decimal(len(r.inputs.get("rules") or []))
        return (
            _service("Security policy", Decimal(1), "policies", svc["armor_policy"]),
            _service("Rules", rules, "rules", svc["armor_rule"]),
            _usage("Requests evaluated", "million requests", "$0.75 per million (gcp-armor-pricing)"),
        )
    if r.type == SECRET:
        return (_service("Active secret version", Decimal(1), "versions", svc["secret_version"]),)
    if r.type == BUCKET:
        return (_usage("Storage", "GiB-months", "the model's weights in this region (Cloud Storage pricing)"),)
    if r.type == TRANSFER:
        return (
            _usage(
                "Data replicated",
                "GiB",
                "each release's bytes copied to this region: Cloud Storage's network rate between regions "
                "(cloud.google.com/storage/pricing) and any Storage Transfer Service charge "
                "(cloud.google.com/storage-transfer/pricing); no figure in the catalog: unknown, not zero",
            ),
        )
    return None


def _unknown(name: str, note: str) -> Line:
    return Line(
        name=name, quantity=None, unit="resources", hourly=None, monthly=None, flags=(NOT_IN_CATALOG,), note=note
    )


def mig_lines(r: Resource, graph: Graph) -> tuple[Line, ...]:
    """The group's VMs from its floor (min) to its ceiling (max): the whole VM at a published per-machine price,
    or cores and memory, and GPUs, at their SKUs apart (what `catalog refresh --cloud gcp` writes)."""
    template, scaler = _depends(graph, r, TEMPLATE), _scaled_by(graph, r)
    if template is None or scaler is None:
        return (_unknown("VMs", "the group's template or autoscaler is not in the graph"),)
    policy: dict[str, Any] = scaler.inputs.get("autoscalingPolicy") or {}
    low, high = int(policy.get("minReplicas") or 0), int(policy.get("maxReplicas") or 0)
    machine, region = template.inputs.get("machineType"), template.inputs.get("region")
    spot = (template.inputs.get("scheduling") or {}).get("provisioningModel") == "SPOT"
    book = gcp_book()
    info = book.machine(str(machine))
    purchase, kind = ("spot", "Spot ") if spot else ("on_demand", "")
    whole = book.whole_price(str(machine), str(region), purchase)
    if info is not None and whole is not None:  # a published per-machine price: one line, GPUs included
        return (_line(f"{kind}{machine} VMs ({info.gpus} NVIDIA L4 each)", low, "VMs", whole, low, high),)
    found = book.vm_price(str(machine), str(region), purchase)
    if info is None or found is None:
        return (_unknown("VMs", f"no {'Spot' if spot else 'on-demand'} price for {machine} in {region}"),)
    host, gpu = found
    return (
        _line(f"{kind}{machine} cores and memory", low, "VMs", host, low, high),
        _line(
            f"{kind}NVIDIA L4 GPUs ({info.gpus} per VM)",
            low * info.gpus,
            "GPUs",
            gpu,
            low * info.gpus,
            high * info.gpus,
        ),
    )


def price(r: Resource, graph: Graph, base: dict[str, Any]) -> ResourceCost:
    """One Google resource's cost (the cost stage's part for `gcp:` types)."""
    base = {**base, "where": where(r, graph)}
    if r.type in training.TYPES:  # a training cluster's own types (its node pools, GKE, Managed Lustre)
        return training.training_price(r, graph, base)
    if r.type in slurm.TYPES:  # the managed Slurm path's cluster
        return slurm.slurm_price(r, graph, base)
    if r.type == MIG:
        return ResourceCost(**base, lines=mig_lines(r, graph))
    lines = service_lines(r, graph)
    if lines is not None:
        return ResourceCost(**base, lines=lines)
    if r.type in FREE:
        return ResourceCost(**base, free=True, note=FREE[r.type])
    return ResourceCost(**base, lines=(_unknown("Resource", f"gpuinfra has no Google price for {r.type}"),))


def book(graph: Graph, catalog: object, usage: object) -> Callable[[Resource, dict[str, Any]], ResourceCost]:
    """The registry's part: the pricer of `graph`'s Google resources (Google's own catalog, no usage file)."""
    return lambda r, base: price(r, graph, base)


__all__ = ["FREE", "MIG", "book", "price", "where"]
