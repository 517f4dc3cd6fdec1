"""Catalog lookups for pricing, each answer carrying its sources, dates and doubt flags.

Service prices in the catalog are us-east-1 figures; elsewhere they are used and flagged REGION_FALLBACK.
EC2 prices are per region and never fall back: a missing (type, region) row is unknown.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal

from gpuinfra.catalog.models import ServicePrice, SpotDefault
from gpuinfra.cost.free import FreeTypes
from gpuinfra.cost.model import REGION_FALLBACK, SPOT_ESTIMATE, UNCONFIRMED

SERVICE_REGION = "us-east-1"
"""The region services.yaml prices are quoted for."""


@dataclass(frozen=True, slots=True)
class Price:
    usd: Decimal
    unit: str
    flags: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    as_of: tuple[datetime.date, ...] = ()
    note: str | None = None


class PriceBook(FreeTypes):
    """The catalog, asked the way a pricer asks: per (thing, region), with provenance (and, as every cloud's
    book, which types cost nothing: FreeTypes)."""

    def on_demand(self, instance_type: str, region: str | None) -> Price | None:
        row = self.catalog.on_demand(instance_type, region) if region else None
        if row is None:
            return None
        return Price(row.usd_per_hour, "hour", (), (row.source,), dated(row.as_of))

    def spot(self, instance_type: str, region: str | None) -> tuple[Price, Decimal] | None:
        """Spot price at the catalog's discount for the type (or family) in the region, and the discount."""
        od = self.on_demand(instance_type, region)
        if od is None or region is None:
            return None
        found = self.catalog.spot_discount(instance_type, region)
        flags = (SPOT_ESTIMATE,) if isinstance(found.entry, SpotDefault) else ()
        usd = od.usd * (Decimal(1) - found.discount)
        return (
            Price(usd, "hour", flags, (*od.sources, found.entry.source), (*od.as_of, *dated(found.entry.as_of))),
            found.discount,
        )

    def capacity_block(self, instance_type: str, region: str | None) -> Price | None:
        """Capacity Block rate: listed per type and region, no fallback."""
        row = self.catalog.service(f"ec2_capacity_block/{instance_type}/{region}") if region else None
        return None if row is None else _service_price(row, ())

    def service(self, key: str, region: str | None) -> Price | None:
        row = self.catalog.service(key)
        if row is None:
            return None
        return _service_price(row, () if region == SERVICE_REGION else (REGION_FALLBACK,))


def _service_price(row: ServicePrice, flags: tuple[str, ...]) -> Price:
    if not row.confirmed:
        flags = (*flags, UNCONFIRMED)
    return Price(row.usd, row.unit, flags, (row.source,), dated(row.as_of), row.note)


def dated(as_of: datetime.date | None) -> tuple[datetime.date, ...]:
    """A figure's date for the "prices as of" range; a source that gives no date adds none."""
    return () if as_of is None else (as_of,)


__all__ = ["SERVICE_REGION", "Price", "PriceBook", "dated"]
