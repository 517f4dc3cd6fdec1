"""Read the catalog data files once per process, and refuse a catalog whose files disagree."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from gpuinfra.catalog.catalog import Catalog
from gpuinfra.catalog.engines import FILE as ENGINES_FILE
from gpuinfra.catalog.engines import EngineTable, table_problems
from gpuinfra.catalog.models import (
    Accelerator,
    AcceleratorPeak,
    AcceleratorPower,
    AcceleratorSet,
    CoolingLimit,
    Device,
    Entry,
    Family,
    Figure,
    FsxCapacity,
    FsxEfa,
    InstanceType,
    MemoryBandwidth,
    NodePower,
    NvLink,
    OnDemandPrice,
    RegionList,
    RegionZones,
    ServicePrice,
    Source,
    SpotAdvice,
    SpotDefault,
    SpotDistribution,
    UnknownPrice,
)
from gpuinfra.errors import GpuinfraError

DATA_DIR = Path(__file__).parent / "data"
M = TypeVar("M", bound=BaseModel)


class CatalogError(GpuinfraError):
    """The bundled catalog itself is inconsistent: a bug in gpuinfra, not in the user's input."""


def _read(name: str) -> Any:
    """Hand-written files are YAML (read with ruamel's C loader, 4-5x the pure one); the generated bulk
    (types, prices, spot) is JSON, which parses ~50x faster still: together they keep the catalog's load
    under its 100 ms budget (bench/)."""
    text = (DATA_DIR / name).read_text(encoding="utf-8")
    if name.endswith(".json"):
        return json.loads(text)
    return YAML(typ="safe").load(text)


def _entries(model: type[M], rows: list[dict[str, Any]]) -> tuple[M, ...]:
    return tuple(model.model_validate(row) for row in rows)


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    """Parse and cross-check every data file; cached, since the catalog never changes at run time."""
    try:
        sources = {k: Source.model_validate(v) for k, v in _read("sources.yaml").items()}
        power = _read("power.yaml")
        spot = _read("spot.json")
        services = _read("services.yaml")
        prices = _read("prices.json")
        serving = _read("serving.yaml")
        accelerators = _read("accelerators.yaml")
        catalog = Catalog(
            sources=sources,
            instance_types=_entries(InstanceType, _read("instances.json")["instance_types"]),
            on_demand_prices=_entries(OnDemandPrice, prices["on_demand"]),
            offered_in={k: tuple(v) for k, v in prices["offered_in"].items()},
            spot_default=SpotDefault.model_validate(spot["default"]),
            spot_distributions=_entries(SpotDistribution, spot["distribution"]),
            families=_entries(Family, _read("families.yaml")["families"]),
            accelerator_models=_entries(Accelerator, accelerators["accelerators"]),
            node_powers=_entries(NodePower, power["node_power"]),
            accelerators=_entries(AcceleratorPower, power["accelerators"]),
            cooling_limits=_entries(CoolingLimit, power["cooling"]),
            service_prices=_entries(ServicePrice, services["prices"]),
            unknown_prices=_entries(UnknownPrice, services["unknown"]),
            fsx_capacity=FsxCapacity.model_validate(services["fsx_capacity"]),
            fsx_efa=FsxEfa.model_validate(services["fsx_efa"]),
            region_list=RegionList.model_validate(_read("regions.yaml")["regions"]),
            memory_bandwidths=_entries(MemoryBandwidth, serving["memory_bandwidth"]),
            serving_figures={k: Figure.model_validate(v) for k, v in serving["cold_start"].items()},
            accelerator_peaks=_entries(AcceleratorPeak, accelerators.get("peaks", [])),
            nvlinks=_entries(NvLink, accelerators.get("nvlink", [])),
            devices=_entries(Device, accelerators["devices"]),
            fp8_weights=AcceleratorSet.model_validate(accelerators["fp8_weights"]),
            spot_advice=_entries(SpotAdvice, _read("spot_advice.json")["advice"]),
            instance_topology=AcceleratorSet.model_validate(_read("topology.yaml")["instance_topology"]),
            region_time_zones=RegionZones.model_validate(_read("time_zones.yaml")["region_time_zones"]),
            engine_table=EngineTable.model_validate(_read(ENGINES_FILE)),
        )
    except (ValidationError, KeyError, OSError, ValueError, YAMLError) as exc:
        raise CatalogError(f"bundled catalog is invalid: {exc}") from exc
    problems = list(consistency_problems(catalog))
    if problems:
        raise CatalogError("bundled catalog is inconsistent:\n  " + "\n  ".join(problems))
    return catalog


