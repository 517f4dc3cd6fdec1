"""Google's price book and machine catalog, read from clouds/gcp/catalog/data/g2.yaml, every figure with its source.

`gcp_catalog` presents Google's machine types through the bundled catalog's interface (instance types, on-demand
prices, serving families), keeping its cloud-neutral tables (accelerator bandwidths and peaks, cold-start
figures): the planner's cloud-neutral steps (memory fit, roofline, cold start, capacity) then run unchanged on
Google's types, and `instance: auto` chooses among Google's types only."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any, Literal, TypeVar

from ruamel.yaml import YAML

from gpuinfra.catalog import Catalog
from gpuinfra.catalog.models import Family, InstanceType, OnDemandPrice, Source, SpotDistribution
from gpuinfra.errors import GpuinfraError

DATA_FILE = Path(__file__).parent / "data" / "g2.yaml"
SERVICES_FILE = DATA_FILE.with_name("services.yaml")
FAMILY = "g2"
HOURS_PER_MONTH = Decimal(730)
"""Google's pricing calculator's month (730 hours), as the AWS price lines use."""


class GcpCatalogError(GpuinfraError):
    """Google's catalog data is inconsistent: a bug in gpuinfra's data, not in the user's input."""


B = TypeVar("B")


def read_data(path: Path, what: str, build: Callable[[Any], B]) -> B:
    """A bundled Google data file, parsed and built by `build`; a malformed one is gpuinfra's bug, named with the
    file and `what` it holds (every Google catalog reader: the G2 book, service prices, training, Filestore)."""
    try:
        return build(YAML(typ="safe").load(path.read_text(encoding="utf-8")))
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise GcpCatalogError(f"{path}: {what} cannot be read: {type(exc).__name__}: {exc}") from None


def check_sources(path: Path, named: set[str], listed: Iterable[str], rows: str = "rows") -> None:
    """Every source a file's rows name is one the file lists (with its date), else gpuinfra's data is wrong."""
    unknown = named - set(listed)
    if unknown:
        raise GcpCatalogError(f"{path}: {rows} name sources it does not list: {sorted(unknown)}")


@dataclass(frozen=True)
class Price:
    """One SKU's hourly rate in a region, and where the figure comes from."""

    usd_per_hour: Decimal
    source: str
    as_of: datetime.date | None


@dataclass(frozen=True)
class MachineType:
    name: str
    vcpu: int
    memory_gib: int
    gpus: int
    egress_gbps: float
    source: str


@dataclass(frozen=True)
class QuotaMetric:
    """A Compute Engine quota metric in GPUs (on-demand, Spot, or the project-wide cap)."""

    metric: str
    accelerator: str | None
    purchase: Literal["on_demand", "spot", "any"]
    scope: Literal["region", "global"]
    cloud_quotas_id: str
    source: str


@dataclass(frozen=True)
class GcpBook:
    sources: dict[str, Source]
    accelerator: str
    accelerator_memory_mib: int
    machine_types: dict[str, MachineType]
    zones: dict[str, tuple[str, ...]]
    zones_source: str
    gpu_prices: dict[tuple[str, str], Price]
    """(region, purchase) -> one L4's hourly rate."""
    host_prices: dict[tuple[str, str, str], Price]
    """(machine type, region, purchase) -> the machine's cores and memory, hourly."""
    whole_prices: dict[tuple[str, str, str], Price]
    """(machine type, region, purchase) -> the whole VM (cores, memory and GPUs), hourly: a published
    per-machine price, used when the SKUs apart (host, gpu) are not in the catalog."""
    quotas: tuple[QuotaMetric, ...]
    time_zones: dict[str, str]
    """Region -> its local IANA time zone (a schedule's `region` clock)."""

    def machine(self, name: str) -> MachineType | None:
        return self.machine_types.get(name)

    def zones_of(self, region: str) -> tuple[str, ...]:
        """Zones of `region` offering G2 (empty: the region offers none, as far as the catalog knows)."""
        return self.zones.get(region, ())

    def vm_price(self, machine_type: str, region: str, purchase: str) -> tuple[Price, Price] | None:
        """(host, one GPU) rates of a VM as Google bills it, or None when either is unknown."""
        host = self.host_prices.get((machine_type, region, purchase))
        gpu = self.gpu_prices.get((region, purchase))
        return (host, gpu) if host and gpu else None

    def whole_price(self, machine_type: str, region: str, purchase: str) -> Price | None:
        """The published per-machine rate, or None: the SKUs apart (vm_price) are preferred when both exist."""
        if self.vm_price(machine_type, region, purchase) is not None:
            return None
        return self.whole_prices.get((machine_type, region, purchase))

    def vm_rate(self, machine_type: str, region: str, purchase: str) -> Price | None:
        """One VM's hourly rate with its source and date (whole, or host + GPUs), or None when unknown."""
        whole = self.whole_price(machine_type, region, purchase)
        if whole is not None:
            return whole
        found = self.vm_price(machine_type, region, purchase)
        machine = self.machine(machine_type)
        if found is None or machine is None:
            return None
        host, gpu = found
        return Price(host.usd_per_hour + gpu.usd_per_hour * machine.gpus, gpu.source, gpu.as_of)

    def vm_hourly(self, machine_type: str, region: str, purchase: str) -> Decimal | None:
        rate = self.vm_rate(machine_type, region, purchase)
        return rate.usd_per_hour if rate else None

    def priced_regions(self) -> tuple[str, ...]:
        """The regions with any price row (whole VMs or GPU SKUs), sorted."""
        return tuple(sorted({r for _, r, _ in self.whole_prices} | {r for r, _ in self.gpu_prices}))

    def quota_metric(self, purchase: str, scope: str = "region") -> QuotaMetric:
        return next(q for q in self.quotas if q.scope == scope and q.purchase in (purchase, "any"))

    def metrics(self) -> frozenset[str]:
        return frozenset(q.metric for q in self.quotas)


