"""Cloud Billing Catalog SKUs down to the rates a VM is billed at: per region and purchase (on-demand, Spot), the
machine series' core (per vCPU-hour) and RAM (per GiB-hour) rates and its GPU's (per GPU-hour), each dated by the
SKU's own pricing.

The Sku shape is the API's (cloudbilling v1 Discovery document; cloud.google.com/billing/docs/reference/rest/v1/
services.skus/list): `category.{resourceFamily, resourceGroup, usageType}` (usageType OnDemand, Preemptible for Spot
VMs, Commit1Yr...), `serviceRegions`, and `pricingInfo`, "a timeline of pricing info for this SKU in chronological
order", each with `effectiveTime` and `pricingExpression.{usageUnit, tieredRates[{startUsageAmount, unitPrice:
Money{currencyCode, units, nanos}}]}`. Which SKUs are a series' cores, RAM and GPU is catalog data (g2.yaml
`billing`): their descriptions run "G2 Instance Core running in Iowa", "Spot Preemptible G2 Instance Ram running in
Virginia", "Nvidia L4 GPU attached to Spot Preemptible VMs running in Iowa" (SKU descriptions as hail-is/hail's
batch pricing lists them), so a SKU is matched by its description's marker and its serviceRegions, never by the
place name in the description. Custom, sole-tenancy, commitment and reserved SKUs are not a VM's list price
(SkyPilot's fetch_gcp.py prunes the same)."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from gpuinfra.errors import InputError

PURCHASES = {"OnDemand": "on_demand", "Preemptible": "spot"}
UNITS = {"core": "h", "ram": "GiBy.h", "gpu": "h"}
"""The usageUnit each part is billed in (per hour; RAM per GiB-hour): a SKU in another unit is not read."""
NOT_LIST_PRICE = ("custom", "sole tenancy", "commitment", "reserved", "premium")
NANOS = Decimal(1_000_000_000)


@dataclass(frozen=True)
class Rate:
    usd: Decimal
    """Per usage unit: a vCPU-hour, a GiB-hour or a GPU-hour."""
    as_of: datetime.date
    """The date of the pricing in effect (its effectiveTime, UTC)."""
    sku: str


@dataclass(frozen=True)
class Markers:
    """What a series' SKU descriptions contain (g2.yaml `billing`): "G2 Instance Core", "G2 Instance Ram",
    "Nvidia L4 GPU"."""

    core: str
    ram: str
    gpu: str

    def part(self, description: str) -> str | None:
        for name in ("core", "ram", "gpu"):
            if getattr(self, name).lower() in description.lower():
                return name
        return None


def money(value: Any, where: str) -> Decimal:
    """A Money (units: int64 as a string, nanos: int32) in USD."""
    if not isinstance(value, Mapping) or value.get("currencyCode", "USD") != "USD":
        raise InputError.single(f"{where}: the unit price is not a USD Money", hint="list the SKUs in USD")
    try:
        return Decimal(str(value.get("units") or 0)) + Decimal(int(value.get("nanos") or 0)) / NANOS
    except (InvalidOperation, TypeError, ValueError) as exc:
        raise InputError.single(f"{where}: unit price {dict(value)!r} is not a Money") from exc


def effective(value: Any, where: str) -> datetime.date:
    try:
        stamp = datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError as exc:
        raise InputError.single(f"{where}: effectiveTime {value!r} is not an RFC 3339 timestamp") from exc
    return stamp.astimezone(datetime.UTC).date()


def _current(sku: Mapping[str, Any], part: str, where: str) -> tuple[Decimal, datetime.date] | None:
    """The SKU's latest pricing: one rate in the part's unit, dated (None: another unit, not a VM's rate)."""
    timeline = sku.get("pricingInfo") or []
    if not timeline:
        raise InputError.single(f"{where}: no pricingInfo")
    info = timeline[-1]
    expression = info.get("pricingExpression") or {}
    if expression.get("usageUnit") != UNITS[part]:
        return None
    tiers = expression.get("tieredRates") or []
    if len(tiers) != 1:
        raise InputError.single(
            f"{where}: {len(tiers)} tiered rates",
            hint="a VM's core, RAM and GPU SKUs have one rate; gpuinfra does not price tiers",
        )
    return money(tiers[0].get("unitPrice"), where), effective(info.get("effectiveTime"), where)


def _keep(found: dict[tuple[str, str, str], Rate], key: tuple[str, str, str], rate: Rate, where: str) -> None:
    """One rate per part, region and purchase: two SKUs at two prices mean the markers no longer single one out."""
    seen = found.get(key)
    if seen is not None and seen.usd != rate.usd:
        raise InputError.single(
            f"{where}: {key[0]} in {key[1]} ({key[2]}) has two rates, {seen.usd} ({seen.sku}) and {rate.usd}",
            hint="the description markers in clouds/gcp/catalog/data/g2.yaml `billing` match more than one SKU",
        )
    if seen is None or rate.as_of < seen.as_of:
        found[key] = rate


def rates(skus: Iterable[Any], markers: Markers, regions: set[str], where: str) -> dict[tuple[str, str, str], Rate]:
    """(part, region, purchase) -> the rate, for the catalog's regions."""
    found: dict[tuple[str, str, str], Rate] = {}
    for sku in skus:
        if not isinstance(sku, Mapping):
            raise InputError.single(f"{where}: a SKU is not a JSON object")
        description = str(sku.get("description", ""))
        category = sku.get("category") or {}
        purchase = PURCHASES.get(category.get("usageType", ""))
        part = markers.part(description)
        if (
            purchase is None
            or part is None
            or category.get("resourceFamily") != "Compute"
            or any(word in description.lower() for word in NOT_LIST_PRICE)
        ):
            continue
        here = f"{where}: SKU {sku.get('skuId')} ({description})"
        current = _current(sku, part, here)
        if current is None:
            continue
        for region in set(sku.get("serviceRegions") or ()) & regions:
            _keep(found, (part, region, purchase), Rate(current[0], current[1], str(sku.get("skuId"))), here)
    return found


__all__ = ["Markers", "Rate", "effective", "money", "rates"]
