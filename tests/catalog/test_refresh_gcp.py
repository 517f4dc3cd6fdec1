"""`gpuinfra catalog refresh --cloud gcp --from FIXTURE` on recorded Google responses (tests/catalog/fixtures/gcp,
see its SOURCES.md): the zones and prices written to g2.yaml equal the ones worked out by hand below from the
recording, each region dated by its own SKUs; the catalog reads the file it writes; the recording is held to the
APIs' own response schemas (the Discovery documents google-api-python-client ships)."""

from __future__ import annotations

import datetime
import importlib
import json
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from gpuinfra.clouds.gcp.catalog.book import DATA_FILE, gcp_book
from gpuinfra.clouds.gcp.catalog.discovery import document
from helpers import ROOT, gpuinfra
from ruamel.yaml import YAML

FIXTURE = ROOT / "tests" / "catalog" / "fixtures" / "gcp"
SKUS = FIXTURE / "cloudbilling.googleapis.com" / "v1" / "services" / "6F81-5844-456A"
MACHINES = FIXTURE / "compute.googleapis.com/compute/v1/projects/acme-serve-prod/aggregated/machineTypes.json"
PROJECT = "acme-serve-prod"

# By hand from the recording: us-central1 cores $0.024988 and RAM $0.002927 on demand, $0.009995 and $0.001171 Spot;
# g2-standard-4 = 4 x core + 16 GiB x RAM, -8 = 8 x core + 32 x RAM, -96 = 96 x core + 384 x RAM; the L4 $0.56004 (the
# last of its timeline, not the older $0.70), Spot $0.2231; the commitment SKU is no list price. europe-west4: 4 x
# $0.027 + 16 x $0.003 = $0.156, no Spot SKU there (no Spot row). asia-southeast1: an L4 rate but no core or RAM
# (no host row: unknown). Only the zones listing a carried G2 type count (the A2 type does not).
EXPECTED_PRICES = {
    "asia-southeast1": {"as_of": datetime.date(2026, 11, 27), "gpu": {"on_demand": 0.69092}, "host": {}},
    "europe-west4": {
        "as_of": datetime.date(2026, 11, 29),
        "gpu": {"on_demand": 0.58804},
        "host": {"g2-standard-4": {"on_demand": 0.156}},
    },
    "us-central1": {
        "as_of": datetime.date(2026, 11, 28),  # the core and RAM SKUs' 2026-11-28, the oldest of the six
        "gpu": {"on_demand": 0.56004, "spot": 0.2231},
        "host": {
            "g2-standard-4": {"on_demand": 0.146784, "spot": 0.058716},
            "g2-standard-8": {"on_demand": 0.293568, "spot": 0.117432},
            "g2-standard-96": {"on_demand": 3.522816, "spot": 1.409184},
        },
    },
}
EXPECTED_ZONES = {
    "asia-southeast1": ["asia-southeast1-b"],
    "europe-west4": ["europe-west4-a", "europe-west4-b"],
    "us-central1": ["us-central1-a", "us-central1-b", "us-central1-c"],
}


def _refresh(out: Path, source: Path = FIXTURE) -> Any:
    done = gpuinfra(
        "catalog", "refresh", "--cloud", "gcp", "--account", PROJECT, "--from", str(source), "--out", str(out)
    )
    return done


def _load(path: Path) -> Any:
    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


def test_refresh_from_the_recording_gives_the_hand_computed_prices(tmp_path: Path) -> None:
    done = _refresh(tmp_path)
    assert done.returncode == 0, done.stderr
    written = _load(tmp_path / "gcp" / "g2.yaml")
    assert written["prices"]["source"] == "gcp-billing-catalog"
    assert written["prices"]["as_of"] == datetime.date(2026, 11, 27)  # the oldest region's
    assert written["prices"]["by_region"] == EXPECTED_PRICES
    assert written["zones"] == {"source": "gcp-compute-machine-types", "as_of": None, "by_region": EXPECTED_ZONES}
    out = done.stdout
    assert "read 12 Compute Engine SKUs" in out and "oldest effective date: 2026-11-27" in out
    assert "catalog regions with no zone offering a carried type: us-east1, us-east4" in out
    assert "g2-standard-4 in europe-west4 (spot)" in out and "g2-standard-4 in asia-southeast1 (on_demand)" in out


