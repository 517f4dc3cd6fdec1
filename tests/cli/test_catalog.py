"""`gpuinfra catalog` end to end through the console entry point: filters, one type's prices and quotas, the
region list, formats and exit codes.

Expected figures come from the cited sources, typed in here: karpenter's instance-type reference (accelerators,
EFA, network cards), ec2instances.info's snapshots (prices, spot over zones), AWS's "Amazon EC2 instance type
quotas" page (codes).
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from helpers import gpuinfra


def run_json(*args: str) -> dict[str, Any]:
    done = gpuinfra("catalog", *args, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def names(report: dict[str, Any]) -> set[str]:
    return {t["name"] for t in report["types"]}


def test_accelerator_h100_lists_p5_4xlarge_in_the_table() -> None:
    done = gpuinfra("catalog", "--accelerator", "H100")
    assert done.returncode == 0, done.stderr
    rows = {line.split("│")[1].strip() for line in done.stdout.splitlines() if line.startswith("│")}
    assert {"p5.4xlarge", "p5.48xlarge"} <= rows
    assert "g6.xlarge" not in rows and "p5en.48xlarge" not in rows  # L4, H200


def test_accelerator_filter_in_json_carries_the_hardware() -> None:
    report = run_json("--accelerator", "h100")  # case-insensitive, as users type it
    assert report["version"] == 1 and report["command"] == "catalog"
    assert report["filters"] == {"accelerator": "h100"}
    p5 = next(t for t in report["types"] if t["name"] == "p5.4xlarge")
    # karpenter's reference: 16 vCPU, 256 GiB, 1 x H100 (81,920 MiB), 1 EFA, 100 Gbps
    assert (p5["vcpu"], p5["memory_gib"], p5["accelerator_count"], p5["accelerator_memory_mib"]) == (16, 256, 1, 81920)
    assert (p5["efa_interfaces"], p5["network_baseline_gbps"], p5["gpu_product"]) == (1, 100, "NVIDIA-H100-80GB-HBM3")
    assert Decimal(p5["on_demand_min_usd"]) == Decimal("6.88")  # us-east-1, the cheapest region it is sold in
    assert {s["id"] for s in report["sources"]} >= {"kp-types"}


def test_memory_and_efa_filters() -> None:
    # >= 90 GiB per accelerator with EFA: H200 141 GiB (p5e, p5en), B200 179 GiB, B300 268 GiB, RTX PRO 6000
    # 96 GiB on the g7e sizes with an EFA (8xl, 12xl: 1; 24xl: 2; 48xl: 4).
    report = run_json("--min-memory-gib", "90", "--efa")
    assert names(report) == {
        "p5e.48xlarge",
        "p5en.48xlarge",
        "p6-b200.48xlarge",
        "p6-b300.48xlarge",
        "g7e.8xlarge",
        "g7e.12xlarge",
        "g7e.24xlarge",
        "g7e.48xlarge",
    }
    # L4 without EFA: g6 up to 4xlarge, the fractional g6f slices, gr6.4xlarge (the 8xlarge sizes carry an EFA)
    no_efa = run_json("--accelerator", "L4", "--no-efa")
    assert {"g6.xlarge", "g6.4xlarge", "g6f.large", "gr6.4xlarge"} <= names(no_efa)
    assert not {"g6.8xlarge", "g6.48xlarge", "gr6.8xlarge"} & names(no_efa)
    assert all(t["efa_interfaces"] == 0 for t in no_efa["types"])


def test_region_filter_keeps_types_priced_there() -> None:
    # ec2instances.info (2026-01-21) sells p5.4xlarge in 9 regions, not in eu-central-1; p5.48xlarge not there either
    report = run_json("--accelerator", "H100", "--region", "us-east-2")
    assert {"p5.4xlarge", "p5.48xlarge"} <= names(report)
    assert "p5.4xlarge" not in names(run_json("--accelerator", "H100", "--region", "eu-central-1"))


def test_one_type_shows_prices_by_region_with_dates_and_the_spot_distribution() -> None:
    report = run_json("p5.48xlarge")
    detail = report["detail"]
    assert detail["type"]["name"] == "p5.48xlarge" and report["types"] == []
    by_region = {p["region"]: p for p in detail["prices"]}
    west = by_region["us-west-2"]
    assert Decimal(west["on_demand_usd"]) == Decimal("55.04") and west["on_demand_as_of"] == "2026-01-21"
    spot = west["spot"]
    # van-spot us-west-2 (2025-11-30): on-demand 55.04, spot avg 18.037475 -> 1 - 18.037475/55.04 = 0.6723
    assert Decimal(spot["mean_discount"]) == Decimal("0.6723") and spot["as_of"] == "2025-11-30"
    assert Decimal(spot["mean_usd"]) == Decimal("18.0366")  # 55.04 x (1 - 0.6723)
    low, high = Decimal(spot["low_discount"]), Decimal(spot["high_discount"])
    assert 0 < low <= Decimal(spot["mean_discount"]) <= high < 1
    # sold as Capacity Blocks, whose only rates found expired on 2025-01-01: unknown, with the reason
    assert west["capacity_block_usd"] is None and "2025-01-01" in west["capacity_block_note"]
    assert {"van-od", "van-spot", "kp-types", "capacity-blocks-price"} <= {s["id"] for s in report["sources"]}


def test_one_type_shows_its_quota_codes() -> None:
    quotas = {(q["purchase"], q["scope"]): q for q in run_json("p5.4xlarge")["detail"]["quotas"]}
    assert quotas[("on_demand", "account")]["code"] == "L-417A185B"  # Running On-Demand P instances
    assert quotas[("spot", "account")]["code"] == "L-C4BD4855"  # All P5 Spot Instance Requests
    assert quotas[("capacity_block", "account")]["code"] == "L-DA6814F2"  # Concurrent P5 Capacity Blocks/account
    assert quotas[("capacity_block", "organization")]["code"] == "L-8131B2C6"
    inf = {q["purchase"]: q["code"] for q in run_json("inf2.xlarge")["detail"]["quotas"]}
    assert inf == {"on_demand": "L-1945791B", "spot": "L-B5D1601B"}  # Running On-Demand Inf; All Inf Spot
    b300 = {q["purchase"]: q for q in run_json("p6-b300.48xlarge")["detail"]["quotas"]}
    assert b300["spot"]["code"] is None and "P6" in b300["spot"]["reason"]  # no AWS source names it


def test_p6_b300_shows_card_0_without_efa() -> None:
    t = run_json("p6-b300.48xlarge")["detail"]["type"]
    assert (t["network_cards"], t["efa_interfaces"], t["efa_cards"]) == (17, 16, list(range(1, 17)))
    text = gpuinfra("catalog", "p6-b300.48xlarge").stdout
    assert "EFA on cards 1, 2," in text and "17 (68 interfaces)" in text


def test_regions_lists_the_newest_ec2_regions() -> None:
    regions = {r["region"]: r["types_priced"] for r in run_json("--regions")["regions"]}
    assert {"ap-east-2", "ap-southeast-6", "us-east-1"} <= regions.keys()
    assert regions["us-east-1"] > 50


def test_markdown_renders_the_same_detail() -> None:
    done = gpuinfra("catalog", "g6e.xlarge", "--format", "markdown")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("## gpuinfra catalog")
    assert "| us-east-1 | $1.8610 |" in done.stdout  # van-od g6e.xlarge us-east-1 1.861
    # free text is escaped for GitHub Markdown (report.format.markdown_text): on\_demand renders as on_demand
    assert "| on\\_demand | account | L-DB2E81BA |" in done.stdout


def test_unknown_names_exit_2_with_what_exists() -> None:
    for args, expected in (
        (("p9.48xlarge",), "unknown instance type 'p9.48xlarge'"),
        (("trn2.48xlarge",), "instance type not carried 'trn2.48xlarge'"),  # no per-card network data cited
        (("--accelerator", "X100"), "no catalog type carries the accelerator 'X100'"),
        (("--region", "mars-east-1"), "unknown region 'mars-east-1'"),
    ):
        done = gpuinfra("catalog", *args)
        assert done.returncode == 2, args
        assert expected in done.stderr and "hint:" in done.stderr and "Traceback" not in done.stderr


def test_a_capacity_block_only_type_says_it_has_no_on_demand_price() -> None:
    # p5e.48xlarge: ec2instances.info (2026-01-21) lists it with no on-demand price in any region
    report = run_json("p5e.48xlarge")
    assert report["detail"]["prices"] == []
    assert "sold as Capacity Blocks" in gpuinfra("catalog", "p5e.48xlarge").stdout


def test_json_is_byte_identical_run_to_run() -> None:
    first = gpuinfra("catalog", "--efa", "--format", "json").stdout
    assert first == gpuinfra("catalog", "--efa", "--format", "json").stdout
    assert json.loads(first)["types"]  # and not empty


def test_region_filter_shows_that_regions_own_price_not_the_cheapest() -> None:
    # ec2instances.info (2026-01-21): p5.48xlarge is $55.04/h in us-east-1 and us-west-2 (the cheapest) and
    # $58.8928/h in eu-north-1 (55.04 x 1.07); p5.4xlarge $6.88/h in us-west-2.
    north = {t["name"]: t for t in run_json("--accelerator", "H100", "--region", "eu-north-1")["types"]}
    assert Decimal(north["p5.48xlarge"]["region_on_demand_usd"]) == Decimal("58.8928")
    assert north["p5.48xlarge"]["region"] == "eu-north-1"
    west = {t["name"]: t for t in run_json("--accelerator", "H100", "--region", "us-west-2")["types"]}
    assert Decimal(west["p5.48xlarge"]["region_on_demand_usd"]) == Decimal("55.04")
    assert Decimal(west["p5.4xlarge"]["region_on_demand_usd"]) == Decimal("6.88")
    done = gpuinfra("catalog", "--accelerator", "H100", "--region", "eu-north-1")
    assert done.returncode == 0, done.stderr
    assert "eu-north-1 $/h" in done.stdout and "$58.8928" in done.stdout and "$55.04" not in done.stdout
