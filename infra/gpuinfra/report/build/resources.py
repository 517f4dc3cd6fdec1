"""Preview sections read from the resource graph: what will be created, grouped by component, and the
settings a reviewer checks first (instances, EFA, capacity mix, Lustre, load balancers)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from gpuinfra.graph import Graph, Resource, tokens, views
from gpuinfra.report.format import number
from gpuinfra.report.model import Section

ROUTE53_RECORD = tokens.ROUTE53_RECORD


def component_label(graph: Graph, resource: Resource) -> str:
    component = graph.component_of(resource)
    return f"{component.type} {component.name}" if component else "(stack)"


def by_component(graph: Graph) -> Section:
    counts: Counter[tuple[str, str]] = Counter((component_label(graph, r), r.type) for r in graph.resources if r.custom)
    rows = [[group, rtype, str(n)] for (group, rtype), n in sorted(counts.items())]
    return Section(title=f"Resources ({sum(counts.values())})", columns=["component", "type", "count"], rows=rows)


def templates(graph: Graph, group: Resource) -> list[dict[str, Any]]:
    return [lt.inputs for lt in graph.dependencies_of(group, tokens.LAUNCH_TEMPLATE)]


def capacity_mix(graph: Graph, group: Resource) -> str:
    kind = views.market(templates(graph, group))
    if kind == "capacity-block":
        for lt in graph.dependencies_of(group, tokens.LAUNCH_TEMPLATE):
            target = (lt.inputs.get("capacityReservationSpecification") or {}).get("capacityReservationTarget") or {}
            return f"capacity block {target.get('capacityReservationId', '?')}"
    terms = views.distribution(group.inputs)
    if terms is None:
        return "spot" if kind == "spot" else "on-demand"
    base, pct = views.capacity_terms(group.inputs, kind)
    strategy = terms.get("spotAllocationStrategy", "lowest-price")
    above = "spot" if pct == 0 else f"{pct}% on-demand, rest spot"
    return f"{above} ({strategy})" if base == 0 else f"on-demand base {base}, then {above} ({strategy})"


def efa_count(graph: Graph, group: Resource) -> int:
    return max((views.efa_interfaces(lt) for lt in templates(graph, group)), default=0)


def pcs_node_groups(graph: Graph) -> list[Section]:
    """AWS PCS compute node groups: what each launches, how it is bought, its fabric, placement and image."""
    groups = graph.of_type(tokens.PCS_NODE_GROUP)
    if not groups:
        return []
    rows = []
    for g in groups:
        size = views.node_group_size(g.inputs)
        placement = [str((lt.get("placement") or {}).get("groupName") or "-") for lt in templates(graph, g)]
        rows.append(
            [
                g.name,
                region_of(graph, g),
                ", ".join(views.instance_types(g.inputs, templates(graph, g)) or ["?"]),
                f"{size[0]}/{size[1]}" if size else "?",
                str(g.inputs.get("purchaseOption") or "ONDEMAND"),
                str(efa_count(graph, g)),
                graph.shown(placement[0]) if placement else "-",
                graph.shown(g.inputs.get("amiId") or "(launch template)"),
            ]
        )
    columns = ["node group", "region", "instances", "min/max", "purchase", "EFA per node", "placement group", "AMI"]
    return [Section(title="PCS node groups", columns=columns, rows=rows)]


def key_settings(graph: Graph) -> list[Section]:
    sections = []
    groups = graph.of_type(tokens.ASG)
    if groups:
        efa = {g.urn: efa_count(graph, g) for g in groups}
        fabric = any(efa.values()) or any(g.inputs.get("placementGroup") for g in groups)
        columns = ["group", "region", "instances", "min/desired/max", "capacity", "warm pool"]
        rows = []
        for g in groups:
            row = [
                g.name,
                region_of(graph, g),
                ", ".join(views.instance_types(g.inputs, templates(graph, g)) or ["?"]),
                f"{g.inputs.get('minSize')}/{g.inputs.get('desiredCapacity', '-')}/{g.inputs.get('maxSize')}",
                capacity_mix(graph, g),
                str((g.inputs.get("warmPool") or {}).get("minSize", "-")),
            ]
            if fabric:
                row += [str(efa[g.urn]), graph.shown(g.inputs.get("placementGroup") or "-")]
            rows.append(row)
        sections.append(
            Section(
                title="Compute groups",
                columns=columns + (["EFA per node", "placement group"] if fabric else []),
                rows=rows,
            )
        )
    sections += pcs_node_groups(graph)
    file_systems = graph.of_type(tokens.LUSTRE)
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
    balancers = graph.of_type(tokens.LOAD_BALANCER)
    if balancers:
        listeners = graph.of_type(tokens.LISTENER)
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
    routing = [*graph.of_type(ROUTE53_RECORD), *graph.of_type(tokens.GA_ENDPOINT_GROUP)]
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
    return views.location(provider.inputs if provider else None).region or "-"


__all__ = ["by_component", "capacity_mix", "efa_count", "key_settings", "region_of"]