def test_the_catalog_reads_what_the_refresh_writes(tmp_path: Path) -> None:
    assert _refresh(tmp_path).returncode == 0
    path = tmp_path / "gcp" / "g2.yaml"
    book = gcp_book(path)
    assert book.vm_hourly("g2-standard-4", "us-central1", "on_demand") == Decimal("0.146784") + Decimal("0.56004")
    host, gpu = book.vm_price("g2-standard-96", "us-central1", "spot")  # type: ignore[misc]
    assert host.as_of == gpu.as_of == datetime.date(2026, 11, 28) and host.source == "gcp-billing-catalog"
    assert book.vm_price("g2-standard-4", "europe-west4", "spot") is None  # no Spot SKU: unknown, not zero
    assert book.vm_price("g2-standard-4", "asia-southeast1", "on_demand") is None
    assert book.zones_of("us-east4") == ()
    # what the refresh does not own is kept as it was, comments included
    before, after = _load(DATA_FILE), _load(path)
    for key in ("sources", "billing", "accelerator", "machine_types", "time_zones", "quotas"):
        assert after[key] == before[key], key
    assert "# How the Cloud Billing Catalog names this series' SKUs" in path.read_text(encoding="utf-8")


def test_without_out_the_refresh_rewrites_googles_own_bundled_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No --out: the file rewritten is Google's bundled one, in its own package (clouds/gcp/catalog/data/g2.yaml), not
    the shared catalog's data directory; a copy stands in for it so the bundled file is left as it is."""
    from gpuinfra.commands.catalog import refresh_command

    run = importlib.import_module("gpuinfra.clouds.gcp.catalog.refresh.run")  # the module: the package re-exports run()

    assert DATA_FILE == ROOT / "infra" / "gpuinfra" / "clouds" / "gcp" / "catalog" / "data" / "g2.yaml"
    assert not (ROOT / "infra" / "gpuinfra" / "catalog" / "data" / "gcp").exists()
    stand_in = tmp_path / "g2.yaml"
    shutil.copyfile(DATA_FILE, stand_in)
    monkeypatch.setattr(run, "DATA_FILE", stand_in)
    said = refresh_command(FIXTURE, None, "gcp", PROJECT)
    assert f"wrote {stand_in}" in said
    assert _load(stand_in)["prices"]["by_region"] == EXPECTED_PRICES


def test_the_same_recording_gives_byte_identical_files(tmp_path: Path) -> None:
    assert _refresh(tmp_path / "a").returncode == 0 and _refresh(tmp_path / "b").returncode == 0
    assert (tmp_path / "a" / "gcp" / "g2.yaml").read_bytes() == (tmp_path / "b" / "gcp" / "g2.yaml").read_bytes()


def test_a_page_not_recorded_is_an_input_error(tmp_path: Path) -> None:
    copy = tmp_path / "recorded"
    shutil.copytree(FIXTURE, copy)
    next(copy.rglob("skus.page-*.json")).unlink()
    done = _refresh(tmp_path / "out", copy)
    assert done.returncode == 2
    assert "services/6F81-5844-456A/skus: 404" in done.stderr and "Traceback" not in done.stderr


def test_two_rates_for_one_part_are_refused_by_name(tmp_path: Path) -> None:
    """A second on-demand L4 SKU for us-central1 at another price: the markers no longer single one SKU out."""
    copy = tmp_path / "recorded"
    shutil.copytree(FIXTURE, copy)
    first = next(copy.rglob("skus.json"))
    page = json.loads(first.read_text())
    twin = json.loads(json.dumps(page["skus"][2]))
    twin["skuId"], twin["pricingInfo"][-1]["pricingExpression"]["tieredRates"][0]["unitPrice"]["nanos"] = "X", 1
    page["skus"].append(twin)
    first.write_text(json.dumps(page))
    done = _refresh(tmp_path / "out", copy)
    assert done.returncode == 2 and "gpu in us-central1 (on_demand) has two rates" in done.stderr


