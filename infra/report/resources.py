"""Preview sections read from the resource graph: what will be created, grouped by component, and the
settings a reviewer checks first (instances, EFA, capacity mix, Lustre, load balancers)."""

from __future__ import annotations

from collections import Counter

from ..graph import Graph, Resource
from .format import number
from .model import ResourceOut, Section

ASG = "aws:autoscaling/group:Group"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
LOAD_BALANCER = "aws:lb/loadBalancer:LoadBalancer"
LISTENER = "aws:lb/listener:Listener"
ROUTE53_RECORD = "aws:route53/record:Record"
GA_ENDPOINT_GROUP = "aws:globalaccelerator/endpointGroup:EndpointGroup"


def resources_out(graph: Graph) -> list[ResourceOut]:
    """The graph's resources as report records (the engine's values are plain JSON: no re-validation)."""
    return [
        ResourceOut.model_construct(
            urn=r.urn,
            type=r.type,
            name=r.name,
            parent=r.parent,
            provider=r.provider,
            custom=r.custom,
            dependencies=list(r.dependencies),
            inputs=r.inputs,
        )
        for r in graph.resources
    ]


def component_label(graph: Graph, resource: Resource) -> str:
    component = graph.component_of(resource)
    return f"{component.type} {component.name}" if component else "(stack)"


def by_component(graph: Graph) -> Section:
    counts: Counter[tuple[str, str]] = Counter((component_label(graph, r), r.type) for r in graph.resources if r.custom)
    rows = [[group, rtype, str(n)] for (group, rtype), n in sorted(counts.items())]
    return Section(title=f"Resources ({sum(counts.values())})", columns=["component", "type", "count"], rows=rows)


def instance_types(graph: Graph, group: Resource) -> list[str]:
    """Instance types an Auto Scaling group launches: its overrides, else its launch template's type."""
    mixed = group.inputs.get("mixedInstancesPolicy") or {}
    overrides = (mixed.get("launchTemplate") or {}).get("overrides") or []
    types = [o["instanceType"] for o in overrides if o.get("instanceType")]
    if types:
        return types
    return [lt.inputs.get("instanceType", "?") for lt in graph.dependencies_of(group, LAUNCH_TEMPLATE)]


def capacity_mix(graph: Graph, group: Resource) -> str:
    mixed = group.inputs.get("mixedInstancesPolicy")
    if mixed:
        dist = mixed.get("instancesDistribution") or {}
        base = dist.get("onDemandBaseCapacity", 0)
        pct = dist.get("onDemandPercentageAboveBaseCapacity", 100)
        strategy = dist.get("spotAllocationStrategy", "lowest-price")
        above = "spot" if pct == 0 else f"{pct}% on-demand, rest spot"
        return f"{above} ({strategy})" if base == 0 else f"on-demand base {base}, then {above} ({strategy})"
    for lt in graph.dependencies_of(group, LAUNCH_TEMPLATE):
        if (lt.inputs.get("instanceMarketOptions") or {}).get("marketType") == "capacity-block":
            target = (lt.inputs.get("capacityReservationSpecification") or {}).get("capacityReservationTarget") or {}
            return f"capacity block {target.get('capacityReservationId', '?')}"
    return "on-demand"


def efa_count(graph: Graph, group: Resource) -> int:
    return max(
        (
            sum(1 for ni in lt.inputs.get("networkInterfaces") or [] if ni.get("interfaceType") in ("efa", "efa-only"))
            for lt in graph.dependencies_of(group, LAUNCH_TEMPLATE)
        ),
        default=0,
    )


def key_settings(graph: Graph) -> list[Section]:
    sections = []
    groups = graph.of_type(ASG)
    if groups:
        efa = {g.urn: efa_count(graph, g) for g in groups}
        fabric = any(efa.values()) or any(g.inputs.get("placementGroup") for g in groups)
        columns = ["group", "region", "instances", "min/desired/max", "capacity", "warm pool"]
        rows = []
        for g in groups:
            row = [
                g.name,
                region_of(graph, g),
                ", ".join(instance_types(graph, g)),
                f"{g.inputs.get('minSize')}/{g.inputs.get('desiredCapacity', '-')}/{g.inputs.get('maxSize')}",
                capacity_mix(graph, g),
                str((g.inputs.get("warmPool") or {}).get("minSize", "-")),
            ]
            if fabric:
                row += [str(efa[g.urn]), str(g.inputs.get("placementGroup") or "-")]
            rows.append(row)
        sections.append(
            Section(
                title="Compute groups",
                columns=columns + (["EFA per node", "placement group"] if fabric else []),
                rows=rows,
            )
        )
    file_systems = graph.of_type(LUSTRE)
    if file_systems:
        rows = []
        for fs in file_systems:
            gib = fs.inputs.get("storageCapacity", 0)
            per_tib = fs.inputs.get("perUnitStorageThroughput") or 200
            rows.append(
                [
                    fs.name,
                    str(fs.inputs.get("deploymentType")),
                    f"{gib:,} GiB",
                    f"{per_tib} MB/s/TiB",
                    f"{number(gib / 1024 * per_tib, 0)} MB/s",
                    "yes" if fs.inputs.get("kmsKeyId") else "FSx-managed",
                ]
            )
        sections.append(
            Section(
                title="Lustre",
                columns=["file system", "deployment", "capacity", "throughput", "aggregate", "KMS key"],
                rows=rows,
            )
        )
    balancers = graph.of_type(LOAD_BALANCER)
    if balancers:
        listeners = graph.of_type(LISTENER)
        rows = []
        for lb in balancers:
            ports = sorted(
                f"{listener.inputs.get('protocol')}:{listener.inputs.get('port')}"
                for listener in listeners
                if lb.urn in listener.dependencies
            )
            rows.append([region_of(graph, lb), lb.name, str(lb.inputs.get("loadBalancerType")), ", ".join(ports)])
        sections.append(
            Section(title="Load balancers", columns=["region", "load balancer", "type", "listeners"], rows=rows)
        )
    routing = [*graph.of_type(ROUTE53_RECORD), *graph.of_type(GA_ENDPOINT_GROUP)]
    if routing:
        sections.append(
            Section(
                title="Global routing",
                columns=["kind", "region", "name", "health check"],
                rows=[
                    [
                        "Route 53 latency",
                        str(r.inputs.get("setIdentifier")),
                        str(r.inputs.get("name")),
                        "yes" if r.inputs.get("healthCheckId") else "no",
                    ]
                    if r.type == ROUTE53_RECORD
                    else [
                        "Global Accelerator",
                        str(r.inputs.get("endpointGroupRegion")),
                        r.name,
                        str(r.inputs.get("healthCheckPath", "-")),
                    ]
                    for r in routing
                ],
            )
        )
    return sections


def region_of(graph: Graph, resource: Resource) -> str:
    provider = graph.provider_of(resource)
    return str(provider.inputs.get("region", "-")) if provider else "-"


__all__ = ["by_component", "capacity_mix", "efa_count", "instance_types", "key_settings", "region_of", "resources_out"]
