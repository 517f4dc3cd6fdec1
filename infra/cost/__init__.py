"""Price the resource graph from the catalog, like Infracost prices a plan (see DESIGN.md)."""

from __future__ import annotations

from .model import HOURS_PER_MONTH, Breakdown, Line, ResourceCost, Where
from .prices import Price, PriceBook
from .pricing import PRICERS, monthly_total, price_graph
from .usage import ResourceUsage, Usage, UsageFile, assumed_usage, load_usage_file

__all__ = [
    "HOURS_PER_MONTH",
    "PRICERS",
    "Breakdown",
    "Line",
    "Price",
    "PriceBook",
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
