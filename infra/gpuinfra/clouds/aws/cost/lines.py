"""Building cost lines: quantity x price, per hour or per month, with ranges, flags and provenance."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gpuinfra.clouds.aws.cost.prices import Price, PriceBook
from gpuinfra.cost.model import (
    ASSUMED_USAGE,
    HOURS_PER_MONTH,
    NOT_IN_CATALOG,
    UNKNOWN_INPUT,
    USAGE_BASED,
    Line,
    Where,
    unknown,
)
from gpuinfra.cost.usage import SPEC, Usage, Value
from gpuinfra.graph import Graph, Resource, is_known

HOURLY_PLACES = Decimal("0.000001")


@dataclass(frozen=True)
class Ctx:
    """What a pricer needs besides the resource."""

    graph: Graph
    book: PriceBook
    usage: Usage
    where: Where


def quantity(value: Any) -> Decimal | None:
    """A known number from the graph as Decimal; None for unknown, secret or missing."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not is_known(value):
        return None
    return Decimal(str(value))


def _exact(value: Decimal | None) -> Decimal | None:
    """Zero as plain 0 (not 0E-7): products with a zero count print and serialize cleanly."""
    return Decimal(0) if value is not None and value == 0 else value


def per_hour(
    name: str,
    qty: Decimal,
    unit: str,
    price: Price,
    *,
    low: Decimal | None = None,
    high: Decimal | None = None,
    hours: Decimal = HOURS_PER_MONTH,
    note: str | None = None,
    flags: tuple[str, ...] = (),
) -> Line:
    """A line priced per unit-hour: hourly = qty x rate, monthly = hourly x hours."""
    hourly = _exact(qty * price.usd)
    return Line(
        name=name,
        quantity=qty,
        unit=unit,
        hourly=hourly,
        monthly=_exact(qty * price.usd * hours),
        monthly_min=None if low is None else _exact(low * price.usd * hours),
        monthly_max=None if high is None else _exact(high * price.usd * hours),
        unit_price=price.usd,
        price_unit=f"{unit.rstrip('s')}-hour" if price.unit == "hour" else price.unit,
        flags=(*price.flags, *flags),
        sources=price.sources,
        as_of=price.as_of,
        note=note or price.note,
    )


def per_month(
    name: str,
    qty: Decimal,
    unit: str,
    price: Price,
    *,
    low: Decimal | None = None,
    high: Decimal | None = None,
    note: str | None = None,
    flags: tuple[str, ...] = (),
) -> Line:
    """A line priced per unit-month (GB-month, key-month): monthly = qty x price, hourly = monthly / 730."""
    monthly = _exact(qty * price.usd)
    assert monthly is not None
    return Line(
        name=name,
        quantity=qty,
        unit=unit,
        hourly=_exact((monthly / HOURS_PER_MONTH).quantize(HOURLY_PLACES)),
        monthly=monthly,
        monthly_min=None if low is None else _exact(low * price.usd),
        monthly_max=None if high is None else _exact(high * price.usd),
        unit_price=price.usd,
        price_unit=price.unit,
        flags=(*price.flags, *flags),
        sources=price.sources,
        as_of=price.as_of,
        note=note or price.note,
    )


def not_in_catalog(name: str, unit: str, what: str, qty: Decimal | None = None) -> Line:
    return unknown(name, unit, NOT_IN_CATALOG, f"no catalog price for {what}", qty)


def unknown_input(name: str, unit: str, prop: str) -> Line:
    return unknown(name, unit, UNKNOWN_INPUT, f"{prop} is not known until the resource is created")


def usage_line(
    resource: Resource, ctx: Ctx, field: str, name: str, unit: str, price: Price | None, price_name: str
) -> Line:
    """A usage-priced line: the usage file or the spec supplies the quantity, else it is unknown."""
    value: Value | None = ctx.usage.value(resource, field)
    if price is None:
        return not_in_catalog(name, unit, price_name, value.amount if value else None)
    if value is None:
        return unknown(
            name,
            unit,
            USAGE_BASED,
            f"depends on usage: set {field} for {resource.name} in a usage file (at {price.usd} USD per {price.unit})",
        )
    flags = (ASSUMED_USAGE,) if value.origin == SPEC else ()
    if price.unit == "hour" or price.unit.endswith("-hour"):
        return per_hour(name, value.amount, unit, price, note=value.note, flags=flags)
    return per_month(name, value.amount, unit, price, note=value.note, flags=flags)


__all__ = [
    "HOURLY_PLACES",
    "Ctx",
    "not_in_catalog",
    "per_hour",
    "per_month",
    "quantity",
    "unknown",
    "unknown_input",
    "usage_line",
]
