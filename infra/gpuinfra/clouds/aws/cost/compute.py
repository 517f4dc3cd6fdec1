"""Pricing compute: Auto Scaling groups (on-demand base, spot share, capacity blocks, volumes, warm pool),
single instances, EKS node groups, and AWS PCS clusters and compute node groups.

A group is priced at three counts: expected, min and max. Expected is, first found: the usage file's
`instances`; the planner's count in the group's `gpuinfra:expected-capacity` tag (components/base.py writes
it); desiredCapacity; minSize. Each count is split into on-demand and spot by plan/capacity.py's
`split_capacity`, the same function the planner and the quota policy use, so they never disagree on the mix.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeGuard

from gpuinfra.clouds.aws.cost.lines import Ctx, not_in_catalog, per_hour, per_month, quantity, unknown_input
from gpuinfra.cost.model import HOURS_PER_MONTH, Line
from gpuinfra.graph import Graph, Resource, is_known, tokens, views
from gpuinfra.plan.capacity import split_capacity

DEFAULT_WARM_STATE = "Stopped"


@dataclass(frozen=True)
class Counts:
    """Instance counts of a group: expected, fewest, most."""

    expected: int
    low: int
    high: int


def launch_template(graph: Graph, resource: Resource) -> Resource | None:
    """The launch template a group or instance launches from (its id is an output, so follow dependencies)."""
    found = graph.dependencies_of(resource, tokens.LAUNCH_TEMPLATE)
    return found[0] if found else None


def group_counts(
    resource: Resource, ctx: Ctx, low_key: str, high_key: str, desired_key: str, inputs: dict[str, Any]
) -> Counts | None:
    low, high, desired = (inputs.get(k) for k in (low_key, high_key, desired_key))
    if not (_known_int(low) and _known_int(high)):
        return None
    explicit = ctx.usage.value(resource, "instances")
    planned = planned_capacity(inputs)
    if explicit is not None:
        expected = int(explicit.amount)
    elif planned is not None:
        expected = min(max(planned, low), high)
    else:
        expected = desired if _known_int(desired) else low
    return Counts(expected, low, high)


def planned_capacity(inputs: dict[str, Any]) -> int | None:
    for tag in inputs.get("tags") or []:
        if isinstance(tag, dict) and tag.get("key") == tokens.EXPECTED_CAPACITY_TAG and str(tag.get("value")).isdigit():
            return int(tag["value"])
    return None


def hours(resource: Resource, ctx: Ctx) -> Decimal:
    value = ctx.usage.value(resource, "monthly_hours")
    return value.amount if value is not None else HOURS_PER_MONTH


def price_group(resource: Resource, ctx: Ctx) -> list[Line]:
    template = launch_template(ctx.graph, resource)
    templates = [template.inputs] if template else []
    types = views.instance_types(resource.inputs, templates)
    kind = views.market(templates)
    counts = group_counts(resource, ctx, "minSize", "maxSize", "desiredCapacity", resource.inputs)
    if not types:
        return [unknown_input("Instances", "instances", "the instance type")]
    if counts is None:
        return [unknown_input(f"Instances ({types[0]})", "instances", "minSize/maxSize")]
    note = f"priced as {types[0]}; the group may also launch {', '.join(types[1:])}" if len(types) > 1 else None
    terms = views.capacity_terms(resource.inputs, kind)
    lines = instance_lines(types[0], counts, ctx, kind, terms, hours(resource, ctx), note)
    lines += volume_lines(template, counts, ctx)
    lines += warm_pool_lines(resource, template, types[0], counts, ctx)
    return lines


def instance_lines(
    instance_type: str,
    counts: Counts,
    ctx: Ctx,
    kind: str | None,
    terms: tuple[int, int],
    run_hours: Decimal,
    note: str | None = None,
) -> list[Line]:
    """On-demand and spot lines (or one capacity-block line) for `counts` instances of one type, split by
    `terms` (on-demand base, on-demand percentage above it: graph.views.capacity_terms)."""
    region = ctx.where.region
    if kind == "capacity-block":
        price = ctx.book.capacity_block(instance_type, region)
        if price is None:
            return [
                not_in_catalog(
                    f"Capacity block ({instance_type})",
                    "instances",
                    f"a {instance_type} capacity block in {region}",
                    Decimal(counts.expected),
                )
            ]
        return [
            per_hour(
                f"Capacity block ({instance_type})",
                Decimal(counts.expected),
                "instances",
                price,
                low=Decimal(counts.low),
                high=Decimal(counts.high),
                hours=run_hours,
                note=note,
            )
        ]
    base, pct = terms
    split = {
        name: split_capacity(n, base, pct)
        for name, n in (("expected", counts.expected), ("low", counts.low), ("high", counts.high))
    }
    lines: list[Line] = []
    od = ctx.book.on_demand(instance_type, region)
    if any(s[0] for s in split.values()):
        name = f"Instances, on-demand ({instance_type})"
        lines.append(
            not_in_catalog(name, "instances", f"{instance_type} on-demand in {region}", Decimal(split["expected"][0]))
            if od is None
            else per_hour(
                name,
                Decimal(split["expected"][0]),
                "instances",
                od,
                low=Decimal(split["low"][0]),
                high=Decimal(split["high"][0]),
                hours=run_hours,
                note=note,
            )
        )
    if any(s[1] for s in split.values()):
        spot = ctx.book.spot(instance_type, region)
        if spot is None:
            lines.append(
                not_in_catalog(
                    f"Instances, spot ({instance_type})",
                    "instances",
                    f"{instance_type} in {region}",
                    Decimal(split["expected"][1]),
                )
            )
        else:
            price, discount = spot
            lines.append(
                per_hour(
                    f"Instances, spot ({instance_type}, {(discount * 100).normalize():f}% off)",
                    Decimal(split["expected"][1]),
                    "instances",
                    price,
                    low=Decimal(split["low"][1]),
                    high=Decimal(split["high"][1]),
                    hours=run_hours,
                    note=note,
                )
            )
    return lines


def volume_lines(template: Resource | None, counts: Counts, ctx: Ctx, label: str = "") -> list[Line]:
    """EBS volumes of each instance a launch template launches, times the instance counts."""
    if template is None:
        return []
    lines = []
    for mapping in template.inputs.get("blockDeviceMappings") or []:
        ebs = mapping.get("ebs") if isinstance(mapping, dict) else None
        if isinstance(ebs, dict):
            name = f"{label}EBS {mapping.get('deviceName', 'volume')}"
            lines.append(volume_line(name, ebs.get("volumeSize"), ebs.get("volumeType"), counts, ctx))
            lines += gp3_performance_lines(name, ebs, ebs.get("volumeType"), counts, ctx)
    return lines


GP3_BASELINE = {"throughput": (Decimal(125), "MiB/s"), "iops": (Decimal(3000), "IOPS")}
"""What every gp3 volume includes for its storage price (EBS user guide, "General Purpose SSD volumes": 3,000 IOPS
and 125 MiB/s); only what is provisioned above it is billed (catalog ebs/gp3_throughput, ebs/gp3_iops)."""


def gp3_performance_lines(name: str, ebs: dict[str, Any], volume_type: Any, counts: Counts, ctx: Ctx) -> list[Line]:
    """gp3 throughput and IOPS provisioned above the baseline, per volume times the instance counts. The inputs
    are `throughput` and `iops` on a launch template's ebs block, an instance's block devices and an EBS volume
    alike (pulumi-aws)."""
    if volume_type != "gp3":
        return []
    lines = []
    for prop, (baseline, unit) in GP3_BASELINE.items():
        value = ebs.get(prop)
        if value is None:
            continue  # not set: AWS provisions the baseline, which the storage price includes
        amount = quantity(value)
        label = f"{name} gp3 {prop} above {baseline:f} {unit}"
        if amount is None:
            lines.append(unknown_input(label, unit, prop))
            continue
        extra = max(amount - baseline, Decimal(0))
        if extra == 0:
            continue
        price = ctx.book.service(f"ebs/gp3_{prop}", ctx.where.region)
        label = f"{label} ({extra:f} x {counts.expected})"
        lines.append(
            not_in_catalog(label, unit, f"EBS gp3 {prop}", extra * counts.expected)
            if price is None
            else per_month(
                label, extra * counts.expected, unit, price, low=extra * counts.low, high=extra * counts.high
            )
        )
    return lines


def volume_line(name: str, size: Any, volume_type: Any, counts: Counts, ctx: Ctx) -> Line:
    gb = quantity(size)
    if gb is None or not _known_str(volume_type):
        return unknown_input(name, "GB", "volume size and type")
    price = ctx.book.service(f"ebs/{volume_type}", ctx.where.region)
    label = f"{name} ({volume_type}, {gb:f} GB x {counts.expected})"
    if price is None:
        return not_in_catalog(label, "GB", f"EBS {volume_type}", gb * counts.expected)
    return per_month(label, gb * counts.expected, "GB", price, low=gb * counts.low, high=gb * counts.high)


def warm_pool_lines(
    group: Resource, template: Resource | None, instance_type: str, counts: Counts, ctx: Ctx
) -> list[Line]:
    """A warm pool holds max(minSize, (maxGroupPreparedCapacity or maxSize) - desired) instances; stopped ones
    cost their volumes, running ones cost on-demand hours too."""
    pool = group.inputs.get("warmPool")
    if not isinstance(pool, dict):
        return []
    ceiling = pool.get("maxGroupPreparedCapacity")
    ceiling = ceiling if _known_int(ceiling) and ceiling >= 0 else counts.high
    floor = _int_or(pool.get("minSize"), 0)
    sizes = sorted(max(floor, ceiling - n) for n in (counts.expected, counts.low, counts.high))
    warm = Counts(max(floor, ceiling - counts.expected), sizes[0], sizes[-1])
    state = pool.get("poolState") or DEFAULT_WARM_STATE
    lines = volume_lines(template, warm, ctx, f"Warm pool ({str(state).lower()}) ")
    if state == "Running":
        lines += instance_lines(instance_type, warm, ctx, None, views.capacity_terms({}, None), HOURS_PER_MONTH)
    return lines


def price_instance(resource: Resource, ctx: Ctx) -> list[Line]:
    template = launch_template(ctx.graph, resource)
    itype = resource.inputs.get("instanceType")
    if not _known_str(itype) and template is not None:
        itype = template.inputs.get("instanceType")
    if not _known_str(itype):
        return [unknown_input("Instance", "instances", "instanceType")]
    one = Counts(1, 1, 1)
    kind = views.market([resource.inputs, *([template.inputs] if template else [])])
    lines = instance_lines(itype, one, ctx, kind, views.capacity_terms({}, kind), hours(resource, ctx))
    root = resource.inputs.get("rootBlockDevice")
    devices = [("EBS root", root)] if isinstance(root, dict) else []
    for device in resource.inputs.get("ebsBlockDevices") or []:
        if isinstance(device, dict):
            devices.append((f"EBS {device.get('deviceName', 'volume')}", device))
    for name, device in devices:
        volume_type = device.get("volumeType") or "gp3"
        lines.append(volume_line(name, device.get("volumeSize"), volume_type, one, ctx))
        lines += gp3_performance_lines(name, device, volume_type, one, ctx)
    return lines


def price_node_group(resource: Resource, ctx: Ctx) -> list[Line]:
    scaling = resource.inputs.get("scalingConfig") or {}
    template = launch_template(ctx.graph, resource)
    types = views.instance_types(resource.inputs, [template.inputs] if template else [])
    counts = group_counts(resource, ctx, "minSize", "maxSize", "desiredSize", scaling)
    if not types:
        return [unknown_input("Nodes", "instances", "instanceTypes")]
    if counts is None:
        return [unknown_input(f"Nodes ({types[0]})", "instances", "scalingConfig")]
    kind = views.market([], resource.inputs)
    lines = instance_lines(types[0], counts, ctx, kind, views.capacity_terms({}, kind), hours(resource, ctx))
    return lines + volume_lines(template, counts, ctx)


def price_pcs_node_group(resource: Resource, ctx: Ctx) -> list[Line]:
    """An AWS PCS compute node group: its instances (purchase option, min/max from scalingConfiguration), their
    volumes, and PCS's node management fee per instance-hour (unknown until the catalog cites a figure)."""
    template = launch_template(ctx.graph, resource)
    types = views.instance_types(resource.inputs, [template.inputs] if template else [])
    size = views.node_group_size(resource.inputs)
    if not types:
        return [unknown_input("Nodes", "instances", "instanceConfigs")]
    if size is None:
        return [unknown_input(f"Nodes ({types[0]})", "instances", "scalingConfiguration")]
    scaling = {"minSize": size[0], "maxSize": size[1], "desiredSize": size[1]}
    counts = group_counts(resource, ctx, "minSize", "maxSize", "desiredSize", scaling)
    assert counts is not None
    kind = views.market([], resource.inputs)
    run_hours = hours(resource, ctx)
    lines = instance_lines(types[0], counts, ctx, kind, views.capacity_terms({}, kind), run_hours)
    key = f"pcs/node_management/{types[0]}"
    fee = ctx.book.service(key, ctx.where.region)
    name = f"PCS node management ({types[0]})"
    qty = Decimal(counts.expected)
    lines.append(
        not_in_catalog(name, "instances", _why_unknown(ctx, key, f"AWS PCS node management for {types[0]}"), qty)
        if fee is None
        else per_hour(name, qty, "instances", fee, low=Decimal(counts.low), high=Decimal(counts.high), hours=run_hours)
    )
    return lines + volume_lines(template, counts, ctx)


