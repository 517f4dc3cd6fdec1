"""tools/catalog_build.py's rules on small snapshots written here in the sources' own formats (karpenter's
instance-type reference and generated Go tables, ec2instances.info's JSON, botocore's endpoints.json): what
it keeps, what it drops, and that the same input gives byte-identical files."""

from __future__ import annotations

import importlib.util
import json
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from helpers import ROOT


def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("catalog_build", ROOT / "tools" / "catalog_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kp_section(name: str, family: str, cpu: int, mem_mib: int, net: int, gpu: tuple[str, int, int] | None) -> str:
    labels = {
        "instance-family": family,
        "instance-cpu": cpu,
        "instance-memory": mem_mib,
        "instance-network-bandwidth": net,
    }
    if gpu:
        labels |= {"instance-gpu-name": gpu[0], "instance-gpu-count": gpu[1], "instance-gpu-memory": gpu[2]}
    rows = "".join(f" |karpenter.k8s.aws/{k}|{v}|\n" for k, v in labels.items())
    return f"\n### `{name}`\n#### Labels\n | Label | Value |\n |--|--|\n{rows}#### Resources\n |cpu|1|\n"


def vpc_entry(name: str, per_card: list[int]) -> str:
    cards = "".join(
        f"\t\t\t{{\n\t\t\t\tMaximumNetworkInterfaces: {m},\n\t\t\t\tNetworkCardIndex:         {i},\n\t\t\t}},\n"
        for i, m in enumerate(per_card)
    )
    return (
        f'\n\t"{name}": {{\n\t\tInterface:               {sum(per_card)},\n'
        f"\t\tNetworkCards: []NetworkCard{{\n{cards}\t\t}},\n\t}},"
    )


def write_snapshots(folder: Path) -> dict[str, Path]:
    types = "# reference\n" + "".join(
        (
            kp_section("g6.xlarge", "g6", 4, 16384, 2500, ("l4", 1, 22888)),
            kp_section("g7.2xlarge", "g7", 8, 32768, 60000, ("rtx-pro-4500", 1, 32768)),
            kp_section("m7i.xlarge", "m7i", 4, 16384, 1562, None),
            kp_section("m7i.2xlarge", "m7i", 8, 32768, 3125, None),
        )
    )
    vpc = "var Limits = map[string]*VPCLimits{" + "".join(
        vpc_entry(n, [4]) for n in ("g6.xlarge", "g7.2xlarge", "m7i.xlarge", "m7i.2xlarge")
    )
    price = '"g6.xlarge": 0.804800, "g7.2xlarge": 2.520000, "m7i.xlarge": 0.201600, "m7i.2xlarge": 0.403200,'
    van_od = [
        {
            "name": "g6.xlarge",
            "network": "Up to 10 Gigabit",
            "pricing": {"us-east-1": {"onDemand": 0.8048}, "eu-west-2": {"onDemand": 1.0216}, "us-gov-west-1": {}},
            "availability": ["us-east-1", "eu-west-2", "us-gov-west-1"],
        }
    ]
    lin = {  # on-demand and spot over the region's zones
        "us-east-1": {"ondemand": "0.8048", "spot_min": "0.3", "spot_avg": "0.4", "spot_max": "0.5"},
        "eu-west-2": {"ondemand": "1.0216", "spot_min": "1.0216", "spot_avg": "1.0216", "spot_max": "1.0216"},
    }
    raw = [{"instance_type": "g6.xlarge", "pricing": {r: {"linux": v} for r, v in lin.items()}}]
    endpoints = {
        "partitions": [
            {"partition": "aws", "services": {"ec2": {"endpoints": {"us-east-1": {}, "eu-west-2": {}, "fips-x": {}}}}}
        ]
    }
    files = {
        "--kp-types": ("types.md", types),
        "--kp-vpc": ("vpc.go", vpc + "\n}\n"),
        "--kp-price": ("price.go", price),
        "--van-od": ("od.js", "// Last updated: 2026-01-21\nconst all = " + json.dumps(van_od) + ";\n"),
        "--van-spot": ("raw.json", json.dumps(raw)),
        "--regions": ("endpoints.json", json.dumps(endpoints)),
    }
    out = {}
    for flag, (name, text) in files.items():
        (folder / name).write_text(text)
        out[flag] = folder / name
    return out


def build(folder: Path, snaps: dict[str, Path]) -> dict[str, Any]:
    folder.mkdir()
    args = [str(x) for flag, path in snaps.items() for x in (flag, path)] + ["--out", str(folder)]
    assert tool().main(args) == 0
    return {n: (folder / n).read_bytes() for n in ("instances.json", "prices.json", "spot.json", "regions.yaml")}


def test_the_generator_keeps_the_snapshots_figures_and_drops_what_is_not_a_discount(tmp_path: Path) -> None:
    snaps = write_snapshots(tmp_path)
    first = build(tmp_path / "a", snaps)
    assert build(tmp_path / "b", snaps) == first  # deterministic: byte-identical files
    prices = json.loads(first["prices.json"])
    rows = {(r["instance_type"], r["region"]): (r["usd_per_hour"], r["source"]) for r in prices["on_demand"]}
    assert rows == {
        ("g6.xlarge", "eu-west-2"): ("1.0216", "van-od"),
        ("g6.xlarge", "us-east-1"): ("0.8048", "van-od"),  # GovCloud left out: not a commercial EC2 region
        ("g7.2xlarge", "us-east-1"): ("2.52", "kp-price"),  # newer than the van snapshot: AWS's us-east-1 list
        ("m7i.xlarge", "us-east-1"): ("0.2016", "kp-price"),
        ("m7i.2xlarge", "us-east-1"): ("0.4032", "kp-price"),
    }
    assert prices["offered_in"]["g6.xlarge"] == ["eu-west-2", "us-east-1"]
    assert prices["offered_in"]["g7.2xlarge"] == ["us-east-1"]
    spot = json.loads(first["spot.json"])["distribution"]
    assert [(s["instance_type"], s["region"]) for s in spot] == [("g6.xlarge", "us-east-1")]  # eu-west-2: spot = OD
    q = Decimal("0.0001")
    od = Decimal("0.8048")
    assert spot[0]["mean"] == str((1 - Decimal("0.4") / od).quantize(q, ROUND_HALF_EVEN))  # 0.5030
    assert spot[0]["high"] == str((1 - Decimal("0.3") / od).quantize(q, ROUND_HALF_EVEN))  # cheapest zone
    assert spot[0]["low"] == str((1 - Decimal("0.5") / od).quantize(q, ROUND_HALF_EVEN))  # dearest zone
    types = {t["name"]: t for t in json.loads(first["instances.json"])["instance_types"]}
    g6 = types["g6.xlarge"]
    assert (g6["network_baseline_gbps"], g6["network_burst_gbps"], g6["cards"]) == (2.5, 10, [4])
    assert types["g7.2xlarge"]["network_burst_gbps"] is None  # not in the van snapshot: unknown
    assert b"codes: [eu-west-2, us-east-1]" in first["regions.yaml"]  # FIPS endpoints left out


def test_efa_cards_follow_awss_rule_or_refuse_to_guess() -> None:
    efa_cards = tool().efa_cards
    assert efa_cards(32, 32) == list(range(32))
    assert efa_cards(16, 17) == list(range(1, 17))  # p6-b300: card 0 carries no EFA
    assert efa_cards(0, 1) == []
    with pytest.raises(SystemExit, match="no rule says which cards"):
        efa_cards(3, 8)
