"""Suppression: warnings can be silenced by id; errors and unknown ids cannot."""

from __future__ import annotations

import pytest
from helpers import Case, checked, rules_fired, run_case

CASES = [
    Case(
        "unknown-suppression",
        "llm-train",
        {"suppress": ["checkpoint-interval-of-optimum"]},
        message="suppress names unknown rule 'checkpoint-interval-of-optimum'",
    ),
    Case(
        "unknown-suppression",
        "llm-train",
        {"suppress": ["spot-without-checkpointing"]},
        message="is an error and cannot be suppressed",
    ),
    Case("unknown-suppression", "llm-train", {"suppress": ["checkpoint-interval-off-optimum"]}, fires=False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)


def test_a_suppressed_warning_disappears() -> None:
    spec = {"checkpointing.interval_minutes": 20}
    assert "checkpoint-interval-off-optimum" in rules_fired(checked("llm-train", spec))
    spec_suppressed = {**spec, "suppress": ["checkpoint-interval-off-optimum"]}
    assert "checkpoint-interval-off-optimum" not in rules_fired(checked("llm-train", spec_suppressed))


def test_errors_stay_even_when_suppressed() -> None:
    spot = {"compute.capacity": {"type": "spot", "on_demand_base": 4}, "compute.elastic": None}  # before review T15
    spec = {"checkpointing": None, "suppress": ["spot-without-checkpointing"], **spot}
    assert "spot-without-checkpointing" in rules_fired(checked("llm-train", spec))
