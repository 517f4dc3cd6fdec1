"""Read AWS Price List bulk files for AmazonEC2: the service Region index, and a Region's price list file in either
of AWS's formats, down to the Linux on-demand hourly price of each instance type.

The formats are AWS's (AWS Billing User Guide, "Reading the price list files"):
- Region index: `{"formatVersion", "publicationDate", "regions": {code: {"regionCode", "currentVersionUrl"}}}`,
  `currentVersionUrl` relative to the host and ending in index.json (the CSV sits beside it as index.csv).
- JSON price list: `publicationDate`, `products` keyed by SKU (`productFamily`, `attributes`), and
  `terms.OnDemand[sku][offerTermCode].priceDimensions[rateCode]` with `unit` and `pricePerUnit.USD`.
- CSV price list: five metadata rows (FormatVersion, Disclaimer, Publication Date, Version, OfferCode), then a
  header row (SKU, OfferTermCode, RateCode, TermType, ..., Unit, PricePerUnit, Currency, ..., Product Family,
  ..., Instance Type, ..., Instance Family, ..., Tenancy, Operating System, License Model, ..., operation,
  CapacityStatus, ..., Pre Installed S/W, ..., Region Code), one row per price dimension.
"""

from __future__ import annotations

import csv
import datetime
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, TextIO

from gpuinfra.errors import InputError

LINUX_ON_DEMAND = {
    "productFamily": "Compute Instance",
    "operatingSystem": "Linux",
    "tenancy": "Shared",
    "preInstalledSw": "NA",
    "capacitystatus": "Used",
}
"""The product a plain Linux instance bills as: shared tenancy, no pre-installed software, and capacitystatus
"Used" (the other values, AllocatedCapacityReservation and UnusedCapacityReservation, price reservations)."""
LICENSE = ("licenseModel", "No License required")
OPERATION = ("operation", "RunInstances")
"""RunInstances with no suffix is Linux/UNIX; RunInstances:0002 and the like are other platforms."""
ACCELERATED_FAMILIES = frozenset({"GPU instance", "Machine Learning ASIC Instances"})
"""The `instanceFamily` values of EC2's NVIDIA GPU and Trainium/Inferentia types in the price list."""
CSV_COLUMNS = {
    "productFamily": "Product Family",
    "operatingSystem": "Operating System",
    "tenancy": "Tenancy",
    "preInstalledSw": "Pre Installed S/W",
    "capacitystatus": "CapacityStatus",
    "licenseModel": "License Model",
    "operation": "operation",
    "instanceType": "Instance Type",
    "instanceFamily": "Instance Family",
    "regionCode": "Region Code",
}
"""The JSON attribute each CSV column carries (the CSV header names)."""


@dataclass(frozen=True)
class RegionFile:
    region: str
    path: str
    """Relative to the pricing host: the Region's current price list file (JSON)."""


@dataclass(frozen=True)
class OfferPrice:
    instance_type: str
    region: str
    usd_per_hour: Decimal | None
    """None: the file lists the product with no positive hourly USD price (unknown, never zero)."""
    accelerated: bool


@dataclass(frozen=True)
class OfferFile:
    region: str
    published: datetime.date
    prices: tuple[OfferPrice, ...]


def publication_date(value: Any, where: str) -> datetime.date:
    """`publicationDate` / "Publication Date": an ISO 8601 UTC timestamp, e.g. 2023-03-28T23:47:21Z."""
    try:
        return datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00")).date()
    except ValueError as exc:
        raise InputError.single(f"{where}: publication date {value!r} is not an ISO 8601 timestamp") from exc


def region_files(index: Any, where: str) -> tuple[datetime.date, list[RegionFile]]:
    if not isinstance(index, dict) or not isinstance(index.get("regions"), dict):
        raise InputError.single(f"{where}: not an AWS Price List Region index (no `regions` object)")
    files = [
        RegionFile(code, str(entry["currentVersionUrl"]))
        for code, entry in sorted(index["regions"].items())
        if isinstance(entry, dict) and entry.get("currentVersionUrl")
    ]
    return publication_date(index.get("publicationDate"), where), files