def entries(catalog: Catalog) -> list[Entry]:
    """Every sourced entry of the catalog."""
    return [
        *catalog.instance_types,
        *catalog.on_demand_prices,
        catalog.spot_default,
        *catalog.spot_distributions,
        *catalog.spot_advice,
        *catalog.families,
        *catalog.accelerator_models,
        *catalog.accelerator_peaks,
        *catalog.devices,
        *([catalog.fp8_weights] if catalog.fp8_weights else []),
        *([catalog.instance_topology] if catalog.instance_topology else []),
        *([catalog.region_time_zones] if catalog.region_time_zones else []),
        *catalog.node_powers,
        *catalog.accelerators,
        *catalog.cooling_limits,
        *catalog.service_prices,
        *catalog.unknown_prices,
        catalog.fsx_capacity,
        catalog.fsx_efa,
        catalog.region_list,
        *catalog.memory_bandwidths,
        *catalog.serving_figures.values(),
    ]


def consistency_problems(catalog: Catalog) -> Iterator[str]:
    """What makes the files disagree: unknown sources, prices of unknown types or regions, a type without
    network data, a family without a role, an NVIDIA GPU without a product label. (A cloud's own catalog files are
    checked by their readers against this catalog: EC2's quota codes by AWS's own catalog.)"""
    extra = {s for i in catalog.instance_types for s in i.cites}
    yield from source_problems(entries(catalog), catalog.sources, extra)
    yield from table_problems(catalog.engine_table)  # engines.yaml lists its own sources
    names = {i.name for i in catalog.instance_types}
    yield from _listed(
        "prices for types not in instances.yaml", {p.instance_type for p in catalog.on_demand_prices} - names
    )
    yield from _listed(
        "prices in regions not in regions.yaml", {p.region for p in catalog.on_demand_prices} - catalog.regions
    )
    yield from _listed(
        "regions without a local time zone (time_zones.yaml)", catalog.regions - set(catalog.time_zones())
    )
    priced = {(p.instance_type, p.region) for p in catalog.on_demand_prices}
    yield from _listed(
        "spot rows without an on-demand price",
        {
            f"{s.instance_type}/{s.region}"
            for s in catalog.spot_distributions
            if (s.instance_type, s.region) not in priced
        },
    )
    yield from _listed(
        "spot discounts <= 0",
        {
            f"{s.instance_type}/{s.region}"
            for s in catalog.spot_distributions
            if min(d for d in (s.mean, s.low, s.high) if d is not None) <= 0
        },
    )
    for info in catalog.instance_types:
        yield from _instance_problems(catalog, info)
    families = {i.family for i in catalog.instance_types}
    yield from _listed("families without a row in families.yaml", families - {f.family for f in catalog.families})


def source_problems(
    cited: Iterable[Entry], sources: Mapping[str, Source], extra: AbstractSet[str] = frozenset()
) -> Iterator[str]:
    """Entries (and `extra` source ids) that cite a source sources.yaml does not list, or that carry another date
    than their source's (null when it gives none; per row when it is dated per row)."""
    listed = list(cited)
    yield from _listed("entries cite unknown sources", ({e.source for e in listed} | extra) - set(sources))
    yield from _listed(
        "entries whose as_of is not their source's date (sources.yaml `date`, null when it gives none)",
        {
            f"{e.source} as_of {e.as_of}"
            for e in listed
            if e.source in sources and sources[e.source].dated == "source" and e.as_of != sources[e.source].date
        },
    )
    yield from _listed(
        "entries of a source dated per row without an as_of",
        {f"{e.source}" for e in listed if e.source in sources and sources[e.source].dated == "row" and e.as_of is None},
    )


def _instance_problems(catalog: Catalog, info: InstanceType) -> Iterable[str]:
    if not info.onprem:
        if not info.cards or info.max_interfaces < len(info.cards):
            yield f"{info.name}: no network-card data"
        if len(info.efa_cards) != info.efa_interfaces or any(c >= len(info.cards) for c in info.efa_cards):
            yield (
                f"{info.name}: efa_cards {list(info.efa_cards)} do not match "
                f"{info.efa_interfaces} EFA on {len(info.cards)} cards"
            )
    if info.accelerator_count and info.accelerator_kind and catalog.device(info.name) is None:
        yield f"{info.name}: no device row for {info.accelerator_kind} in accelerators.yaml"
    if info.accelerator_kind == "gpu" and info.accelerator_count and catalog.gpu_product(info.name) is None:
        yield (
            f"{info.name}: {info.accelerator} ({info.accelerator_memory_mib} MiB) has no "
            "nvidia.com/gpu.product label in accelerators.yaml"
        )


def _listed(what: str, items: AbstractSet[str]) -> Iterator[str]:
    if items:
        yield f"{what}: {', '.join(sorted(items))}"


__all__ = ["DATA_DIR", "CatalogError", "consistency_problems", "entries", "load_catalog", "source_problems"]
