"""What pricing a graph produces: cost lines per resource, summed per stack. Plain frozen data.

Money is Decimal and exact (monthly = hourly x 730 or quantity x monthly unit price); None means unknown,
and an unknown line is left out of every sum and listed instead (Infracost's "usage-based / not found"). A sum
that leaves out a line whose price is unknown (not one waiting for usage) is partial: a lower bound, "at least".
Every line carries the catalog entries it used (source ids, as-of dates) and flags for doubtful figures.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property

from gpuinfra.graph.views import Location

HOURS_PER_MONTH = Decimal(730)
"""AWS's and Infracost's month: 730 hours."""

# Flags: why a figure deserves a second look.
UNCONFIRMED = "unconfirmed"
"""The catalog entry is marked confirmed: false (single source, or stale)."""
REGION_FALLBACK = "region-fallback"
"""A us-east-1 service price used for another region."""
SPOT_ESTIMATE = "spot-estimate"
"""Spot priced at the catalog's default discount (no observation for the type or family)."""
USAGE_BASED = "usage-based"
"""Depends on usage nobody supplied: unknown until a usage file says."""
ASSUMED_USAGE = "assumed-usage"
"""Usage derived from the spec (e.g. checkpoint size x retention), not measured."""
UNKNOWN_INPUT = "unknown-input"
"""An input the price depends on is not known until apply (Pulumi's unknown sentinel)."""
NOT_IN_CATALOG = "not-in-catalog"
"""The catalog has no price for this (type, region, tier): unknown, never zero."""


@dataclass(frozen=True, slots=True)
class Line:
    """One priced dimension of a resource, like an Infracost cost component."""

    name: str
    quantity: Decimal | None
    unit: str
    hourly: Decimal | None
    monthly: Decimal | None
    monthly_min: Decimal | None = None
    monthly_max: Decimal | None = None
    unit_price: Decimal | None = None
    price_unit: str = ""
    flags: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    as_of: tuple[datetime.date, ...] = ()
    note: str | None = None

    @property
    def low(self) -> Decimal | None:
        return self.monthly if self.monthly_min is None else self.monthly_min

    @property
    def price_unknown(self) -> bool:
        """Unpriced for want of a price (not in the catalog, an input unknown until apply), not for want of
        usage: the resource costs something nobody here can say, so a total without it is only a lower bound."""
        return self.monthly is None and USAGE_BASED not in self.flags

    @property
    def high(self) -> Decimal | None:
        return self.monthly if self.monthly_max is None else self.monthly_max


Where = Location
"""Where a resource is billed: its provider's region and account (graph.views.location)."""


@dataclass(frozen=True, slots=True)
class ResourceCost:
    urn: str
    type: str
    name: str
    component: str
    where: Where
    lines: tuple[Line, ...] = ()
    free: bool = False
    note: str | None = None

    @property
    def key(self) -> str:
        return f"{self.type}::{self.name}"

    def _total(self, attr: str) -> Decimal | None:
        """Sum of the known lines: a known zero when free, None when nothing is known."""
        return Decimal(0) if self.free else _sum(getattr(line, attr) for line in self.lines)

    @property
    def monthly(self) -> Decimal | None:
        return self._total("monthly")

    @property
    def monthly_min(self) -> Decimal | None:
        return self._total("low")

    @property
    def monthly_max(self) -> Decimal | None:
        return self._total("high")

    @property
    def hourly(self) -> Decimal | None:
        return self._total("hourly")

    @property
    def unpriced(self) -> tuple[Line, ...]:
        return tuple(line for line in self.lines if line.monthly is None)

    @property
    def partial(self) -> bool:
        """A line's price is unknown: the resource costs at least its figure."""
        return any(line.price_unknown for line in self.lines)

    @property
    def priced(self) -> bool:
        """At least one line has a price, or the resource is known to be free."""
        return self.free or any(line.monthly is not None for line in self.lines)


