"""Read the catalog data files once per process."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from ruamel.yaml import YAML

from infra.catalog.catalog import Catalog
from infra.catalog.models import (
    AcceleratorPower,
    CoolingLimit,
    FsxCapacity,
    InstanceType,
    NodePower,
    OnDemandPrice,
    QuotaCode,
    RegionList,
    ServicePrice,
    Source,
    SpotDefault,
    SpotObserved,
    SpotRange,
)
from infra.errors import GpuinfraError

DATA_DIR = Path(__file__).parent / "data"
M = TypeVar("M", bound=BaseModel)


class CatalogError(GpuinfraError):
    """The bundled catalog itself is inconsistent: a bug in gpuinfra, not in the user's input."""


def _read(name: str) -> Any:
    return YAML(typ="safe", pure=True).load((DATA_DIR / name).read_text(encoding="utf-8"))


def _entries(model: type[M], rows: list[dict[str, Any]]) -> tuple[M, ...]:
    return tuple(model.model_validate(row) for row in rows)


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    """Parse and cross-check every data file; cached, since the catalog never changes at run time."""
    try:
        sources = {k: Source.model_validate(v) for k, v in _read("sources.yaml").items()}
        power = _read("power.yaml")
        spot = _read("spot.yaml")
        services = _read("services.yaml")
        catalog = Catalog(
            sources=sources,
            instance_types=_entries(InstanceType, _read("instances.yaml")["instance_types"]),
            on_demand_prices=_entries(OnDemandPrice, _read("prices.yaml")["on_demand"]),
            spot_default=SpotDefault.model_validate(spot["default"]),
            spot_observed=_entries(SpotObserved, spot["observed"]),
            spot_ranges=_entries(SpotRange, spot["ranges"]),
            quota_codes=_entries(QuotaCode, _read("quotas.yaml")["codes"]),
            node_powers=_entries(NodePower, power["node_power"]),
            accelerators=_entries(AcceleratorPower, power["accelerators"]),
            cooling_limits=_entries(CoolingLimit, power["cooling"]),
            service_prices=_entries(ServicePrice, services["prices"]),
            fsx_capacity=FsxCapacity.model_validate(services["fsx_capacity"]),
            region_list=RegionList.model_validate(_read("regions.yaml")["regions"]),
        )
    except (ValidationError, KeyError, OSError) as exc:
        raise CatalogError(f"bundled catalog is invalid: {exc}") from exc
    _check_sources(catalog)
    return catalog


def _check_sources(catalog: Catalog) -> None:
    entries = [
        *catalog.instance_types,
        *catalog.on_demand_prices,
        catalog.spot_default,
        *catalog.spot_observed,
        *catalog.spot_ranges,
        *catalog.quota_codes,
        *catalog.node_powers,
        *catalog.accelerators,
        *catalog.cooling_limits,
        *catalog.service_prices,
        catalog.fsx_capacity,
        catalog.region_list,
    ]
    missing = sorted({e.source for e in entries} - set(catalog.sources))
    if missing:
        raise CatalogError(f"catalog entries cite unknown sources: {', '.join(missing)}")
    unknown_types = sorted(
        {p.instance_type for p in catalog.on_demand_prices} - {i.name for i in catalog.instance_types}
    )
    if unknown_types:
        raise CatalogError(f"prices for instance types not in instances.yaml: {', '.join(unknown_types)}")


__all__ = ["DATA_DIR", "CatalogError", "load_catalog"]
