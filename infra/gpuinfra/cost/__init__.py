"""Price the resource graph from the catalog, like Infracost prices a plan (see DESIGN.md)."""

from __future__ import annotations

from gpuinfra.cost.model import HOURS_PER_MONTH, Breakdown, Line, ResourceCost, Where
from gpuinfra.cost.pricing import monthly_total, price_graph
from gpuinfra.cost.usage import ResourceUsage, Usage, UsageFile, assumed_usage, load_usage_file

__all__ = [
    "HOURS_PER_MONTH",
    "Breakdown",
    "Line",
    "ResourceCost",
    "ResourceUsage",
    "Usage",
    "UsageFile",
    "Where",
    "assumed_usage",
    "load_usage_file",
    "monthly_total",
    "price_graph",
]
