"""Synthetic stacks at growing scale, written to a temporary folder with their organization file.

A 40-region fleet needs more regions than AWS has; past the catalog's real regions the bench adds
synthetic codes (zz-north-1, ...) to the in-process catalog only. Scale is about resource counts.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from gpuinfra.catalog import load_catalog
from gpuinfra.catalog.models import RegionList
from gpuinfra.graph import Graph, Resource
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parent.parent
SYNTHETIC = [f"zz-{side}-{i}" for side in ("north", "south", "east", "west") for i in range(1, 10)]


def regions(count: int) -> list[str]:
    """Real catalog regions first, then synthetic ones (registered with the in-process catalog)."""
    catalog = load_catalog()
    real = sorted(catalog.regions - {"us-east-1"})
    chosen = (["us-east-1", *real, *SYNTHETIC])[:count]
    missing = [r for r in chosen if r not in catalog.regions]
    if missing:
        extended = RegionList(**{**catalog.region_list.model_dump(), "codes": [*catalog.region_list.codes, *missing]})
        object.__setattr__(catalog, "region_list", extended)
        catalog.__dict__.pop("regions", None)  # drop the cached frozenset
        zones = catalog.region_time_zones  # scheduled floors run on each region's clock: us-east-1's for these
        if zones is not None:
            clock = {r: zones.zones["us-east-1"] for r in missing}
            extended_zones = zones.model_copy(update={"zones": {**zones.zones, **clock}})
            object.__setattr__(catalog, "region_time_zones", extended_zones)
    return chosen


def _load(path: Path) -> Any:
    return YAML(typ="safe", pure=True).load(path.read_text())


def _dump(data: Any, path: Path) -> Path:
    yaml = YAML()
    with path.open("w") as fh:
        yaml.dump(data, fh)
    return path


def org(codes: list[str], folder: Path) -> dict[str, Any]:
    data = _load(ROOT / "stacks" / "org.yaml")
    for account in ("ml-training", "ml-inference"):
        data["accounts"][account]["monthly_budget_usd"] = 10**9
    data["accounts"]["ml-inference"]["quotas"] = {r: {"L-DB2E81BA": 100000, "L-3819A6DF": 100000} for r in codes}
    data["accounts"]["ml-training"]["quotas"] = {
        "us-east-1": {"L-417A185B": 10**6, "L-C4BD4855": 10**6, "L-1216C47A": 10**4}
    }
    data["registry"]["replica_regions"] = [r for r in codes if r != data["registry"]["region"]]
    data["onprem_sites"] = {"dc-east": {"gpu_allotment": 10**6}}
    _dump(data, folder / "org.yaml")
    return data


def inference_stack(count: int, folder: Path) -> Path:
    """The chat-serve example with `count` regions (explicit g6.xlarge: synthetic regions have no price)."""
    codes = regions(count)
    org(codes, folder)
    data = _load(ROOT / "stacks" / "Pulumi.chat-serve.yaml")
    spec = data["config"]["gpuinfra:inference"]
    template = spec["regions"][0]
    spec["instance"] = {"type": "g6.xlarge"}
    spec["regions"] = []
    for code in codes:
        region = copy.deepcopy(template)
        region.update(region=code, certificate_arn=f"arn:aws:acm:{code}:222222222222:certificate/bench-{code}")
        spec["regions"].append(region)
    return _dump(data, folder / f"Pulumi.fleet-{count}.yaml")


def training_stack(nodes: int, folder: Path, onprem: bool = False) -> Path:
    """The training example (Slurm on AWS, or the on-premises one) with `nodes` nodes."""
    org(["us-east-1"], folder)
    source = "Pulumi.llm-train-onprem.yaml" if onprem else "Pulumi.llm-train.yaml"
    data = _load(ROOT / "stacks" / source)
    spec = data["config"]["gpuinfra:training"]
    spec["compute"]["node_count"] = nodes
    if not onprem:
        # the shape the bench has measured since it began: a spot gang over an on-demand base (the example has
        # put its gang on a reservation since #48; one reservation id cannot serve every synthetic cluster)
        spec["compute"]["capacity"] = {"type": "spot", "on_demand_base": max(1, nodes // 4)}
    else:  # the site's inventory for `nodes` systems, laid out as the example's: 4 per rack, 2 racks a loop
        spec["onprem"]["inventory"] = [
            {
                "node": f"dgx-{i:04d}",
                "rack": f"r{i // 4:03d}",
                "cooling_loop": f"loop-{i // 8:03d}",
                "power_domain": f"pdu-r{i // 4:03d}",
            }
            for i in range(nodes)
        ]
    path = _dump(data, folder / f"Pulumi.{'onprem' if onprem else 'train'}-{nodes}.yaml")
    # Checkpoint at the planner's optimum for this size: validators refuse spot intervals past the bound.
    from gpuinfra.workspace.check import check_stack

    checkpoint = check_stack(path).plan.checkpoint  # type: ignore[union-attr]
    if checkpoint is not None:
        spec["checkpointing"]["interval_minutes"] = max(1, round(checkpoint.young_interval_minutes))
        _dump(data, path)
    return path


def scenario(kind: str, size: int, folder: Path) -> Path:
    """The stack file of one benchmark scenario: `fleet` (regions), `train` or `onprem` (nodes), in a folder of
    its own: each scenario writes the organization file its stack reads, so scenarios sharing a folder would
    preview later against the last one's (a fleet against a training org is refused in milliseconds)."""
    own = folder / f"{kind}-{size}"
    own.mkdir(parents=True, exist_ok=True)
    if kind == "fleet":
        return inference_stack(size, own)
    return training_stack(size, own, onprem=kind == "onprem")


def grown_fleet(path: Path) -> Path:
    """A fleet stack next to `path` whose first region may scale two replicas further: a small, real change."""
    data = _load(path)
    first = data["config"]["gpuinfra:inference"]["regions"][0]
    first["max_replicas"] += 2
    return _dump(data, path.with_name(path.stem + "-head.yaml"))


def scaled(graph: Graph, copies: int) -> Graph:
    """`copies` disjoint copies of `graph` in one stack (the stack resource itself kept once)."""

    def rename(urn: str | None, i: int) -> str | None:
        if urn is None or urn.endswith("::" + graph.stack) or "pulumi:pulumi:Stack" in urn:
            return urn
        return f"{urn}-c{i}"

    out: list[Resource] = [r for r in graph.resources if r.type == "pulumi:pulumi:Stack"]
    for i in range(copies):
        for r in graph.resources:
            if r.type == "pulumi:pulumi:Stack":
                continue
            out.append(
                Resource(
                    rename(r.urn, i) or "",
                    r.type,
                    f"{r.name}-c{i}",
                    rename(r.parent, i),
                    rename(r.provider, i),
                    r.custom,
                    tuple(rename(d, i) or "" for d in r.dependencies),
                    r.inputs,
                )
            )
    return Graph.of(graph.stack, graph.project, out)


__all__ = ["SYNTHETIC", "inference_stack", "org", "regions", "scaled", "training_stack"]
