"""`gpuinfra catalog refresh`'s snapshot part (once tools/catalog_build.py) on small snapshots written here in the
sources' own formats (karpenter's instance-type reference and generated Go tables, ec2instances.info's JSON,
botocore's endpoints.json): what it keeps, what it drops, and that the same input gives byte-identical files."""

from __future__ import annotations

import json
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

import pytest
from gpuinfra.catalog.refresh import snapshots
from gpuinfra.errors import InputError


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


def write_snapshots(folder: Path) -> Path:
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
        "kp-types.md": types,
        "kp-vpc.go": vpc + "\n}\n",
        "van-od.js": "// Last updated: 2026-01-21\nconst all = " + json.dumps(van_od) + ";\n",
        "van-spot.json": json.dumps(raw),
        "endpoints.json": json.dumps(endpoints),
    }
    for name, text in files.items():
        (folder / name).write_text(text)
    assert snapshots.has_snapshots(folder)
    return folder


def build(folder: Path, snaps: Path) -> dict[str, Any]:
    folder.mkdir()
    snapshots.rebuild(snaps, folder)
    return {n: (folder / n).read_bytes() for n in ("instances.json", "spot.json", "regions.yaml")}


def test_the_generator_keeps_the_snapshots_figures_and_drops_what_is_not_a_discount(tmp_path: Path) -> None:
    snaps = write_snapshots(tmp_path)
    first = build(tmp_path / "a", snaps)
    assert build(tmp_path / "b", snaps) == first  # deterministic: byte-identical files
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
    assert (g6["accelerator"], g6["accelerator_kind"]) == ("L4", "gpu")  # karpenter's "l4", via accelerators.yaml
    assert types["g7.2xlarge"]["accelerator"] == "RTX-PRO-4500"
    assert types["g7.2xlarge"]["network_burst_gbps"] is None  # not in the van snapshot: unknown
    assert [n for n in types if types[n].get("onprem")] == ["dgx-h100.system", "gb200-nvl72.tray"]  # kept as written
    assert b"codes: [eu-west-2, us-east-1]" in first["regions.yaml"]  # FIPS endpoints left out


def test_a_spot_row_needs_a_price_the_refresh_wrote(tmp_path: Path) -> None:
    snaps = write_snapshots(tmp_path)
    snapshots.rebuild(snaps, tmp_path / "out", priced={("g6.xlarge", "us-east-1")})
    assert len(json.loads((tmp_path / "out" / "spot.json").read_text())["distribution"]) == 1
    with pytest.raises(InputError, match="no discount for any"):  # no priced pair: no median to take
        snapshots.rebuild(snaps, tmp_path / "none", priced={("g6.xlarge", "eu-west-2")})


def test_efa_cards_follow_awss_rule_or_refuse_to_guess() -> None:
    efa_cards = snapshots.efa_cards
    assert efa_cards(32, 32) == list(range(32))
    assert efa_cards(16, 17) == list(range(1, 17))  # p6-b300: card 0 carries no EFA
    assert efa_cards(0, 1) == []
    with pytest.raises(InputError, match="no rule says which cards"):
        efa_cards(3, 8)
