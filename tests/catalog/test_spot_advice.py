"""Spot risk: the Spot Instance Advisor's interruption band per (type, Region), from a recorded excerpt of its
public JSON (tests/catalog/fixtures/aws/spot-advisor-data.json, format in SOURCES.md there), dated by the S3 object's
Last-Modified header; shown by `gpuinfra catalog TYPE` and read by the training planner when the spec gives no rate."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.catalog.refresh import Source, refresh
from gpuinfra.catalog.refresh.advisor import last_modified_date, parse
from gpuinfra.errors import InputError
from helpers import ROOT

FIXTURE = ROOT / "tests" / "catalog" / "fixtures" / "aws"


def test_the_excerpt_gives_linux_bands_for_carried_types_in_catalog_regions() -> None:
    data = json.loads((FIXTURE / "spot-advisor-data.json").read_text())
    advice = parse(data, {"g6.xlarge", "p5.48xlarge"}, {"us-east-1", "us-west-2"}, "fixture")
    got = [(a.instance_type, a.region, a.band.label, a.band.max_percent, a.savings_percent) for a in advice]
    # By hand: Linux only (the Windows g6 row says 10-15%), c7i not asked for, us-gov-west-1 not a catalog Region;
    # r indexes `ranges` (1 -> "5-10%", max 11; 4 -> ">20%", max 100; 0 -> "<5%", max 5).
    assert got == [
        ("g6.xlarge", "us-east-1", "5-10%", 11, 57),
        ("g6.xlarge", "us-west-2", "<5%", 5, 63),
        ("p5.48xlarge", "us-east-1", ">20%", 100, 62),
    ]


def test_the_date_is_the_last_modified_header() -> None:
    assert last_modified_date("Tue, 01 Dec 2026 06:12:09 GMT", "x") == datetime.date(2026, 12, 1)
    with pytest.raises(InputError, match="no Last-Modified date"):
        last_modified_date(None, "x")


def test_refresh_writes_the_advice_with_its_date(tmp_path: Path) -> None:
    refresh(Source(FIXTURE), tmp_path, load_catalog())
    data = json.loads((tmp_path / "spot_advice.json").read_text())
    rows = [(r["instance_type"], r["region"], r["band"], r["band_max_percent"], r["as_of"]) for r in data["advice"]]
    assert rows == [
        ("g6.xlarge", "us-east-1", "5-10%", 11, "2026-12-01"),
        ("g6.xlarge", "us-west-2", "<5%", 5, "2026-12-01"),
        ("p5.48xlarge", "us-east-1", ">20%", 100, "2026-12-01"),
    ]
    assert {r["source"] for r in data["advice"]} == {"aws-spot-advisor"}


def _with_advice(band: str, max_percent: int):  # type: ignore[no-untyped-def]
    import dataclasses

    from gpuinfra.catalog.models import SpotAdvice

    row = SpotAdvice(
        instance_type="p5.48xlarge",
        region="us-east-1",
        band=band,
        band_max_percent=max_percent,
        savings_percent=62,
        source="aws-spot-advisor",
        as_of=datetime.date(2026, 12, 1),
    )
    return dataclasses.replace(load_catalog(), spot_advice=(row,))


def test_the_planner_takes_the_bands_upper_bound_when_the_spec_gives_no_rate() -> None:
    from gpuinfra.plan.training import plan_training
    from helpers import DELETE, inputs_for

    inputs = inputs_for("llm-train-eks", {"failure.spot_interruption_rate_monthly": DELETE})
    spec, org = inputs.spec, inputs.org.org
    # The bundled catalog has no advisor rows yet: the stated default.
    plan = plan_training(spec, org, load_catalog())  # type: ignore[arg-type]
    assert plan.spot_interruption_rate_monthly == 0.05 and "default" in plan.spot_interruption_source
    # With the advisor's ">20%" band for p5.48xlarge in us-east-1, its upper bound (100%/month) is used.
    plan = plan_training(spec, org, _with_advice(">20%", 100))  # type: ignore[arg-type]
    assert plan.spot_interruption_rate_monthly == 1.0 and ">20%" in plan.spot_interruption_source
    assert plan.checkpoint is not None
    # By hand (plan/checkpoint.py): 16 nodes / 5000 h MTBF + spot nodes x 1.0 / 730 h per month.
    expected = 16 / 5000 + plan.spot_nodes * 1.0 / 730
    assert plan.checkpoint.interruptions_per_hour == pytest.approx(expected)
    # A rate the spec gives wins over the catalog.
    given = inputs_for("llm-train-eks").spec
    plan = plan_training(given, org, _with_advice(">20%", 100))  # type: ignore[arg-type]
    assert plan.spot_interruption_rate_monthly == 0.2


def test_catalog_type_shows_the_band_and_its_date() -> None:
    from gpuinfra.report.build.catalog import detail_out

    catalog = _with_advice("5-10%", 11)
    info = catalog.instance("p5.48xlarge")
    assert info is not None
    prices = {p.region: p for p in detail_out(catalog, info).prices}
    assert (prices["us-east-1"].interruption_band, str(prices["us-east-1"].interruption_as_of)) == (
        "5-10%",
        "2026-12-01",
    )
    assert prices["us-west-2"].interruption_band is None  # no row: unknown, shown as '-'
