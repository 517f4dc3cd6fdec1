"""The hardware side of `gpuinfra catalog refresh` (once tools/catalog_build.py): instances.json, spot.json and
regions.yaml from dated public snapshots the Price List does not replace, when `--from DIR` holds them under
`snapshots/` (each named in sources.yaml with its repository, commit and date):

  kp-types.md    <karpenter-provider-aws>/website/content/en/preview/reference/instance-types.md
  kp-vpc.go      <karpenter-provider-aws>/pkg/providers/instancetype/zz_generated.vpclimits.go
  van-od.js      <tsaol/aws-gpu @77fcd9fe>/data/all_gpu_instances.js   (network "Up to" rates)
  van-spot.json  <tsaol/aws-gpu @2d0108c7>/data/gpu_instances_raw.json (spot over each region's zones)
  endpoints.json <botocore 1.44.8>/botocore/data/endpoints.json

Which families and CPU types are carried, accelerator names, kinds and Neuron memory are read from the catalog's own
data (families.yaml, accelerators.yaml, instances.json): no hardware fact is written here. A figure the snapshots
lack is left out (unknown), never guessed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from gpuinfra.catalog.load import DATA_DIR
from gpuinfra.catalog.refresh.jsonfile import write_json
from gpuinfra.errors import InputError

SNAPSHOTS = {
    "kp_types": "kp-types.md",
    "kp_vpc": "kp-vpc.go",
    "van_od": "van-od.js",
    "van_spot": "van-spot.json",
    "endpoints": "endpoints.json",
}
KP_TYPES_DATE = "2026-07-11"
VAN_SPOT_DATE = "2025-11-30"
REGIONS_DATE = "2026-11-20"
"""The dates sources.yaml gives kp-types, van-spot and aws-regions (the snapshots' own; the loader checks)."""


@dataclass(frozen=True)
class Facts:
    """What the catalog's own data says about what to carry and how to name it."""

    families: tuple[str, ...]
    cpu_types: tuple[str, ...]
    accelerator_names: dict[str, str]
    kinds: dict[str, str]
    neuron_memory_mib: dict[str, int]
    onprem: list[dict[str, Any]]


def catalog_facts(data: Path = DATA_DIR) -> Facts:
    yaml = YAML(typ="safe")
    accelerators = yaml.load((data / "accelerators.yaml").read_text(encoding="utf-8"))
    families = yaml.load((data / "families.yaml").read_text(encoding="utf-8"))["families"]
    rows = json.loads((data / "instances.json").read_text(encoding="utf-8"))["instance_types"]
    onprem = [r for r in rows if r.get("onprem")]
    onprem_families = {r["family"] for r in onprem}
    return Facts(
        families=tuple(f["family"] for f in families if f["family"] not in onprem_families),
        cpu_types=tuple(r["name"] for r in rows if not r["accelerator"] and not r.get("onprem")),
        accelerator_names=dict(accelerators["source_names"]["karpenter"]),
        kinds={a["name"]: a["kind"] for a in accelerators["accelerators"]},
        neuron_memory_mib={a["name"]: a["memory_mib"] for a in accelerators["accelerators"] if a["kind"] != "gpu"},
        onprem=onprem,
    )


def parse_kp_types(text: str) -> dict[str, dict[str, str]]:
    """`### `name`` sections of the reference, each with its label and resource tables."""
    parts = re.split(r"\n### `([^`]+)`\n", text)
    return {parts[i]: dict(re.findall(r"\|([a-z0-9./-]+)\|([^|\n]*)\|", parts[i + 1])) for i in range(1, len(parts), 2)}


def parse_kp_vpc(text: str) -> dict[str, tuple[int, list[int]]]:
    """Per type: maximum network interfaces, and interfaces per network card in card-index order."""
    out: dict[str, tuple[int, list[int]]] = {}
    for name, body in re.findall(r'\n\t"([^"]+)": \{(.*?)\n\t\},', text, re.S):
        total = re.search(r"Interface:\s+(\d+)", body)
        if total is None:
            continue
        cards = sorted(
            (int(i), int(m))
            for m, i in re.findall(r"MaximumNetworkInterfaces:\s+(\d+),\s+NetworkCardIndex:\s+(\d+)", body)
        )
        out[name] = (int(total.group(1)), [m for _, m in cards])
    return out


def parse_van_od(text: str) -> list[dict[str, Any]]:
    return json.loads(text[text.index("[") : text.rindex("]") + 1])


def burst_gbps(network: str, baseline: float) -> float:
    """ec2instances.info's network column: "Up to N Gigabit" is the burst rate; any fixed rate (N Gigabit,
    N Gbps EFA, 8x 100 Gigabit) has no burst above the baseline."""
    m = re.match(r"Up to ([0-9.]+) Gigabit", network)
    return float(m.group(1)) if m else baseline


def efa_cards(efa: int, cards: int) -> list[int]:
    """Which network cards carry an EFA. EC2 puts at most one EFA per card; AWS's EFA guide says to add the
    card-0 EFA only 'if the network card index 0 supports EFA'. So EFA count = cards: every card;
    EFA = cards - 1: all but card 0 (p6-b300, 16 EFA on 17 cards); no EFA: none."""
    if efa == 0:
        return []
    if efa == cards:
        return list(range(cards))
    if efa == cards - 1:
        return list(range(1, cards))
    raise InputError.single(f"{efa} EFA on {cards} cards: no rule says which cards carry them")


def num(x: float) -> float | int:
    return int(x) if float(x).is_integer() else round(x, 3)


ABOUT = {
    "instances": [
        "EC2 instance types gpuinfra can place: every x86_64 type of a family in families.yaml that karpenter's",
        "instance-type reference lists (kp-types), plus the CPU types used for system nodes, plus on-premises systems.",
        "GENERATED by `gpuinfra catalog refresh` from the snapshots named in sources.yaml; regenerate, do not edit",
        "(the on-premises rows are kept as written). vcpu, memory_gib, accelerator*, instance_store_gb (local NVMe,",
        "GB), efa_interfaces: kp-types. accelerator: karpenter's name mapped by accelerators.yaml source_names.",
        "accelerator_memory_mib: per device as EC2 reports it (L4 22,888 MiB is the '24 GB' card); Trainium and",
        "Inferentia2 32 GiB, Inferentia 8 GiB per chip from the Neuron docs (neuron-docs, accelerators.yaml).",
        "network_baseline_gbps: kp-types (EC2's baseline). network_burst_gbps: ec2instances.info's 'Up to N",
        "Gigabit' (van-od); the baseline for fixed-rate types; null where van-od has no row (unknown).",
        "cards: maximum network interfaces per network card, by card index; max_interfaces per type (kp-vpc).",
        "efa_cards: the cards carrying an EFA (one per card at most): every card when EFA = cards, all but card 0",
        "when EFA = cards - 1 (p6-b300; aws-efa-cards: 'if the network card index 0 supports EFA').",
        "accelerator_count 0 with an accelerator named: a fractional GPU (g6f, gr6f: a vGPU slice of the card).",
        "Not carried: trn2.48xlarge (karpenter's VPC limits give no card layout: no network data), g5g (arm64),",
        "g4ad (AMD), dl2q (Qualcomm), g3/p2 (no current NVIDIA driver branch), p6e-gb200 (UltraServer only).",
    ],
    "spot": [
        "Spot as a discount off on-demand (spot = on-demand x (1 - discount)) per (type, region), over the",
        "region's zones, from ec2instances.info's spot figures of 2025-11-30 (van-spot: min, mean and max spot",
        "price over the zones, with that snapshot's own on-demand price). mean = 1 - spot_avg/on-demand (the",
        "dataset gives a mean over zones, not a median); high = 1 - spot_min/on-demand (cheapest zone); low =",
        "1 - spot_max/on-demand (dearest zone), null when that zone's spot price equals on-demand (no offer there).",
        "A discount <= 0 is never kept: a (type, region) whose mean or best zone is <= 0 has no row.",
        "GENERATED by `gpuinfra catalog refresh` (snapshots).",
    ],
}
REGIONS_YAML = """# AWS commercial regions with an EC2 endpoint in botocore 1.44.8's endpoints.json (aws-regions).
# GENERATED by `gpuinfra catalog refresh` (snapshots).
regions:
  source: aws-regions
  as_of: {date}
  codes: [{codes}]
"""


def instance_row(
    name: str, lab: dict[str, str], vpc: tuple[int, list[int]], van: dict[str, Any], facts: Facts
) -> dict[str, Any]:
    """One instances.json row from karpenter's labels, its VPC limits and (when present) ec2instances.info's row."""

    def get(k: str) -> str | None:
        return lab.get(f"karpenter.k8s.aws/{k}")

    mem_mib = int(get("instance-memory") or 0)
    acc_raw = get("instance-gpu-name") or get("instance-accelerator-name")
    acc = facts.accelerator_names[acc_raw] if acc_raw else None
    efa = int(lab.get("vpc.amazonaws.com/efa", 0))
    total, cards = vpc
    baseline = int(get("instance-network-bandwidth") or 0) / 1000
    burst = burst_gbps(van[name]["network"], baseline) if name in van else None
    cites = [
        "kp-vpc",
        *(["van-od"] if name in van else []),
        *(["neuron-docs"] if acc in facts.neuron_memory_mib else []),
    ]
    return {
        "name": name,
        "family": get("instance-family"),
        "vcpu": int(get("instance-cpu") or 0),
        "memory_gib": mem_mib // 1024,
        "accelerator": acc,
        "accelerator_kind": (facts.kinds.get(acc, "gpu") if acc else None),
        "accelerator_count": int(get("instance-gpu-count") or get("instance-accelerator-count") or 0),
        "accelerator_memory_mib": int(get("instance-gpu-memory") or facts.neuron_memory_mib.get(acc or "", 0)),
        "instance_store_gb": int(get("instance-local-nvme") or 0),
        "network_baseline_gbps": num(baseline),
        "network_burst_gbps": (num(burst) if burst is not None else None),
        "efa_interfaces": efa,
        "max_interfaces": total,
        "cards": cards,
        "efa_cards": efa_cards(efa, len(cards)),
        "source": "kp-types",
        "as_of": KP_TYPES_DATE,
        "cites": cites,
    }


def spot_row(name: str, region: str, lin: dict[str, str]) -> dict[str, Any] | None:
    """spot_min is the cheapest zone (highest discount), spot_max the dearest. A discount <= 0 is a zone with no
    spot offer (its price equals on-demand): the row is dropped when the mean or best zone is not positive, and the
    low end is then unknown (null), never kept as 0."""
    if not all(lin.get(k) for k in ("ondemand", "spot_min", "spot_avg", "spot_max")):
        return None
    base = Decimal(lin["ondemand"])
    q = Decimal("0.0001")
    d = {k: (1 - Decimal(lin[f"spot_{k}"]) / base).quantize(q, ROUND_HALF_EVEN) for k in ("min", "avg", "max")}
    if d["avg"] <= 0 or d["min"] <= 0:
        return None
    low = d["max"] if d["max"] > 0 else None
    return {
        "instance_type": name,
        "region": region,
        "mean": str(d["avg"]),
        "low": None if low is None else str(low),
        "high": str(d["min"]),
        "source": "van-spot",
        "as_of": VAN_SPOT_DATE,
    }


def spot_default(rows: list[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        raise InputError.single(
            "the spot snapshot gives no discount for any (type, region) with an on-demand price: no default to take",
            hint="check that van-spot.json and the price list cover the same types and Regions",
        )
    means = sorted(Decimal(r["mean"]) for r in rows)
    mid = len(means) // 2
    median = means[mid] if len(means) % 2 else (means[mid - 1] + means[mid]) / 2
    return {
        "discount": str(median),
        "source": "van-spot",
        "as_of": VAN_SPOT_DATE,
        "note": f"the median of the {len(means)} means below ({means[0]}-{means[-1]}): an estimate for a "
        "(type, region) with no row, flagged as such",
    }


def has_snapshots(folder: Path) -> bool:
    return all((folder / f).is_file() for f in SNAPSHOTS.values())


def _read(folder: Path, key: str) -> str:
    path = folder / SNAPSHOTS[key]
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError.single(f"cannot read {path}: {exc.strerror or exc}", file=path) from exc


def rebuild(
    folder: Path, out: Path, priced: set[tuple[str, str]] | None = None, facts: Facts | None = None
) -> list[Path]:
    """instances.json, spot.json and regions.yaml from the snapshots in `folder`, written to `out`. `priced`: the
    (type, region) pairs with an on-demand price; a spot discount needs one (None: keep every spot row)."""
    facts = facts or catalog_facts()
    kp = parse_kp_types(_read(folder, "kp_types"))
    vpc = parse_kp_vpc(_read(folder, "kp_vpc"))
    van = {i["name"]: i for i in parse_van_od(_read(folder, "van_od"))}
    raw = {i["instance_type"]: i for i in json.loads(_read(folder, "van_spot"))}
    aws = next(p for p in json.loads(_read(folder, "endpoints"))["partitions"] if p["partition"] == "aws")
    regions = sorted(r for r in aws["services"]["ec2"]["endpoints"] if not r.startswith("fips-"))
    order = {f: i for i, f in enumerate(facts.families)}

    def family(name: str) -> str:
        return kp[name].get("karpenter.k8s.aws/instance-family", "")

    accelerated = sorted(
        (n for n in kp if family(n) in order and n not in facts.cpu_types and n in vpc),
        key=lambda n: (order[family(n)], int(kp[n]["karpenter.k8s.aws/instance-cpu"])),
    )
    names = accelerated + [n for n in facts.cpu_types if n in kp and n in vpc]
    instances = [instance_row(n, kp[n], vpc[n], van, facts) for n in names]
    spot = [
        row
        for n in accelerated
        for r, p in sorted(raw.get(n, {}).get("pricing", {}).items())
        if r in regions
        and (priced is None or (n, r) in priced)
        and (row := spot_row(n, r, p.get("linux", {}))) is not None
    ]
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "instances.json", ABOUT["instances"], {"instance_types": instances + facts.onprem})
    write_json(out / "spot.json", ABOUT["spot"], {"default": spot_default(spot), "distribution": spot})
    (out / "regions.yaml").write_text(
        REGIONS_YAML.format(date=REGIONS_DATE, codes=", ".join(regions)), encoding="utf-8"
    )
    return [out / "instances.json", out / "spot.json", out / "regions.yaml"]


__all__ = ["SNAPSHOTS", "Facts", "burst_gbps", "catalog_facts", "efa_cards", "has_snapshots", "rebuild"]