def price_pcs_cluster(resource: Resource, ctx: Ctx) -> list[Line]:
    """An AWS PCS cluster: the controller, billed per hour by size (unknown until the catalog cites a figure)."""
    size = resource.inputs.get("size")
    if not _known_str(size):
        return [unknown_input("PCS controller", "clusters", "size")]
    key = f"pcs/controller/{size.lower()}"  # PCS sizes are SMALL, MEDIUM, LARGE; the catalog's keys are lower case
    found = ctx.book.service(key, ctx.where.region)
    name = f"PCS controller ({size})"
    return [
        not_in_catalog(name, "clusters", _why_unknown(ctx, key, key), Decimal(1))
        if found is None
        else per_hour(name, Decimal(1), "clusters", found)
    ]


def _why_unknown(ctx: Ctx, key: str, what: str) -> str:
    """What the line lacks, with the catalog's stated reason when it knows it lacks the price (services.yaml)."""
    stated = ctx.book.catalog.unknown_price(key)
    return f"{what} ({stated.reason})" if stated else what


def _known_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _known_str(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value) and is_known(value) and value != "[secret]"


def _int_or(value: Any, default: int) -> int:
    return value if _known_int(value) else default


__all__ = [
    "Counts",
    "gp3_performance_lines",
    "instance_lines",
    "launch_template",
    "price_group",
    "price_instance",
    "price_node_group",
    "price_pcs_cluster",
    "price_pcs_node_group",
    "volume_lines",
]
