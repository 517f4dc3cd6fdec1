"""Hints that are edits: every finding the validator tables raise on the examples (tests/validators' CASES that
fire) has a hint, and every YAML snippet a hint gives (`key: value` in backticks) parses as YAML and is valid
input: no number written with thousands separators ("12,715" is refused by the spec), sizes the next valid one.
Spec errors for a missing section or a cross-field rule show the YAML to add."""

from __future__ import annotations

import re

import pytest
from gpuinfra.errors import InputError
from helpers import DELETE, Case, checked, sibling_test_modules
from ruamel.yaml import YAML

SNIPPET = re.compile(r"`([A-Za-z_][\w.-]*: [^`]+)`")
"""A backticked `key: value` in a hint: the YAML it tells the user to write."""
THOUSANDS = re.compile(r"\d,\d{3}")


def yaml_of(snippet: str) -> object:
    return YAML(typ="safe", pure=True).load(snippet)


def edits(hint: str) -> list[str]:
    return SNIPPET.findall(hint)


def firing_cases() -> list[Case]:
    return [c for m in sibling_test_modules(__file__) for c in getattr(m, "CASES", []) if c.fires]


def test_every_hint_of_the_examples_findings_is_an_edit_that_parses() -> None:
    cases = firing_cases()
    assert len(cases) > 100
    snippets = 0
    for case in cases:
        for f in checked(case.stack, case.spec, case.org, config=case.config).findings:
            assert f.hint and "as the message says" not in f.hint, (f.rule, f.hint)
            for snippet in edits(f.hint):
                snippets += 1
                data = yaml_of(snippet)
                assert isinstance(data, dict) and len(data) == 1, (f.rule, snippet)
                assert not THOUSANDS.search(snippet), (f.rule, snippet)
    assert snippets > 50  # the hints with a value to write carry it as YAML


def test_a_lustre_too_small_hint_gives_the_next_size_fsx_takes() -> None:
    # llm-train keeping 33 checkpoints needs 59,331 GiB (tests/validators/test_pcs.py). Its file system is
    # EFA-enabled at 250 MB/s/TiB, whose capacity comes in steps of 19,200 GiB (catalog services.yaml fsx_efa,
    # the example's own comment): ceil(59,331 / 19,200) = 4 steps = 76,800 GiB.
    (f,) = [f for f in checked("llm-train", {"checkpointing.keep_last": 33}).findings if f.rule == "lustre-too-small"]
    (snippet,) = edits(f.hint or "")
    assert yaml_of(snippet) == {"storage_capacity_gib": 76800}, f.hint


def test_checkpoint_interval_hint_is_the_optimum_to_write() -> None:
    before_t15 = {"compute.capacity": {"type": "spot", "on_demand_base": 4}, "compute.elastic": None}  # 12 spot nodes
    found = [f for f in checked("llm-train", {"checkpointing.interval_minutes": 20, **before_t15}).findings]
    (f,) = [f for f in found if f.rule == "checkpoint-interval-off-optimum"]
    (snippet,) = edits(f.hint or "")
    value = yaml_of(snippet)["interval_minutes"]  # type: ignore[index]
    assert value == 157 and "the optimum is 157 min" in f.message  # tests/validators/test_checkpoints.py


@pytest.mark.parametrize(
    ("stack", "spec", "snippet"),
    [
        ("llm-train", {"availability_zone": DELETE}, {"availability_zone": "us-east-1a"}),
        (
            "chat-serve",
            {"model.kv_cache": DELETE},
            {"kv_cache": {"layers": "<int>", "kv_heads": "<int>", "head_dim": "<int>"}},
        ),
        ("chat-serve", {"global_routing.hosted_zone_id": DELETE}, {"hosted_zone_id": "Z0123456789ABCDEFGHIJ"}),
    ],
)
def test_spec_errors_show_the_yaml_to_add(stack: str, spec: dict[str, object], snippet: dict[str, object]) -> None:
    with pytest.raises(InputError) as raised:
        checked(stack, spec)
    hints = [p.hint or "" for p in raised.value.problems]
    found = [yaml_of(s) for h in hints for s in edits(h)]
    assert any(snippet.items() <= (f or {}).items() for f in found if isinstance(f, dict)), hints
