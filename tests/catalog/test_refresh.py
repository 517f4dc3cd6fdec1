"""`gpuinfra catalog refresh --from FIXTURE` on recorded excerpts of AWS's Price List files (tests/catalog/fixtures/aws,
see its SOURCES.md for the format and where it is documented): the rows written equal the rows worked out by hand
from the excerpt below, each dated by its own Region file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.catalog.refresh import Source, refresh
from gpuinfra.errors import InputError
from helpers import ROOT, gpuinfra

FIXTURE = ROOT / "tests" / "catalog" / "fixtures" / "aws"

# Worked out by hand from the excerpt: Linux, shared tenancy, no pre-installed software, capacitystatus Used,
# on-demand, hourly; the Windows, Dedicated, UnusedCapacityReservation, Reserved and SQL Web rows are not the
# product; p5e's 0.0000000000 is no price (unknown); c7i.large is carried by no catalog row and not accelerated;
# g8x.4xlarge and trn3.48xlarge are accelerated types the catalog lacks; us-gov-west-1 is no catalog Region.
EXPECTED = [
    ("g6.xlarge", "eu-central-1", "1.0064", "2026-11-02"),  # JSON file published 2026-11-02T12:00:00Z
    ("g6.xlarge", "us-east-1", "0.8048", "2026-11-20"),  # CSV "Publication Date","2026-11-20T18:12:40Z"
    ("g6.xlarge", "us-west-2", "0.8048", "2026-11-18"),
    ("g7e.2xlarge", "us-east-1", "3.36", "2026-11-20"),  # 3.3600000000; the SQL Web row says 4.10
    ("inf2.xlarge", "us-west-2", "0.7582", "2026-11-18"),
    ("m7i.xlarge", "us-east-1", "0.2016", "2026-11-20"),
    ("p5.48xlarge", "us-east-1", "55.04", "2026-11-20"),
    ("p5.48xlarge", "us-west-2", "55.04", "2026-11-18"),
]


def rows(path: Path) -> list[tuple[str, str, str, str]]:
    data = json.loads((path / "prices.json").read_text())
    assert {r["source"] for r in data["on_demand"]} == {"aws-price-list"}
    return [(r["instance_type"], r["region"], r["usd_per_hour"], r["as_of"]) for r in data["on_demand"]]


def test_refresh_from_the_recorded_excerpt_gives_the_hand_computed_rows(tmp_path: Path) -> None:
    done = gpuinfra("catalog", "refresh", "--from", str(FIXTURE), "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert rows(tmp_path) == EXPECTED
    data = json.loads((tmp_path / "prices.json").read_text())
    assert data["offered_in"]["p5e.48xlarge"] == ["us-east-1"]  # listed, no price: offered, unknown
    assert "p5e.48xlarge" not in {r[0] for r in rows(tmp_path)}
    assert data["offered_in"]["g6.xlarge"] == ["eu-central-1", "us-east-1", "us-west-2"]
    assert data["not_in_catalog"] == [
        {"instance_type": "g8x.4xlarge", "regions": ["us-east-1"]},
        {"instance_type": "trn3.48xlarge", "regions": ["eu-central-1"]},
    ]
    assert "oldest publication date: 2026-11-02" in done.stdout
    assert "g8x.4xlarge" in done.stdout and "trn3.48xlarge" in done.stdout


def test_the_same_excerpt_gives_byte_identical_files(tmp_path: Path) -> None:
    catalog = load_catalog()
    refresh(Source(FIXTURE), tmp_path / "a", catalog)
    refresh(Source(FIXTURE), tmp_path / "b", catalog)
    assert (tmp_path / "a" / "prices.json").read_bytes() == (tmp_path / "b" / "prices.json").read_bytes()


def test_the_written_rows_fit_the_catalog(tmp_path: Path) -> None:
    """Every row names a carried type and a catalog Region and is dated: the loader's checks would pass."""
    catalog = load_catalog()
    result = refresh(Source(FIXTURE), tmp_path, catalog)
    assert result.oldest is not None and result.oldest.isoformat() == "2026-11-02"
    for name, region, usd, _ in rows(tmp_path):
        assert catalog.instance(name) is not None and region in catalog.regions and float(usd) > 0


def test_a_missing_region_file_is_an_input_error_naming_it(tmp_path: Path) -> None:
    broken = tmp_path / "aws"
    index = FIXTURE / "offers/v1.0/aws/AmazonEC2/current/region_index.json"
    (broken / index.relative_to(FIXTURE)).parent.mkdir(parents=True)
    (broken / index.relative_to(FIXTURE)).write_text(index.read_text())
    with pytest.raises(InputError, match=r"cannot read .*eu-central-1/index\.json"):
        refresh(Source(broken), tmp_path / "out", load_catalog())
    done = gpuinfra("catalog", "refresh", "--from", str(broken), "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and "Traceback" not in done.stderr and "eu-central-1" in done.stderr


def test_two_prices_for_one_product_are_refused_not_guessed(tmp_path: Path) -> None:
    from gpuinfra.catalog.refresh.offers import parse_csv

    text = (FIXTURE / "offers/v1.0/aws/AmazonEC2/20261120181240/us-east-1/index.csv").read_text()
    lines = text.splitlines()
    twice = "\n".join([*lines, lines[6].replace("A1G6XLINUX000001", "A1G6XLINUX0000ZZ").replace("0.8048", "0.9")])
    with pytest.raises(InputError, match=r"g6\.xlarge has two Linux on-demand prices"):
        parse_csv(twice.splitlines(keepends=True), "us-east-1", "index.csv")
