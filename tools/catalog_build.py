"""Regenerate infra/gpuinfra/catalog/data/{instances,prices,spot}.json and regions.yaml from dated public snapshots.

Ours; reads only the paths given on the command line (the snapshots are not committed):

  python tools/catalog_build.py \
      --kp-types   <karpenter-provider-aws>/website/content/en/preview/reference/instance-types.md \
      --kp-vpc     <karpenter-provider-aws>/pkg/providers/instancetype/zz_generated.vpclimits.go \
      --kp-price   <karpenter-provider-aws>/pkg/providers/pricing/zz_generated.pricing_aws.go \
      --van-od     <tsaol/aws-gpu @77fcd9fe>/data/all_gpu_instances.js \
      --van-spot   <tsaol/aws-gpu @2d0108c7>/data/gpu_instances_raw.json \
      --regions    <botocore 1.44.8>/botocore/data/endpoints.json \
      --out infra/gpuinfra/catalog/data

sources.yaml names each snapshot (repository, path, commit, the date it gives). What is derived here and
why is said next to each rule below; nothing is guessed: a figure the snapshots lack is left out (unknown).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

# Which families the catalog carries: every current EC2 family with an NVIDIA GPU, Trainium or Inferentia
# that karpenter's instance-type reference lists (x86_64 only: g5g is arm64 and our AMIs are not), plus the
# CPU types gpuinfra uses for system/head nodes. Not included: g4ad (AMD GPU), dl2q (Qualcomm), g3/p2
# (M60/K80: no current NVIDIA data-center driver branch), p6e-gb200 (sold only as UltraServer Capacity
# Blocks; not in karpenter's reference).
ACCELERATED_FAMILIES = (
    "g4dn",
    "g5",
    "g6",
    "g6e",
    "g6f",
    "gr6",
    "gr6f",
    "g7",
    "g7e",
    "p3",
    "p3dn",
    "p4d",
    "p4de",
    "p5",
    "p5e",
    "p5en",
    "p6-b200",
    "p6-b300",
    "inf1",
    "inf2",
    "trn1",
    "trn1n",
    "trn2",
)
CPU_TYPES = ("m7i.xlarge", "m7i.2xlarge")

DATA = Path(__file__).resolve().parent.parent / "infra" / "gpuinfra" / "catalog" / "data"


def accelerator_facts() -> tuple[dict[str, str], dict[str, str], dict[str, int]]:
    """From the catalog's own accelerators.yaml (hardware facts live only there): karpenter's gpu/accelerator
    name label -> the catalog's name; each accelerator's kind; the device memory of AWS's own accelerators,
    which karpenter's reference does not carry (the Neuron docs' figures, neuron-docs)."""
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load((DATA / "accelerators.yaml").read_text(encoding="utf-8"))
    names = dict(data["source_names"]["karpenter"])
    kinds = {row["name"]: row["kind"] for row in data["accelerators"]}
    neuron = {row["name"]: row["memory_mib"] for row in data["accelerators"] if row["kind"] != "gpu"}
    return names, kinds, neuron


def onprem_rows() -> list[dict[str, Any]]:
    """Systems for one's own racks are written by hand (no snapshot carries them): kept as the catalog has them."""
    rows = json.loads((DATA / "instances.json").read_text(encoding="utf-8"))["instance_types"]
    return [r for r in rows if r.get("onprem")]


def parse_kp_types(text: str) -> dict[str, dict[str, str]]:
    """`### `name`` sections of the reference, each with its label and resource tables."""
    parts = re.split(r"\n### `([^`]+)`\n", text)
    return {parts[i]: dict(re.findall(r"\|([a-z0-9./-]+)\|([^|\n]*)\|", parts[i + 1])) for i in range(1, len(parts), 2)}