@dataclass(frozen=True)
class Breakdown:
    """The priced graph of one stack."""

    stack: str
    resources: tuple[ResourceCost, ...]
    usage_source: str | None = None
    notes: tuple[str, ...] = ()
    _index: dict[str, ResourceCost] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._index.update((r.key, r) for r in self.resources)

    def get(self, key: str) -> ResourceCost | None:
        return self._index.get(key)

    # Totals are summed once (a frozen breakdown never changes): a review reads each side's three per stack
    # and again for the whole, over two hundred stacks.
    @cached_property
    def monthly(self) -> Decimal:
        return _sum(r.monthly for r in self.resources) or Decimal(0)

    @cached_property
    def monthly_min(self) -> Decimal:
        return _sum(r.monthly_min for r in self.resources) or Decimal(0)

    @cached_property
    def monthly_max(self) -> Decimal:
        return _sum(r.monthly_max for r in self.resources) or Decimal(0)

    @cached_property
    def hourly(self) -> Decimal:
        return _sum(r.hourly for r in self.resources) or Decimal(0)

    def lines(self) -> Iterable[tuple[ResourceCost, Line]]:
        return ((r, line) for r in self.resources for line in r.lines)

    def unpriced(self) -> list[tuple[ResourceCost, Line]]:
        return [(r, line) for r, line in self.lines() if line.monthly is None]

    def unknown_prices(self) -> list[tuple[ResourceCost, Line]]:
        """The unpriced lines whose price itself is unknown (Line.price_unknown)."""
        return [(r, line) for r, line in self.lines() if line.price_unknown]

    def unknown_keys(self) -> tuple[str, ...]:
        """Each line whose price is unknown as '<type>: <line> (<resource>)': what a budget cannot add up, in the
        form a pack config accepts by prefix (`budget-within-account.accepted_unpriced`)."""
        return tuple(unknown_key(r, line) for r, line in self.unknown_prices())

    @cached_property
    def partial(self) -> bool:
        """The totals leave out a line whose price is unknown: each is at least its figure, not exactly it.
        (Usage nobody supplied is left out too, as Infracost does, and listed; it does not make a total partial.)"""
        return any(line.price_unknown for _, line in self.lines())

    def flagged(self) -> list[tuple[ResourceCost, Line]]:
        return [(r, line) for r, line in self.lines() if line.flags and line.monthly is not None]

    def as_of(self) -> tuple[datetime.date, datetime.date] | None:
        """Oldest and newest catalog date behind the priced lines."""
        dates = [d for _, line in self.lines() if line.monthly is not None for d in line.as_of]
        return (min(dates), max(dates)) if dates else None

    def by(self, dimension: str) -> dict[str, tuple[Decimal, Decimal, Decimal]]:
        """Monthly (expected, min, max) summed by 'component', 'region', 'account' or 'type'."""
        out: dict[str, list[Decimal]] = {}
        for r in self.resources:
            if r.monthly is None:
                continue
            key = _dimension(r, dimension)
            if r.free and key.startswith("(unknown"):
                continue  # a free resource outside any cloud (a random password) adds no "(unknown region)" row
            acc = out.setdefault(key, [Decimal(0), Decimal(0), Decimal(0)])
            acc[0] += r.monthly
            acc[1] += r.monthly_min or Decimal(0)
            acc[2] += r.monthly_max or Decimal(0)
        return {k: (v[0], v[1], v[2]) for k, v in sorted(out.items())}


def unknown_key(r: ResourceCost, line: Line) -> str:
    return f"{r.type}: {line.name} ({r.name})"


class MaxCost(Decimal):
    """A maximum monthly cost (USD) that also says which lines it leaves out for want of a price (`unknown`,
    Breakdown.unknown_keys): a Decimal everywhere a figure is read, a lower bound where `unknown` is not empty."""

    unknown: tuple[str, ...] = ()

    @classmethod
    def of(cls, value: Decimal, unknown: tuple[str, ...]) -> MaxCost:
        out = cls(value)
        out.unknown = unknown
        return out


def _dimension(r: ResourceCost, dimension: str) -> str:
    if dimension == "component":
        return r.component
    if dimension == "region":
        return r.where.region or "(unknown region)"
    if dimension == "account":
        return r.where.account or "(unknown account)"
    if dimension == "type":
        return r.type
    raise ValueError(f"unknown dimension {dimension!r}")


def _sum(values: Iterable[Decimal | None]) -> Decimal | None:
    """Sum of the known values; None when none is known (unknown is not zero)."""
    total: Decimal | None = None
    for v in values:
        if v is not None:
            total = v if total is None else total + v
    return total


def unknown(name: str, unit: str, why: str, note: str, qty: Decimal | None = None) -> Line:
    """A line whose price is unknown: printed as '-', left out of totals, listed as unpriced."""
    return Line(name=name, quantity=qty, unit=unit, hourly=None, monthly=None, flags=(why,), note=note)


__all__ = [
    "ASSUMED_USAGE",
    "HOURS_PER_MONTH",
    "NOT_IN_CATALOG",
    "REGION_FALLBACK",
    "SPOT_ESTIMATE",
    "UNCONFIRMED",
    "UNKNOWN_INPUT",
    "USAGE_BASED",
    "Breakdown",
    "Line",
    "MaxCost",
    "ResourceCost",
    "Where",
    "unknown",
    "unknown_key",
]
