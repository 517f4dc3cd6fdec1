"""`gpuinfra catalog`: list the instance types and regions the catalog holds (filtered by accelerator, memory
per accelerator, EFA, region), or show one type's prices by region and its quota codes."""

from __future__ import annotations

from pathlib import Path

from gpuinfra.catalog import load_catalog
from gpuinfra.clouds import CLOUDS, cloud
from gpuinfra.errors import InputError
from gpuinfra.report.build.catalog import cited, detail_out, regions_out, sources_out, type_out
from gpuinfra.report.model import CatalogReport

MIB_PER_GIB = 1024


def catalog_command(
    instance_type: str | None = None,
    accelerator: str | None = None,
    min_accelerator_memory_gib: float = 0,
    efa: bool | None = None,
    region: str | None = None,
    regions: bool = False,
) -> CatalogReport:
    """One type's detail, the region list, or the (filtered) type list. An unknown type, accelerator or region
    is an input error (exit 2) naming what the catalog has."""
    catalog = load_catalog()
    filters = {
        k: str(v)
        for k, v in (
            ("accelerator", accelerator),
            ("min_accelerator_memory_gib", min_accelerator_memory_gib or None),
            ("efa", efa),
            ("region", region),
        )
        if v is not None
    }
    if region is not None and region not in catalog.regions:
        raise InputError.single(
            f"unknown region {region!r}", path=("--region",), hint=f"one of: {', '.join(sorted(catalog.regions))}"
        )
    if accelerator is not None and accelerator.lower() not in {a.lower() for a in catalog.accelerator_names()}:
        raise InputError.single(
            f"no catalog type carries the accelerator {accelerator!r}",
            path=("--accelerator",),
            hint=f"one of: {', '.join(catalog.accelerator_names())}",
        )
    report = CatalogReport(filters=filters)
    if instance_type is not None:
        info = catalog.instance(instance_type)
        if info is None:
            known = instance_type in catalog.offered_in  # the price snapshot names it; instances.json leaves it out
            raise InputError.single(
                f"{'instance type not carried' if known else 'unknown instance type'} {instance_type!r}",
                path=("TYPE",),
                hint=(
                    "the catalog leaves out types it has no cited network-card data for (see the 'about' of "
                    "infra/gpuinfra/catalog/data/instances.json)"
                    if known
                    else "`gpuinfra catalog` lists every type the catalog holds"
                ),
            )
        report.detail = detail_out(catalog, info)
    elif regions:
        report.regions = regions_out(catalog)
    else:
        found = catalog.find_instances(
            accelerator=accelerator,
            min_accelerator_memory_mib=round(min_accelerator_memory_gib * MIB_PER_GIB),
            efa=efa,
            region=region,
        )
        report.types = [type_out(catalog, i, region) for i in found]
    report.sources = sources_out(catalog, cited(catalog, report))
    return report


def refresh_command(
    from_dir: Path | None, out: Path | None, cloud_name: str = "aws", account: str | None = None
) -> str:
    """Rebuild a cloud's catalog data files (into `out`, default the cloud's bundled data files) by its own
    refresh (the registry's `catalog_refresh` part) and say what was read; a cloud without one (on premises) has no
    price catalog to refresh."""
    if out is not None and out.exists() and not out.is_dir():
        raise InputError.single("--out must be a directory for refresh", file=out, hint="give a directory path")
    if cloud_name not in CLOUDS:
        raise InputError.single(
            f"unknown cloud {cloud_name!r}", path=("--cloud",), hint=f"one of: {', '.join(sorted(CLOUDS))}"
        )
    if cloud(cloud_name).parts.catalog_refresh is None:
        raise InputError.single(f"cloud {cloud_name!r} has no price catalog to refresh", path=("--cloud",))
    return str(cloud(cloud_name).part("catalog_refresh")(from_dir, out, account))


__all__ = ["catalog_command", "refresh_command"]
