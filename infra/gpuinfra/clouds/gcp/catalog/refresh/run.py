"""`gpuinfra catalog refresh --cloud gcp`: rebuild the `zones` and `prices` of clouds/gcp/catalog/data/g2.yaml from
Google's own sources, the Compute Engine machine types of a project (which zones offer each carried G2 type) and the
Cloud Billing Catalog's Compute Engine SKUs (the G2 core and RAM rates and the L4 GPU's, on-demand and Spot), every
other part of the file kept as it is (comments included).

A VM's price is Google's billing: host = vCPUs x core rate + GiB x RAM rate (one figure per machine type), plus
the GPUs at the GPU rate. A region's prices are as of the oldest effectiveTime of the SKUs they were computed from;
a type or region with no rate gets no row (unknown, never zero)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

from gpuinfra.clouds.gcp.catalog.book import DATA_FILE
from gpuinfra.clouds.gcp.catalog.refresh.client import pages, service
from gpuinfra.clouds.gcp.catalog.refresh.skus import Markers, Rate, rates
from gpuinfra.errors import InputError

PRICE_SOURCE = "gcp-billing-catalog"
ZONE_SOURCE = "gcp-compute-machine-types"
MIB_PER_GIB = 1024


@dataclass
class GcpRefreshResult:
    out: Path
    files: list[Path] = field(default_factory=list)
    skus_read: int = 0
    regions_priced: list[str] = field(default_factory=list)
    as_of: dict[str, datetime.date] = field(default_factory=dict)
    """Per region, the oldest effectiveTime its prices were computed from."""
    unpriced: list[str] = field(default_factory=list)
    """`type in region (purchase)` the catalog carries, offered there, with no rate for a part."""
    regions_without_zones: list[str] = field(default_factory=list)
    new_types: list[str] = field(default_factory=list)
    """The series' machine types Google lists that the catalog does not carry."""
    mismatches: list[str] = field(default_factory=list)
    """Carried types whose vCPUs, memory or GPUs differ from what Compute Engine lists."""

    @property
    def oldest(self) -> datetime.date | None:
        return min(self.as_of.values(), default=None)


def _yaml() -> YAML:
    yaml = YAML()  # round trip: the file's comments and layout are kept
    yaml.width = 4096
    yaml.representer.add_representer(type(None), lambda r, _: r.represent_scalar("tag:yaml.org,2002:null", "null"))
    return yaml


def _flow(**values: Any) -> CommentedMap:
    row = CommentedMap(values)
    row.fa.set_flow_style()
    return row


def _machine_types(
    recorded: Path | None, project: str, series: str, data: Any, result: GcpRefreshResult
) -> tuple[dict[str, list[str]], dict[str, set[str]]]:
    """(region -> zones offering a carried type, region -> the carried types offered there); mismatches and new
    types noted on the result."""
    carried = {m["name"]: m for m in data["machine_types"]}
    compute = service("compute", "v1", recorded)
    where = f"compute v1 machineTypes.aggregatedList (project {project})"
    request = compute.machineTypes().aggregatedList
    zones: dict[str, set[str]] = {}
    offered: dict[str, set[str]] = {}
    new: set[str] = set()
    for page in pages(lambda **kw: request(project=project, filter=f"name eq {series}-.*", **kw), where):
        for scope, listed in (page.get("items") or {}).items():
            zone = scope.removeprefix("zones/")
            for m in listed.get("machineTypes") or []:
                name = m.get("name", "")
                if name in carried:
                    zones.setdefault(zone.rpartition("-")[0], set()).add(zone)
                    offered.setdefault(zone.rpartition("-")[0], set()).add(name)
                    _compare(carried[name], m, zone, result)
                elif name.startswith(f"{series}-"):
                    new.add(name)
    result.new_types = sorted(new)
    result.mismatches = sorted(set(result.mismatches))
    return {r: sorted(z) for r, z in sorted(zones.items())}, offered


def _compare(row: Any, listed: dict[str, Any], zone: str, result: GcpRefreshResult) -> None:
    gpus = sum(int(a.get("guestAcceleratorCount", 0)) for a in listed.get("accelerators") or [])
    theirs = (int(listed.get("guestCpus", 0)), int(listed.get("memoryMb", 0)) / MIB_PER_GIB, gpus)
    ours = (row["vcpu"], row["memory_gib"], row["gpus"])
    if theirs != ours:
        result.mismatches.append(f"{row['name']}: catalog {ours} (vCPUs, GiB, GPUs), Compute Engine {theirs}")


