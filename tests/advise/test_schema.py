"""`gpuinfra schema intent` is the intent file's JSON Schema for editors: every bundled intent is valid under it,
and the broken intents gpuinfra refuses (a wrong type, an unknown key, no volume or two, nothing asked for) are
refused by it too, so an editor marks what `advise` would refuse before it runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from gpuinfra.errors import InputError
from gpuinfra.spec.intent import read_intent
from helpers import ROOT, gpuinfra
from ruamel.yaml import YAML
from spec.test_schema_descriptions import described, properties

INTENTS = sorted((ROOT / "stacks" / "intents").glob("*.yaml"))
GOOD = (ROOT / "stacks" / "intents" / "chat-service.yaml").read_text()


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    result = gpuinfra("schema", "intent")
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    jsonschema.Draft202012Validator.check_schema(data)
    return data


def load(text: str) -> Any:
    return YAML(typ="safe").load(text)


def said(errors: list[jsonschema.ValidationError]) -> str:
    """Every error's message and keyword, and those of the alternatives it tried (an Optional field's anyOf)."""
    out = []
    for error in errors:
        out.append(f"{error.validator}: {error.message}")
        out.append(said(list(error.context or [])))
    return "\n".join(out)


@pytest.mark.parametrize("path", INTENTS, ids=[p.stem for p in INTENTS])
def test_every_bundled_intent_is_valid_under_the_schema(path: Path, schema: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(schema).validate(load(path.read_text()))


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("peak_rps: 60", 'peak_rps: "sixty"', "peak_rps"),  # a string for a number
        ("horizon_months: 24", "horizon_month: 24", "horizon_month"),  # an unknown key (a typo)
        ("gpuinfra:intent:", "gpuinfra:intnet:", "gpuinfra:intnet"),  # the top-level key misspelt
        ("tokens_per_day_million: 3000", "tokens_per_day_million: 3000\n    requests_per_day: 5", "oneOf"),
        ("    tokens_per_day_million: 3000\n", "", "oneOf"),  # no daily volume at all
        ("precision: fp8\n", "precision: fp6\n", "fp6"),
    ],
)
def test_a_broken_intent_is_refused_by_the_schema_as_by_advise(
    old: str, new: str, where: str, schema: dict[str, Any], tmp_path: Path
) -> None:
    text = GOOD.replace(old, new, 1)
    assert text != GOOD
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(load(text)))
    assert errors and where in said(errors), said(errors)
    path = tmp_path / "intent.yaml"
    path.write_text(text)
    with pytest.raises(InputError):
        read_intent(path)


def test_an_intent_that_asks_for_nothing_is_refused_by_both(schema: dict[str, Any], tmp_path: Path) -> None:
    data = load(GOOD)
    del data["gpuinfra:intent"]["traffic"]
    assert not jsonschema.Draft202012Validator(schema).is_valid(data)
    data["gpuinfra:intent"]["traffic"] = None  # written out as null: still nothing asked for
    assert not jsonschema.Draft202012Validator(schema).is_valid(data)
    path = tmp_path / "intent.yaml"
    model = GOOD.split("  name: chat-service\n", 1)[1].split("  traffic:")[0]  # the model alone, nothing asked
    path.write_text("gpuinfra:intent:\n  name: x1\n" + model)
    with pytest.raises(InputError, match="asks for nothing"):
        read_intent(path)


def test_every_property_is_described(schema: dict[str, Any]) -> None:
    found = list(properties(schema, "intent"))
    assert len(found) > 50  # the walk reaches the nested models
    assert [path for path, prop in found if not described(prop, schema["$defs"])] == []


def test_init_writes_it_beside_the_other_schemas(schema: dict[str, Any], tmp_path: Path) -> None:
    """A team's repository gets the intent schema where the editor line of docs/advise.md points."""
    made = gpuinfra("init", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "wrote schemas/intent.schema.json" in made.stdout
    assert json.loads((tmp_path / "schemas" / "intent.schema.json").read_text()) == schema
