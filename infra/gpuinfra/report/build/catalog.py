"""Build `gpuinfra catalog`'s report from the loaded catalog: the same lookups the planner and the pricer make
(`Catalog.find_instances`, `on_demand`, `spot`; the quota codes from the quota book of the cloud that owns the
catalog's instances, its registry part `quota_book`), so what the user reads is what they read."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gpuinfra.catalog import Catalog, InstanceType
from gpuinfra.catalog.models import Purchase
from gpuinfra.clouds import type_part
from gpuinfra.graph import tokens
from gpuinfra.report.model import (
    CatalogDetailOut,
    CatalogPriceOut,
    CatalogQuotaOut,
    CatalogRegionOut,
    CatalogReport,
    CatalogSourceOut,
    CatalogSpotOut,
    CatalogTypeOut,
)

CAPACITY_BLOCK_KEY = "ec2_capacity_block"
"""services.yaml key prefix of Capacity Block rates: ec2_capacity_block/<type>/<region>."""


def type_out(catalog: Catalog, info: InstanceType, region: str | None = None) -> CatalogTypeOut:
    """The type's row; with `region`, that region's own on-demand price beside the cheapest of all regions."""
    family = catalog.family(info.family)
    prices = [p for r in catalog.priced_regions(info.name) if (p := catalog.on_demand(info.name, r))]
    here = catalog.on_demand(info.name, region) if region else None
    return CatalogTypeOut(
        name=info.name,
        family=info.family,
        role=family.role if family else None,
        vcpu=info.vcpu,
        memory_gib=info.memory_gib,
        accelerator=info.accelerator,
        accelerator_kind=info.accelerator_kind,
        accelerator_count=info.accelerator_count,
        accelerator_memory_mib=info.accelerator_memory_mib,
        gpu_product=catalog.gpu_product(info.name),
        instance_store_gb=info.instance_store_gb,
        network_baseline_gbps=info.network_baseline_gbps,
        network_burst_gbps=info.network_burst_gbps,
        network_cards=info.network_cards,
        max_interfaces=info.max_interfaces,
        efa_interfaces=info.efa_interfaces,
        efa_cards=list(info.efa_cards),
        capacity_blocks=bool(family and family.capacity_blocks),
        regions_priced=len(prices),
        on_demand_min_usd=min((p.usd_per_hour for p in prices), default=None),
        region=region,
        region_on_demand_usd=here.usd_per_hour if here else None,
        region_on_demand_as_of=here.as_of if here else None,
        source=info.source,
        as_of=info.as_of,
    )


def price_out(catalog: Catalog, info: InstanceType, region: str, capacity_blocks: bool) -> CatalogPriceOut:
    od = catalog.on_demand(info.name, region)
    spot = catalog.spot(info.name, region)
    advice = catalog.interruption(info.name, region)
    spot_out = None
    if spot is not None and od is not None:
        spot_out = CatalogSpotOut(
            mean_discount=spot.mean,
            low_discount=spot.low,
            high_discount=spot.high,
            mean_usd=(od.usd_per_hour * (Decimal(1) - spot.mean)).quantize(Decimal("0.0001")),
            source=spot.source,
            as_of=spot.as_of,
        )
    block_usd, block_note = None, None
    if capacity_blocks:
        key = f"{CAPACITY_BLOCK_KEY}/{info.name}/{region}"
        rate = catalog.service(key)
        unknown = catalog.unknown_price(key)
        block_usd = rate.usd if rate else None
        block_note = unknown.reason if rate is None and unknown else None
    return CatalogPriceOut(
        region=region,
        on_demand_usd=od.usd_per_hour if od else None,
        on_demand_source=od.source if od else None,
        on_demand_as_of=od.as_of if od else None,
        spot=spot_out,
        capacity_block_usd=block_usd,
        capacity_block_note=block_note,
        interruption_band=advice.band if advice else None,
        interruption_as_of=advice.as_of if advice else None,
        interruption_source=advice.source if advice else None,
    )


def quotas_out(book: Any, family: str, capacity_blocks: bool) -> list[CatalogQuotaOut]:
    """On-demand and spot always; Capacity Blocks (per account and per organization) when the family is sold so.
    `book` is a cloud's quota book (its `code` and `unknown` lookups)."""
    wanted: list[tuple[Purchase, str]] = [("on_demand", "account"), ("spot", "account")]
    if capacity_blocks:
        wanted += [("capacity_block", "account"), ("capacity_block", "organization")]
    out = []
    for purchase, scope in wanted:
        code = book.code(family, purchase, scope)
        if code is not None:
            out.append(
                CatalogQuotaOut(purchase=purchase, scope=scope, code=code.code, name=code.name, source=code.source)
            )
            continue
        unknown = book.unknown(family, purchase)
        if unknown is not None and scope == "account":
            out.append(CatalogQuotaOut(purchase=purchase, scope=scope, source=unknown.source, reason=unknown.reason))
    return out


def instance_quota_book() -> Any:
    """The quota book of the cloud that owns the instances the catalog's (not on-premises) types are launched as."""
    return type_part(tokens.INSTANCE, "quota_book")()


def detail_out(catalog: Catalog, info: InstanceType) -> CatalogDetailOut:
    typ = type_out(catalog, info)
    regions = sorted(set(catalog.priced_regions(info.name)) | set(catalog.offered_regions(info.name)))
    return CatalogDetailOut(
        type=typ,
        prices=[price_out(catalog, info, r, typ.capacity_blocks) for r in regions],
        quotas=[] if info.onprem else quotas_out(instance_quota_book(), info.family, typ.capacity_blocks),
        spot_default_discount=catalog.spot_default.discount,
    )


def regions_out(catalog: Catalog) -> list[CatalogRegionOut]:
    counts: dict[str, int] = dict.fromkeys(catalog.regions, 0)
    for p in catalog.on_demand_prices:
        counts[p.region] = counts.get(p.region, 0) + 1
    return [CatalogRegionOut(region=r, types_priced=n) for r, n in sorted(counts.items())]


def sources_out(catalog: Catalog, ids: set[str]) -> list[CatalogSourceOut]:
    return [
        CatalogSourceOut(id=k, title=s.title, url=s.url, date=s.date)
        for k, s in sorted(catalog.sources.items())
        if k in ids
    ]


def cited(catalog: Catalog, report: CatalogReport) -> set[str]:
    """Source ids behind the figures the report shows."""
    ids = {t.source for t in report.types}
    if report.detail is not None:
        info = catalog.instance(report.detail.type.name)
        ids |= {report.detail.type.source, *(info.cites if info else ())}
        for p in report.detail.prices:
            ids |= {s for s in (p.on_demand_source, p.spot.source if p.spot else None, p.interruption_source) if s}
            if p.capacity_block_note is not None:
                unknown = catalog.unknown_price(CAPACITY_BLOCK_KEY)
                ids |= {unknown.source} if unknown else set()
        ids |= {q.source for q in report.detail.quotas}
        ids.add(catalog.spot_default.source)
    if report.regions:
        ids.add(catalog.region_list.source)
    return ids


__all__ = [
    "cited",
    "detail_out",
    "instance_quota_book",
    "price_out",
    "quotas_out",
    "regions_out",
    "sources_out",
    "type_out",
]
