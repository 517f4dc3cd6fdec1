"""Small resource graphs built by hand, for cost and diff tests that need a shape the examples do not have
(a region without prices, a capacity block, an unknown input), and a large graph for timing."""

from __future__ import annotations

import json
from typing import Any

from gpuinfra.graph import Graph, Resource

STACK = "s"
PROJECT = "gpuinfra"


def urn(type_: str, name: str, stack: str = STACK) -> str:
    return f"urn:pulumi:{stack}::{PROJECT}::{type_}::{name}"


def provider(region: str = "us-east-1", account: str = "111111111111", name: str = "aws") -> Resource:
    return Resource(
        urn("pulumi:providers:aws", name),
        "pulumi:providers:aws",
        name,
        custom=True,
        inputs={"region": region, "allowedAccountIds": json.dumps([account])},
    )


def res(
    type_: str, name: str, prov: Resource | None = None, deps: tuple[Resource, ...] = (), /, **inputs: Any
) -> Resource:
    return Resource(
        urn(type_, name),
        type_,
        name,
        provider=prov.urn if prov else None,
        dependencies=tuple(d.urn for d in deps),
        inputs=inputs,
    )


def group(
    name: str,
    prov: Resource,
    instance_type: str,
    nodes: int,
    on_demand_base: int | None = None,
    pct_above_base: int = 0,
    market: str | None = None,
    **extra: Any,
) -> tuple[Resource, Resource]:
    """A launch template (with a 512 GB gp3 root volume) and an Auto Scaling group of `nodes` instances;
    with `on_demand_base` the group has a mixed instances policy."""
    lt_inputs: dict[str, Any] = {
        "instanceType": instance_type,
        "blockDeviceMappings": [{"deviceName": "/dev/sda1", "ebs": {"volumeSize": 512, "volumeType": "gp3"}}],
    }
    if market:
        lt_inputs["instanceMarketOptions"] = {"marketType": market}
    lt = res("aws:ec2/launchTemplate:LaunchTemplate", f"{name}-lt", prov, **lt_inputs)
    inputs: dict[str, Any] = {"minSize": nodes, "maxSize": nodes, "desiredCapacity": nodes, **extra}
    if on_demand_base is not None:
        inputs["mixedInstancesPolicy"] = {
            "instancesDistribution": {
                "onDemandBaseCapacity": on_demand_base,
                "onDemandPercentageAboveBaseCapacity": pct_above_base,
            },
            "launchTemplate": {"overrides": [{"instanceType": instance_type}]},
        }
    return lt, res("aws:autoscaling/group:Group", f"{name}-asg", prov, (lt,), **inputs)


def graph(*resources: Resource, stack: str = STACK) -> Graph:
    return Graph.of(stack, PROJECT, resources)


def copies(template: Graph, n: int) -> Graph:
    """`n` renamed copies of a graph's resources (URNs, names, references), one stack: a large graph."""
    out = []
    for i in range(n):
        suffix = f"-{i:04d}"

        def rename(u: str | None, suffix: str = suffix) -> str | None:
            return None if u is None or u.endswith(":Stack::gpuinfra-" + template.stack) else u + suffix

        for r in template.resources:
            if r.type == "pulumi:pulumi:Stack" and i:
                continue
            out.append(
                Resource(
                    rename(r.urn) or r.urn,
                    r.type,
                    r.name + suffix,
                    rename(r.parent),
                    rename(r.provider),
                    r.custom,
                    tuple(rename(d) or d for d in r.dependencies),
                    r.inputs,
                )
            )
    return Graph.of(template.stack, template.project, out)


__all__ = ["copies", "graph", "group", "provider", "res", "urn"]