def _price(row: Any, source: str, as_of: datetime.date | None, purchase: str) -> Price:
    return Price(Decimal(str(row[purchase])), source, as_of)


@cache
def gcp_book(path: Path = DATA_FILE) -> GcpBook:
    """The Google catalog (read once per process); a malformed file is gpuinfra's bug, named with the file."""
    try:
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
        sources = {k: Source.model_validate(v) for k, v in data["sources"].items()}
        machines = {
            m["name"]: MachineType(m["name"], m["vcpu"], m["memory_gib"], m["gpus"], m["egress_gbps"], m["source"])
            for m in data["machine_types"]
        }
        prices = data["prices"]
        src, as_of = prices["source"], prices["as_of"]
        gpu: dict[tuple[str, str], Price] = {}
        host: dict[tuple[str, str, str], Price] = {}
        whole: dict[tuple[str, str, str], Price] = {}
        for region, row in prices["by_region"].items():
            dated = row.get("as_of", as_of)  # a refreshed region carries the date of its own SKUs
            for purchase in ("on_demand", "spot"):  # a purchase with no figure has no row: unknown
                if purchase in (row.get("gpu") or {}):
                    gpu[(region, purchase)] = _price(row["gpu"], src, dated, purchase)
                for part, into in (("host", host), ("vm", whole)):
                    for name, rates in (row.get(part) or {}).items():
                        if purchase in rates:
                            into[(name, region, purchase)] = _price(rates, src, dated, purchase)
        quotas = tuple(
            QuotaMetric(q["metric"], q["accelerator"], q["purchase"], q["scope"], q["cloud_quotas_id"], q["source"])
            for q in data["quotas"]
        )
        book = GcpBook(
            sources=sources,
            accelerator=data["accelerator"]["name"],
            accelerator_memory_mib=data["accelerator"]["memory_mib"],
            machine_types=machines,
            zones={r: tuple(z) for r, z in data["zones"]["by_region"].items()},
            zones_source=data["zones"]["source"],
            gpu_prices=gpu,
            host_prices=host,
            whole_prices=whole,
            quotas=quotas,
            time_zones=dict(data["time_zones"]["by_region"]),
        )
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise GcpCatalogError(f"{path}: Google's catalog cannot be read: {type(exc).__name__}: {exc}") from None
    check_sources(path, {m.source for m in machines.values()} | {src} | {q.source for q in quotas}, sources)
    return book


@dataclass(frozen=True)
class ServicePrice:
    usd: Decimal
    unit: str
    source: str
    as_of: datetime.date | None


@cache
def gcp_services(path: Path = SERVICES_FILE) -> dict[str, ServicePrice]:
    """Google's service prices by key (clouds/gcp/catalog/data/services.yaml), each naming a source the file lists."""

    def build(data: Any) -> tuple[list[str], dict[str, ServicePrice]]:
        services = data["services"].items()
        return list(data["sources"]), {
            k: ServicePrice(Decimal(str(v["usd"])), v["unit"], v["source"], v["as_of"]) for k, v in services
        }

    listed, found = read_data(path, "Google's service prices", build)
    check_sources(path, {p.source for p in found.values()}, listed, rows="prices")
    return found