def parse_kp_vpc(text: str) -> dict[str, tuple[int, list[int]]]:
    """Per type: maximum network interfaces, and interfaces per network card in card-index order."""
    out: dict[str, tuple[int, list[int]]] = {}
    for name, body in re.findall(r'\n\t"([^"]+)": \{(.*?)\n\t\},', text, re.S):
        total = int(re.search(r"Interface:\s+(\d+)", body).group(1))  # type: ignore[union-attr]
        cards = sorted(
            (int(i), int(m))
            for m, i in re.findall(r"MaximumNetworkInterfaces:\s+(\d+),\s+NetworkCardIndex:\s+(\d+)", body)
        )
        out[name] = (total, [m for _, m in cards])
    return out


def parse_kp_price(text: str) -> dict[str, Decimal]:
    return {k: Decimal(v) for k, v in re.findall(r'"([a-z0-9.-]+)": ([0-9.]+)', text)}


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
    raise SystemExit(f"{efa} EFA on {cards} cards: no rule says which cards carry them")


def num(x: float) -> float | int:
    return int(x) if float(x).is_integer() else round(x, 3)


def money(x: Decimal) -> str:
    return format(x.normalize(), "f")


ABOUT = {
    "instances": [
        "EC2 instance types gpuinfra can place: every current x86_64 type with an NVIDIA GPU, Trainium or",
        "Inferentia in karpenter's instance-type reference (kp-types), plus the CPU types used for system nodes.",
        "GENERATED by tools/catalog_build.py from the snapshots named in sources.yaml; regenerate, do not edit.",
        "vcpu, memory_gib, accelerator*, instance_store_gb (local NVMe, GB), efa_interfaces: kp-types.",
        "accelerator_memory_mib: per device as EC2 reports it (L4 22,888 MiB is the '24 GB' card); Trainium and",
        "Inferentia2 32 GiB, Inferentia 8 GiB per chip from the Neuron docs (neuron-docs).",
        "network_baseline_gbps: kp-types (EC2's baseline). network_burst_gbps: ec2instances.info's 'Up to N",
        "Gigabit' (van-od); the baseline for fixed-rate types; null where van-od has no row (unknown).",
        "cards: maximum network interfaces per network card, by card index; max_interfaces per type (kp-vpc).",
        "efa_cards: the cards carrying an EFA (one per card at most): every card when EFA = cards, all but card 0",
        "when EFA = cards - 1 (p6-b300; aws-efa-cards: 'if the network card index 0 supports EFA').",
        "accelerator_count 0 with an accelerator named: a fractional GPU (g6f, gr6f: a vGPU slice of the card).",
        "Not carried: trn2.48xlarge (karpenter's VPC limits give no card layout: no network data), g5g (arm64),",
        "g4ad (AMD), dl2q (Qualcomm), g3/p2 (no current NVIDIA driver branch), p6e-gb200 (UltraServer only).",
    ],
    "prices": [
        "On-demand Linux prices, USD per hour, for every (type, region) the snapshot lists. GENERATED by",
        "tools/catalog_build.py. Accelerated types: ec2instances.info data as of 2026-01-21 (van-od), real regions",
        "only (Local and Wavelength Zones and GovCloud left out); its us-east-1 rows equal karpenter's AWS Price",
        "List table of 2026-07-20 (kp-price) for every type both list (the generator checks). CPU types, and types",
        "launched after the van-od snapshot (g7): kp-price, us-east-1 only (offered_in says so). A missing row means",
        "unknown, never zero; nothing falls back to another region.",
    ],
    "spot": [
        "Spot as a discount off on-demand (spot = on-demand x (1 - discount)) per (type, region), over the",
        "region's zones, from ec2instances.info's spot figures of 2025-11-30 (van-spot: min, mean and max spot",
        "price over the zones, with that snapshot's own on-demand price). mean = 1 - spot_avg/on-demand (the",
        "dataset gives a mean over zones, not a median); high = 1 - spot_min/on-demand (cheapest zone); low =",
        "1 - spot_max/on-demand (dearest zone), null when that zone's spot price equals on-demand (no offer there).",
        "A discount <= 0 is never kept: a (type, region) whose mean or best zone is <= 0 has no row.",
        "GENERATED by tools/catalog_build.py.",
    ],
}
REGIONS_YAML = """# AWS commercial regions with an EC2 endpoint in botocore 1.44.8's endpoints.json (aws-regions).
# GENERATED by tools/catalog_build.py.
regions:
  source: aws-regions
  as_of: 2026-11-20
  codes: [{codes}]
"""