def _schema_errors(value: Any, schema: dict[str, Any], doc: dict[str, Any], path: str) -> list[str]:
    """Where `value` leaves the Discovery document's schema: a key it does not define, or a value of another type."""
    if "$ref" in schema:
        schema = doc["schemas"][schema["$ref"]]
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{path}: not an object"]
        props, extra = schema.get("properties", {}), schema.get("additionalProperties")
        errors = []
        for key, item in value.items():
            if key in props:
                errors += _schema_errors(item, props[key], doc, f"{path}.{key}")
            elif extra is not None:
                errors += _schema_errors(item, extra, doc, f"{path}[{key}]")
            else:
                errors.append(f"{path}.{key}: not in the schema")
        return errors
    if kind == "array":
        if not isinstance(value, list):
            return [f"{path}: not a list"]
        return [e for i, item in enumerate(value) for e in _schema_errors(item, schema["items"], doc, f"{path}[{i}]")]
    python: Any = {"string": str, "integer": int, "number": (int, float), "boolean": bool}.get(str(kind))
    if python is not None and not isinstance(value, python):
        return [f"{path}: {value!r} is not a {kind}"]
    return []


@pytest.mark.parametrize(
    ("api", "schema", "files"),
    [
        ("cloudbilling", "ListSkusResponse", sorted(SKUS.glob("skus*.json"))),
        ("compute", "MachineTypeAggregatedList", [MACHINES]),
    ],
    ids=["billing-skus", "compute-machine-types"],
)
def test_the_recording_is_in_the_shape_of_the_api(api: str, schema: str, files: list[Path]) -> None:
    doc = document(api, "v1")
    assert files
    for path in files:
        assert _schema_errors(json.loads(path.read_text()), {"$ref": schema}, doc, path.name) == []
    planted = {"skus": [{"skuId": "A", "pricingInfo": [{"effectiveTimes": "2026-01-01T00:00:00Z"}]}]}
    if api == "cloudbilling":  # the check of the check: a misspelt field is seen
        assert _schema_errors(planted, {"$ref": schema}, doc, "x") == [
            "x.skus[0].pricingInfo[0].effectiveTimes: not in the schema"
        ]


def test_the_stack_is_priced_with_the_refreshed_dates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the refreshed file, the example's VMs carry their region's SKU date and the breakdown states the dates,
    as an AWS stack's does: us-central1's on-demand group at its floor is 2 x (4 x $0.024988 + 16 x $0.002927) an
    hour, as of 2026-11-28; its europe-west4 Spot group has no Spot rate there (unknown, not zero)."""
    import gpuinfra.clouds.gcp.cost.book as cost_book
    from gpuinfra.catalog import load_catalog
    from gpuinfra.cost import price_graph
    from helpers import example_graph

    assert _refresh(tmp_path).returncode == 0
    refreshed = gcp_book(tmp_path / "gcp" / "g2.yaml")
    monkeypatch.setattr(cost_book, "gcp_book", lambda: refreshed)
    breakdown = price_graph(example_graph("chat-serve-gcp"), load_catalog())
    lines = {(r.name, line.name): line for r, line in breakdown.lines()}
    host = lines[("chat-serve-gcp-us-central1-od", "g2-standard-4 cores and memory")]
    assert host.monthly == 2 * Decimal("0.146784") * 730 and host.as_of == (datetime.date(2026, 11, 28),)
    assert lines[("chat-serve-gcp-europe-west4-spot", "VMs")].monthly is None
    assert breakdown.as_of() == (datetime.date(2026, 11, 28), datetime.date(2026, 11, 29))


def test_a_recorded_page_is_named_by_its_url() -> None:
    """The query's pageToken (decoded, then percent-encoded whole: a token may hold "/") names a later page; the
    other parameters (alt, currencyCode, filter) do not."""
    from gpuinfra.clouds.gcp.catalog.refresh.client import RecordedHttp

    http = RecordedHttp(Path("rec"))
    first = "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus?currencyCode=USD&alt=json"
    later = first + "&pageToken=Cg%2Fz%2B1%3D"
    assert http.path_of(first) == Path("rec/cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus.json")
    assert http.path_of(later).name == "skus.page-Cg%2Fz%2B1%3D.json"
