"""Pricing a SageMaker endpoint configuration: its variants' instances at their most (graph/sagemaker.py). The
catalog holds EC2's prices, not SageMaker's (an ML instance is billed by SageMaker at its own rate), so each
variant is a line with its count and no price: the total is partial, and a budget judged on it cannot judge."""

from __future__ import annotations

from decimal import Decimal

from gpuinfra.clouds.aws.cost.lines import Ctx, not_in_catalog, unknown_input
from gpuinfra.cost.model import Line
from gpuinfra.graph import Resource
from gpuinfra.graph.sagemaker import SCALABLE_TARGET, variants


def price_endpoint_configuration(resource: Resource, ctx: Ctx) -> list[Line]:
    targets = [r.inputs for r in ctx.graph.of_type(SCALABLE_TARGET)]
    lines = []
    for v in variants(resource.inputs, targets):
        name = f"Instances ({v.name or 'variant'}, {v.instance_type or 'unknown type'}, at most)"
        if v.most is None or v.instance_type is None:
            lines.append(unknown_input(name, "instances", "the variant's instance type and count"))
        else:
            lines.append(not_in_catalog(name, "instances", f"SageMaker hosting on {v.instance_type}", Decimal(v.most)))
    return lines


__all__ = ["price_endpoint_configuration"]