def write_json(path: Path, about: list[str], body: dict[str, Any]) -> None:
    """One row per line, so a regenerated file diffs row by row."""
    parts = [f'{{\n  "about": {json.dumps(about, indent=None)}']
    for key, value in body.items():
        if isinstance(value, list):
            rows = ",\n    ".join(json.dumps(r, separators=(", ", ": ")) for r in value)
            parts.append(f'  "{key}": [\n    {rows}\n  ]')
        else:
            parts.append(f'  "{key}": {json.dumps(value)}')
    path.write_text(",\n".join(parts) + "\n}\n")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--kp-types", "--kp-vpc", "--kp-price", "--van-od", "--van-spot", "--regions", "--out"):
        ap.add_argument(flag, required=True, type=Path)
    a = ap.parse_args(argv)
    accelerator_names, kinds, neuron_memory_mib = accelerator_facts()
    kp = parse_kp_types(a.kp_types.read_text())
    vpc = parse_kp_vpc(a.kp_vpc.read_text())
    kp_price = parse_kp_price(a.kp_price.read_text())
    van = {i["name"]: i for i in parse_van_od(a.van_od.read_text())}
    raw = {i["instance_type"]: i for i in json.loads(a.van_spot.read_text())}
    endpoints = json.loads(a.regions.read_text())
    aws = next(p for p in endpoints["partitions"] if p["partition"] == "aws")
    regions = sorted(r for r in aws["services"]["ec2"]["endpoints"] if not r.startswith("fips-"))

    names = sorted(
        (n for n, lab in kp.items() if lab.get("karpenter.k8s.aws/instance-family") in ACCELERATED_FAMILIES),
        key=lambda n: (
            ACCELERATED_FAMILIES.index(kp[n]["karpenter.k8s.aws/instance-family"]),
            int(kp[n]["karpenter.k8s.aws/instance-cpu"]),
        ),
    ) + list(CPU_TYPES)
    inst_lines, od_lines, spot_lines = [], [], []
    for name in names:
        if name not in vpc:  # trn2.48xlarge: karpenter's VPC limits carry no card layout for it
            print(f"  {name}: no network-card data in --kp-vpc; left out", file=sys.stderr)
            continue
        lab = kp[name]

        def get(k: str, lab: dict[str, str] = lab) -> str | None:
            return lab.get(f"karpenter.k8s.aws/{k}")

        family = get("instance-family")
        mem_mib = int(get("instance-memory"))
        assert mem_mib % 1024 == 0, name
        acc_raw = get("instance-gpu-name") or get("instance-accelerator-name")
        acc = accelerator_names[acc_raw] if acc_raw else None
        count = int(get("instance-gpu-count") or get("instance-accelerator-count") or 0)
        acc_mem = int(get("instance-gpu-memory") or neuron_memory_mib.get(acc or "", 0))
        efa = int(lab.get("vpc.amazonaws.com/efa", 0))
        total, cards = vpc[name]
        baseline = int(get("instance-network-bandwidth")) / 1000
        burst = burst_gbps(van[name]["network"], baseline) if name in van else None
        fields = {
            "name": name,
            "family": family,
            "vcpu": int(get("instance-cpu")),
            "memory_gib": mem_mib // 1024,
            "accelerator": acc,
            "accelerator_kind": (kinds.get(acc, "gpu") if acc else None),
            "accelerator_count": count,
            "accelerator_memory_mib": acc_mem,
            "instance_store_gb": int(get("instance-local-nvme") or 0),
            "network_baseline_gbps": num(baseline),
            "network_burst_gbps": (num(burst) if burst is not None else None),
            "efa_interfaces": efa,
            "max_interfaces": total,
            "cards": cards,
            "efa_cards": efa_cards(efa, len(cards)),
        }
        cites = ["kp-vpc", *(["van-od"] if name in van else []), *(["neuron-docs"] if acc in neuron_memory_mib else [])]
        inst_lines.append({**fields, "source": "kp-types", "as_of": "2026-07-11", "cites": cites})

        if name in CPU_TYPES or (name not in van and name in kp_price):
            # CPU types, and a type launched after the van snapshot (g7, 2026-06-18): AWS's Price List for
            # us-east-1 (kp-price) prices it there, so it is sold there; other regions stay unknown.
            od_lines.append(
                {
                    "instance_type": name,
                    "region": "us-east-1",
                    "usd_per_hour": money(kp_price[name]),
                    "source": "kp-price",
                    "as_of": "2026-07-20",
                }
            )
        if name in CPU_TYPES:
            continue
        od = {
            r: Decimal(str(p["onDemand"]))
            for r, p in van.get(name, {}).get("pricing", {}).items()
            if r in regions and p.get("onDemand")
        }
        for r in sorted(od):
            od_lines.append(
                {
                    "instance_type": name,
                    "region": r,
                    "usd_per_hour": money(od[r]),
                    "source": "van-od",
                    "as_of": "2026-01-21",
                }
            )
        for r, p in sorted(raw.get(name, {}).get("pricing", {}).items()):
            lin = p.get("linux", {})
            if r not in od or not all(lin.get(k) for k in ("ondemand", "spot_min", "spot_avg", "spot_max")):
                continue
            base = Decimal(lin["ondemand"])
            q = Decimal("0.0001")
            d = {k: (1 - Decimal(lin[f"spot_{k}"]) / base).quantize(q, ROUND_HALF_EVEN) for k in ("min", "avg", "max")}
            # spot_min is the cheapest zone (highest discount), spot_max the dearest. A discount <= 0 is a zone
            # with no spot offer (its price equals on-demand): the mean is dropped when it is not positive,
            # and the low end is then unknown (null), never kept as 0.
            if d["avg"] <= 0 or d["min"] <= 0:
                continue
            low = d["max"] if d["max"] > 0 else None
            spot_lines.append(
                {
                    "instance_type": name,
                    "region": r,
                    "mean": str(d["avg"]),
                    "low": None if low is None else str(low),
                    "high": str(d["min"]),
                    "source": "van-spot",
                    "as_of": "2025-11-30",
                }
            )
    means = sorted(Decimal(r["mean"]) for r in spot_lines)
    mid = len(means) // 2
    median = means[mid] if len(means) % 2 else (means[mid - 1] + means[mid]) / 2
    default = {
        "discount": str(median),
        "source": "van-spot",
        "as_of": "2025-11-30",
        "note": f"the median of the {len(means)} means below ({means[0]}-{means[-1]}): an estimate for a "
        "(type, region) with no row, flagged as such",
    }
    out: Path = a.out
    write_json(out / "instances.json", ABOUT["instances"], {"instance_types": inst_lines + onprem_rows()})
    # Where the snapshot says each type is sold (its own 'availability' list, kept apart from the price
    # table): tests check that every such region has a price row.
    offered = {n: sorted(r for r in van[n].get("availability", []) if r in regions) for n in names if n in van}
    offered |= {n: ["us-east-1"] for n in names if n not in van and n not in CPU_TYPES and n in kp_price}
    write_json(out / "prices.json", ABOUT["prices"], {"offered_in": offered, "on_demand": od_lines})
    write_json(out / "spot.json", ABOUT["spot"], {"default": default, "distribution": spot_lines})
    (out / "regions.yaml").write_text(REGIONS_YAML.format(codes=", ".join(regions)))
    print(
        f"{len(inst_lines)} types, {len(od_lines)} on-demand rows, {len(spot_lines)} spot rows, {len(regions)} regions"
    )
    for name in names:  # cross-check: the two pipelines agree on us-east-1 list prices
        v = van.get(name, {}).get("pricing", {}).get("us-east-1", {}).get("onDemand")
        if v is not None and name in kp_price and Decimal(str(v)) != kp_price[name]:
            print(f"  us-east-1 {name}: van-od {v} != kp-price {kp_price[name]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