def compute_engine_type(
    source: str,
    name: str,
    family: str,
    vcpu: int,
    memory_gib: float,
    accelerator: str,
    gpus: int,
    accelerator_memory_mib: int,
    network_gbps: float,
    note: str,
) -> InstanceType:
    """A Compute Engine machine type as the catalog's InstanceType (serving's G2 and training's A3/A4 alike): GPUs,
    one NIC as gpuinfra attaches it, its egress as both baseline and burst, and no EFA (an AWS adapter)."""
    return InstanceType(
        source=source,
        as_of=None,
        name=name,
        family=family,
        vcpu=vcpu,
        memory_gib=memory_gib,
        accelerator=accelerator,
        accelerator_count=gpus,
        accelerator_memory_mib=accelerator_memory_mib,
        accelerator_kind="gpu",
        efa_interfaces=0,
        network_baseline_gbps=network_gbps,
        network_burst_gbps=network_gbps,
        max_interfaces=1,
        cards=(1,),
        efa_cards=(),
        note=note,
    )


def _instance(machine: MachineType, book: GcpBook) -> InstanceType:
    return compute_engine_type(
        machine.source,
        machine.name,
        FAMILY,
        machine.vcpu,
        machine.memory_gib,
        book.accelerator,
        machine.gpus,
        book.accelerator_memory_mib,
        machine.egress_gbps,
        "a Compute Engine machine type (one gVNIC as gpuinfra attaches it); no EFA",
    )


def _spot(book: GcpBook, name: str, region: str) -> SpotDistribution | None:
    """Google's Spot rate of the VM as a discount off on-demand (one rate per region: no zone spread)."""
    on_demand = book.vm_hourly(name, region, "on_demand")
    spot = book.vm_rate(name, region, "spot")
    if not on_demand or spot is None:
        return None
    discount = (1 - spot.usd_per_hour / on_demand).quantize(Decimal("0.0001"))
    return SpotDistribution(
        source=spot.source,
        as_of=spot.as_of,
        instance_type=name,
        region=region,
        mean=discount,
        low=discount,
        high=discount,
    )


_VIEWS: dict[int, tuple[Catalog, Catalog]] = {}


def kept_view(views: dict[int, tuple[Catalog, Catalog]], base: Catalog, build: Callable[[Catalog], Catalog]) -> Catalog:
    """`build(base)` once per bundled catalog (loaded once per process), kept in `views`: keyed by the catalog's id
    and checked by identity, since an id may be reused once a catalog is gone."""
    kept = views.get(id(base))
    if kept is None or kept[0] is not base:
        kept = views[id(base)] = (base, build(base))
    return kept[1]


def gcp_catalog(base: Catalog) -> Catalog:
    """The bundled catalog with Google's machine types in place of EC2's (its cloud-neutral tables kept); one view
    per bundled catalog."""
    return kept_view(_VIEWS, base, _view)


def _view(base: Catalog) -> Catalog:
    book = gcp_book()
    types = tuple(_instance(m, book) for m in book.machine_types.values())
    prices = tuple(
        OnDemandPrice(
            source=rate.source, as_of=rate.as_of, instance_type=name, region=region, usd_per_hour=rate.usd_per_hour
        )
        for name in book.machine_types
        for region in book.priced_regions()
        if (rate := book.vm_rate(name, region, "on_demand")) is not None
    )
    spots = tuple(s for name in book.machine_types for r in book.zones if (s := _spot(book, name, r)) is not None)
    family = Family(source="gcp-gpu-machines", as_of=None, family=FAMILY, role="serving", capacity_blocks=False)
    return replace(
        base,
        sources={**base.sources, **book.sources},
        instance_types=types,
        on_demand_prices=prices,
        offered_in={
            name: tuple(sorted({p.region for p in prices if p.instance_type == name})) for name in book.machine_types
        },
        spot_distributions=spots,
        families=(family,),
        spot_advice=(),
    )


__all__ = [
    "DATA_FILE",
    "HOURS_PER_MONTH",
    "GcpBook",
    "GcpCatalogError",
    "MachineType",
    "Price",
    "QuotaMetric",
    "check_sources",
    "compute_engine_type",
    "gcp_book",
    "gcp_catalog",
    "gcp_services",
    "kept_view",
    "read_data",
]
