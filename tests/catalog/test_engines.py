"""The serving engines' facts are catalog data (catalog/data/engines.yaml): every row names sources the file lists,
dated as those sources are, checked on the catalog's first read; the spec's engines and the file's are the same
set; and the report says how old a row is: undated when its source gives no date, stale past the age limit.
"Today" is SOURCE_DATE_EPOCH, 2026-12-01 (tests/conftest.py)."""

from __future__ import annotations

import datetime
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest
from gpuinfra.catalog import Catalog, CatalogError, load_catalog
from gpuinfra.catalog import load as catalog_load
from gpuinfra.catalog.engines import FILE, Engine, EngineTable, table_problems
from gpuinfra.commands.validate import to_report
from gpuinfra.report.build.engine import engine_note
from gpuinfra.report.model import Report
from gpuinfra.report.render.json import render_json
from gpuinfra.spec.inference import ServingEngine
from helpers import STACKS, checked
from ruamel.yaml import YAML


def raw_table() -> dict[str, Any]:
    """The bundled file as data, to plant a row in."""
    data = YAML(typ="safe").load((catalog_load.DATA_DIR / FILE).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def planted(**changes: Any) -> EngineTable:
    """The bundled table with the vLLM row changed."""
    data = raw_table()
    row = next(r for r in data["engines"] if r["name"] == "vllm")
    row.update(changes)
    return EngineTable.model_validate(data)


def test_the_bundled_file_passes_its_checks(catalog: Catalog) -> None:
    assert list(table_problems(catalog.engine_table)) == []
    assert catalog.engine_table.names == ("vllm", "sglang", "tensorrt-llm")


def test_the_spec_and_the_file_name_the_same_engines(catalog: Catalog) -> None:
    """A ServingEngine without a row could be written in a spec and not launched; a row without a ServingEngine is a
    fact nothing can ask for. Either way this fails."""
    assert set(get_args(ServingEngine)) == set(catalog.engine_table.names)


@pytest.mark.parametrize(
    ("field", "value"),
    [("source", "vllm-blog-post"), ("digest_source", "a-forum-thread"), ("cites", ["vllm-v0.11.0", "a-tweet"])],
)
def test_a_row_naming_a_source_the_file_does_not_list_is_refused(field: str, value: object) -> None:
    problems = list(table_problems(planted(**{field: value})))
    unknown = value[-1] if isinstance(value, list) else value
    assert problems == [f"engines.yaml: rows name sources the file does not list: vllm: {unknown}"]


def test_a_row_dated_otherwise_than_its_source_is_refused() -> None:
    problems = list(table_problems(planted(as_of="2025-10-02")))
    assert problems == [
        "engines.yaml: rows whose as_of is not their source's date: vllm as_of 2025-10-02 (source vllm-v0.11.0: None)"
    ]


def test_an_engine_listed_twice_is_refused() -> None:
    data = raw_table()
    data["engines"].append(dict(data["engines"][0]))
    assert list(table_problems(EngineTable.model_validate(data))) == ["engines.yaml: engines listed twice: vllm"]


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the catalog's data files the loader reads instead of the bundled ones (its cache cleared around)."""
    copy = tmp_path / "data"
    shutil.copytree(catalog_load.DATA_DIR, copy)
    monkeypatch.setattr(catalog_load, "DATA_DIR", copy)
    load_catalog.cache_clear()
    yield copy
    load_catalog.cache_clear()


def test_the_catalogs_first_read_refuses_a_planted_row(data_dir: Path) -> None:
    path = data_dir / FILE
    path.write_text(path.read_text(encoding="utf-8").replace("source: vllm-v0.11.0", "source: vllm-nightly"))
    with pytest.raises(CatalogError, match="rows name sources the file does not list: vllm: vllm-nightly"):
        load_catalog()


def test_the_catalogs_first_read_refuses_a_row_missing_a_fact(data_dir: Path) -> None:
    path = data_dir / FILE
    path.write_text(path.read_text(encoding="utf-8").replace("    metrics_path: /prometheus/metrics\n", ""))
    with pytest.raises(CatalogError, match="metrics_path"):
        load_catalog()


def dated(as_of: datetime.date | None) -> Engine:
    return load_catalog().engine("sglang").model_copy(update={"as_of": as_of})


def test_an_undated_row_shows_as_undated() -> None:
    assert engine_note(dated(None)) == (
        "SGLang's image, launch and metrics: catalog engines.yaml (sglang-server-arguments), undated (its source gives "
        "no date)"
    )


def test_a_row_past_the_age_limit_shows_as_stale() -> None:
    """2026-12-01 - 2026-09-01 = 30 + 31 + 30 = 91 days: past the default 90; 2026-09-02 is 90 days, within."""
    assert engine_note(dated(datetime.date(2026, 9, 1))) == (
        "SGLang's image, launch and metrics: catalog engines.yaml (sglang-server-arguments), as of 2026-09-01: "
        "stale, 91 days old (limit 90 days: GPUINFRA_PRICE_MAX_AGE_DAYS)"
    )
    assert engine_note(dated(datetime.date(2026, 9, 2))).endswith("(sglang-server-arguments), as of 2026-09-02")


def test_the_examples_pin_the_vllm_rows_image_and_digest(catalog: Catalog) -> None:
    """vllm-example-pin: the vLLM row's digest is the one the example stack pins."""
    stack = YAML(typ="safe").load((STACKS / "Pulumi.chat-serve.yaml").read_text(encoding="utf-8"))
    spec = stack["config"]["gpuinfra:inference"]
    vllm = catalog.engine("vllm")
    assert (spec["server_image"], spec["server_image_digest"]) == (vllm.image, vllm.image_digest)
    assert vllm.digest_source == "vllm-example-pin"


def test_an_engine_the_file_lacks_is_named_in_the_error(catalog: Catalog) -> None:
    with pytest.raises(KeyError, match=r"engines\.yaml has no engine 'lmdeploy'"):
        catalog.engine("lmdeploy")


def test_the_report_shows_the_engine_rows_date_in_markdown_and_json() -> None:
    """An inference report names the row it launched from and its date (the Markdown's memory section, the JSON's
    `engine`), for the engine the spec names; a training report has no `engine` at all."""
    access = {"scheme": "internal", "auth": "none", "waf": None}
    sglang = load_catalog().engine("sglang")
    spec = {"engine": "sglang", "server_image": sglang.image, "server_image_digest": sglang.image_digest}
    stack = to_report(checked("chat-serve", {**spec, "access": access, "model.adapters": []}))
    memory = next(s for s in stack.summary if s.title == "Model memory per replica")
    assert memory.notes[-1] == (
        "SGLang's image, launch and metrics: catalog engines.yaml (sglang-server-arguments), undated (its source gives "
        "no date)"
    )
    document = json.loads(render_json(Report(command="preview", stacks=[stack])))
    assert document["stacks"][0]["engine"] == {"name": "sglang", "source": "sglang-server-arguments", "as_of": None}
    training = json.loads(render_json(Report(command="preview", stacks=[to_report(checked("llm-train"))])))
    assert "engine" not in training["stacks"][0]
