"""An intent file gets the stack files' errors: every problem with its file, line, field and a hint, exit 2, never
a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import ROOT, gpuinfra

GOOD = (ROOT / "stacks" / "intents" / "chat-service.yaml").read_text()


def run_on(tmp_path: Path, text: str) -> tuple[int, str]:
    path = tmp_path / "intent.yaml"
    path.write_text(text)
    result = gpuinfra("advise", str(path), cwd=tmp_path)
    assert "Traceback" not in result.stderr
    return result.returncode, result.stderr


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(
    ("old", "new", "field", "hint"),
    [
        ("peak_rps: 60", 'peak_rps: "sixty"', "gpuinfra:intent.traffic.peak_rps", "write a number"),
        ("parameters_billion: 8", "parameters_billion: -8", "gpuinfra:intent.model.parameters_billion", "larger"),
        ("precision: fp8", "precision: fp6", "gpuinfra:intent.model.precision", "did you mean"),
        ("regions: [us-east-1, us-west-2]", "regions: [us-east-1, mars]", "gpuinfra:intent.traffic.regions[1]", ""),
        ("horizon_months: 24", "horizon_month: 24", "gpuinfra:intent.horizon_month", "horizon_months"),
        (
            "tokens_per_day_million: 3000",
            "tokens_per_day_million: 3000\n    requests_per_day: 5",
            "requests_per_day",
            "exactly one",
        ),
        ("gpu: L4", "gpu: 'L 4'", "gpuinfra:intent.traffic.gpu", "expected"),
    ],
)
def test_an_ill_typed_intent_exits_2_naming_file_line_and_field(
    tmp_path: Path, old: str, new: str, field: str, hint: str
) -> None:
    assert_refused(tmp_path, GOOD, old, new, field, hint)


def assert_refused(tmp_path: Path, base: str, old: str, new: str, field: str, hint: str) -> None:
    """`base` with `old` replaced by `new` exits 2, naming the file, the line of `new`'s last line, the field."""
    assert old in base
    text = base.replace(old, new)
    code, err = run_on(tmp_path, text)
    assert code == 2, err
    assert f"intent.yaml:{line_of(text, new.splitlines()[-1].strip())}: " in err, err
    assert field in err and "hint:" in err and hint in err, err


def test_a_missing_required_field_is_named(tmp_path: Path) -> None:
    code, err = run_on(tmp_path, GOOD.replace("    input_tokens: 1000\n", ""))
    assert code == 2 and "gpuinfra:intent.traffic.input_tokens" in err and "hint:" in err, err


def test_a_file_without_the_intent_key_says_what_it_needs(tmp_path: Path) -> None:
    code, err = run_on(tmp_path, GOOD.replace("gpuinfra:intent:", "gpuinfra:intnet:"))
    assert code == 2 and "intent.yaml:4: gpuinfra:intnet: unknown top-level key" in err, err
    assert "did you mean 'gpuinfra:intent'?" in err, err


def test_a_missing_file_and_a_broken_yaml_exit_2(tmp_path: Path) -> None:
    result = gpuinfra("advise", str(tmp_path / "nope.yaml"), cwd=tmp_path)
    assert result.returncode == 2 and "nope.yaml" in result.stderr and "Traceback" not in result.stderr
    code, err = run_on(tmp_path, "gpuinfra:intent: {name: x\n")
    assert code == 2 and "intent.yaml:" in err, err


def test_an_intent_that_asks_for_nothing_is_refused(tmp_path: Path) -> None:
    text = GOOD.split("  traffic:")[0] + "  horizon_months: 12\n"
    code, err = run_on(tmp_path, text)
    assert code == 2 and "asks for nothing" in err, err


def test_the_json_output_is_the_advice(tmp_path: Path) -> None:
    result = gpuinfra("advise", str(ROOT / "stacks" / "intents" / "chat-service.yaml"), "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["stopped_at"] == 3 and data["intent"] == "chat-service"
    assert [r["number"] for r in data["rungs"]] == [1, 2, 3, 4]
    assert data["bill"]["lines"][0]["kind"] == "recurring"


def test_an_intent_beyond_what_a_stack_holds_exits_2_at_its_part(tmp_path: Path) -> None:
    """A million requests a second would need a fleet past the spec's 10,000 replicas: the error names the
    intent's traffic (its line), never a traceback or exit 3."""
    text = GOOD.replace("peak_rps: 60", "peak_rps: 1000000")
    code, err = run_on(tmp_path, text)
    assert code == 2, err
    assert f"intent.yaml:{line_of(text, 'traffic:')}: gpuinfra:intent.traffic: the InferenceSpec" in err, err
    assert "max_replicas" in err and "hint:" in err


def test_a_lora_rank_vllm_cannot_serve_is_refused(tmp_path: Path) -> None:
    text = (
        (ROOT / "stacks" / "intents" / "support-bot.yaml")
        .read_text()
        .replace("iterations: 4", "iterations: 4\n    lora_rank: 24")
    )
    code, err = run_on(tmp_path, text)
    assert code == 2 and "gpuinfra:intent.adapt.lora_rank: vLLM serves LoRA ranks" in err, err


NEW_70B = (ROOT / "stacks" / "intents" / "new-70b.yaml").read_text()


@pytest.mark.parametrize(
    ("old", "new", "field", "hint"),
    [
        (
            "instance_type: p5.48xlarge",
            "instance_type: p5.48xlarg",
            "train.instance_type",
            "did you mean 'p5.48xlarge'",
        ),
        ("instance_type: p5.48xlarge", "instance_type: m7i.xlarge", "train.instance_type", "a GPU training type"),
        ("gpu: L40S", "gpu: L40", "traffic.gpu", "did you mean 'L40S'"),
        ("regions: [us-east-1]", "regions: [xx-east-9]", "traffic.regions[0]", "not in the catalog"),
        (
            "  constraints:",
            "  constraints:\n    managed_providers: [amazon-bedrok]",
            "constraints.managed_providers[0]",
            "did you mean 'amazon-bedrock'",
        ),
    ],
)
def test_a_name_the_catalog_lacks_is_refused_at_its_line(
    tmp_path: Path, old: str, new: str, field: str, hint: str
) -> None:
    assert_refused(tmp_path, NEW_70B, old, new, f"gpuinfra:intent.{field}: ", hint)