def _is_linux_on_demand(attributes: Mapping[str, str]) -> bool:
    if any(attributes.get(k) != v for k, v in LINUX_ON_DEMAND.items()):
        return False
    # Older files lack licenseModel/operation on some rows: absent is not a mismatch.
    return all(attributes.get(k, v) == v for k, v in (LICENSE, OPERATION))


def _usd(value: Any, where: str) -> Decimal | None:
    try:
        usd = Decimal(str(value))
    except InvalidOperation as exc:
        raise InputError.single(f"{where}: price {value!r} is not a number") from exc
    return usd.normalize() if usd > 0 else None


def _merge(found: dict[str, OfferPrice], price: OfferPrice, where: str) -> None:
    """One Linux on-demand product per type and Region; two different prices for one is a file we misread."""
    seen = found.get(price.instance_type)
    both = (seen.usd_per_hour, price.usd_per_hour) if seen else (None, None)
    if None not in both and both[0] != both[1]:
        raise InputError.single(
            f"{where}: {price.instance_type} has two Linux on-demand prices ({both[0]}, {both[1]})",
            hint="the filter in gpuinfra/catalog/refresh/offers.py no longer singles out one product",
        )
    if seen is None or seen.usd_per_hour is None:
        found[price.instance_type] = price


def parse_json(data: Any, region: str, where: str) -> OfferFile:
    if not isinstance(data, dict) or not isinstance(data.get("products"), dict):
        raise InputError.single(f"{where}: not an AWS Price List file (no `products` object)")
    on_demand = data.get("terms", {}).get("OnDemand", {})
    found: dict[str, OfferPrice] = {}
    for sku, product in sorted(data["products"].items()):
        attributes = {"productFamily": product.get("productFamily"), **product.get("attributes", {})}
        if not _is_linux_on_demand(attributes) or attributes.get("regionCode", region) != region:
            continue
        hourly = [
            dim["pricePerUnit"].get("USD")
            for term in on_demand.get(sku, {}).values()
            for dim in term.get("priceDimensions", {}).values()
            if dim.get("unit") == "Hrs"
        ]
        usd = _usd(hourly[0], where) if len(hourly) == 1 else None
        accelerated = attributes.get("instanceFamily") in ACCELERATED_FAMILIES
        _merge(found, OfferPrice(attributes["instanceType"], region, usd, accelerated), where)
    return OfferFile(region, publication_date(data.get("publicationDate"), where), tuple(found.values()))


def _csv_metadata(rows: Iterator[list[str]], where: str) -> dict[str, str]:
    meta = {}
    for _ in range(5):
        row = next(rows, None)
        if row is None or len(row) < 2:
            raise InputError.single(f"{where}: not an AWS Price List CSV (five metadata rows, then the header)")
        meta[row[0]] = row[1]
    return meta


def parse_csv(stream: TextIO | Iterable[str], region: str, where: str) -> OfferFile:
    rows = csv.reader(stream)
    meta = _csv_metadata(rows, where)
    header = next(rows, None) or []
    column = {name: i for i, name in enumerate(header)}
    missing = [c for c in ("TermType", "Unit", "PricePerUnit", "Currency", *CSV_COLUMNS.values()) if c not in column]
    missing = [c for c in missing if c not in ("License Model", "operation", "Region Code", "Instance Family")]
    if missing:
        raise InputError.single(f"{where}: the CSV header lacks {', '.join(missing)}")
    found: dict[str, OfferPrice] = {}
    for row in rows:
        if row[column["TermType"]] != "OnDemand" or row[column["Unit"]] != "Hrs" or row[column["Currency"]] != "USD":
            continue
        attributes = {key: row[column[name]] for key, name in CSV_COLUMNS.items() if name in column}
        if not _is_linux_on_demand(attributes) or attributes.get("regionCode", region) != region:
            continue
        accelerated = attributes.get("instanceFamily") in ACCELERATED_FAMILIES
        usd = _usd(row[column["PricePerUnit"]], where)
        _merge(found, OfferPrice(attributes["instanceType"], region, usd, accelerated), where)
    return OfferFile(region, publication_date(meta.get("Publication Date"), where), tuple(found.values()))


__all__ = [
    "ACCELERATED_FAMILIES",
    "OfferFile",
    "OfferPrice",
    "RegionFile",
    "parse_csv",
    "parse_json",
    "publication_date",
    "region_files",
]