def _region_prices(
    region: str, offered: set[str], data: Any, found: dict[tuple[str, str, str], Rate], result: GcpRefreshResult
) -> CommentedMap | None:
    """One region's `gpu` and `host` rows (None: no GPU rate there, so no VM can be priced)."""
    used: list[Rate] = []
    gpu = {p: found[("gpu", region, p)] for p in ("on_demand", "spot") if ("gpu", region, p) in found}
    if not gpu:
        return None
    used += gpu.values()
    host = CommentedMap()
    for m in data["machine_types"]:
        if m["name"] not in offered:
            continue
        row = {}
        for purchase in ("on_demand", "spot"):
            core, ram = found.get(("core", region, purchase)), found.get(("ram", region, purchase))
            if core is None or ram is None or purchase not in gpu:
                result.unpriced.append(f"{m['name']} in {region} ({purchase})")
                continue
            row[purchase] = float(core.usd * m["vcpu"] + ram.usd * m["memory_gib"])
            used += (core, ram)
        if row:
            host[m["name"]] = _flow(**row)
    result.as_of[region] = min(r.as_of for r in used)
    gpu_row = _flow(**{p: float(r.usd) for p, r in gpu.items()})
    return CommentedMap(as_of=result.as_of[region], gpu=gpu_row, host=host)


def refresh(recorded: Path | None, out: Path | None, account: str | None) -> GcpRefreshResult:
    """Rewrite `out/gcp/g2.yaml` (no `out`: the bundled file, clouds/gcp/catalog/data/g2.yaml) from Google's sources
    or a recorded directory."""
    if not account:
        raise InputError.single(
            "refresh for gcp needs the project whose machine types to list",
            path=("--account",),
            hint="--account <project ID> (a recording is laid out under that project's URL)",
        )
    yaml = _yaml()
    data = yaml.load(DATA_FILE.read_text(encoding="utf-8"))
    billing = data["billing"]
    path = out / "gcp" / DATA_FILE.name if out is not None else DATA_FILE
    result = GcpRefreshResult(out=path.parent)
    regions = set(data["time_zones"]["by_region"]) | set(data["zones"]["by_region"])
    zones, offered_in = _machine_types(recorded, account, billing["series"], data, result)
    skus_api = service("cloudbilling", "v1", recorded)
    parent = f"services/{billing['service']}"
    where = f"cloudbilling v1 {parent}/skus"
    listing = skus_api.services().skus().list
    skus = [
        s
        for page in pages(lambda **kw: listing(parent=parent, currencyCode="USD", **kw), where)
        for s in page.get("skus") or []
    ]
    result.skus_read = len(skus)
    found = rates(skus, Markers(billing["core"], billing["ram"], billing["gpu"]), regions, where)
    by_region = CommentedMap()
    for region in sorted(regions):
        offered = offered_in.get(region, set())
        if not offered:
            result.regions_without_zones.append(region)
            continue
        prices = _region_prices(region, offered, data, found, result)
        if prices is not None:
            by_region[region] = prices
            result.regions_priced.append(region)
    oldest = result.oldest
    data["zones"] = CommentedMap(
        source=ZONE_SOURCE, as_of=None, by_region=CommentedMap((r, _list(z)) for r, z in zones.items() if r in regions)
    )
    data["prices"] = CommentedMap(source=PRICE_SOURCE, as_of=oldest, by_region=by_region)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        yaml.dump(data, handle)
    result.files.append(path)
    return result


def _list(values: list[str]) -> Any:
    from ruamel.yaml.comments import CommentedSeq

    seq = CommentedSeq(values)
    seq.fa.set_flow_style()
    return seq


def run(recorded: Path | None, out: Path | None, account: str | None) -> str:
    """The cloud registry's `catalog_refresh` part for gcp: refresh, then say what was read."""
    return summary(refresh(recorded, out, account), recorded)


def summary(result: GcpRefreshResult, recorded: Path | None) -> str:
    """What the command prints: what was read, how old, and what is missing."""
    lines = [
        f"read {result.skus_read} Compute Engine SKUs ({'recorded: ' + str(recorded) if recorded else 'Google'})",
        f"priced {len(result.regions_priced)} regions: {', '.join(result.regions_priced) or 'none'}",
        f"oldest effective date: {result.oldest or 'none'}",
        f"wrote {', '.join(str(p) for p in result.files)}",
    ]
    if result.regions_without_zones:
        lines.append(f"catalog regions with no zone offering a carried type: {', '.join(result.regions_without_zones)}")
    if result.unpriced:
        lines.append(f"no rate (unknown, not priced): {'; '.join(result.unpriced)}")
    lines += [f"hardware differs: {m}" for m in result.mismatches]
    if result.new_types:
        lines.append(f"machine types not in the catalog: {', '.join(result.new_types)}; add them to g2.yaml")
    return "\n".join(lines) + "\n"


__all__ = ["PRICE_SOURCE", "ZONE_SOURCE", "GcpRefreshResult", "refresh", "run", "summary"]
