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


def resources_out(graph: Graph) -> list[ResourceOut]:
    return [
        ResourceOut(urn=r.urn, type=r.type, name=r.name, parent=r.parent, provider=r.provider, custom=r.custom,
                    dependencies=list(r.dependencies), inputs=r.inputs)
        for r in graph.resources
    ]


def component_label(graph: Graph, resource: Resource) -> str:
    component = graph.component_of(resource)
    return f"{component.type} {component.name}" if component else "(stack)"


def by_component(graph: Graph) -> Section:
    counts: Counter[tuple[str, str]] = Counter(
        (component_label(graph, r), r.type) for r in graph.resources if r.custom)
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
        return (f"on-demand base {dist.get('onDemandBaseCapacity', 0)}, "
                f"{dist.get('onDemandPercentageAboveBaseCapacity', 100)}% on-demand above it, spot "
                f"{dist.get('spotAllocationStrategy', 'lowest-price')}")
    for lt in graph.dependencies_of(group, LAUNCH_TEMPLATE):
        if (lt.inputs.get("instanceMarketOptions") or {}).get("marketType") == "capacity-block":
            target = (lt.inputs.get("capacityReservationSpecification") or {}).get("capacityReservationTarget") or {}
            return f"capacity block {target.get('capacityReservationId', '?')}"
    return "on-demand"


def efa_count(graph: Graph, group: Resource) -> int:
    return max((sum(1 for ni in lt.inputs.get("networkInterfaces") or []
                    if ni.get("interfaceType") in ("efa", "efa-only"))
                for lt in graph.dependencies_of(group, LAUNCH_TEMPLATE)), default=0)


def key_settings(graph: Graph) -> list[Section]:
    sections = []
    groups = graph.of_type(ASG)
    if groups:
        sections.append(Section(
            title="Compute groups",
            columns=["group", "instances", "min/desired/max", "capacity", "EFA per node", "placement group"],
            rows=[[g.name, ", ".join(instance_types(graph, g)),
                   f"{g.inputs.get('minSize')}/{g.inputs.get('desiredCapacity', '-')}/{g.inputs.get('maxSize')}",
                   capacity_mix(graph, g), str(efa_count(graph, g)), str(g.inputs.get("placementGroup") or "-")]
                  for g in groups],
        ))
    file_systems = graph.of_type(LUSTRE)
    if file_systems:
        rows = []
        for fs in file_systems:
            gib = fs.inputs.get("storageCapacity", 0)
            per_tib = fs.inputs.get("perUnitStorageThroughput") or 200
            rows.append([fs.name, str(fs.inputs.get("deploymentType")), f"{gib:,} GiB", f"{per_tib} MB/s/TiB",
                         f"{number(gib / 1024 * per_tib, 0)} MB/s", "yes" if fs.inputs.get("kmsKeyId") else "FSx-managed"])
        sections.append(Section(title="Lustre", columns=["file system", "deployment", "capacity", "throughput",
                                                         "aggregate", "KMS key"], rows=rows))
    return sections


__all__ = ["by_component", "capacity_mix", "efa_count", "instance_types", "key_settings", "resources_out"]
