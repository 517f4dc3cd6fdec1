"""Registration: every rule is discovered, runs for its workload, and has a failing and a passing case
somewhere in tests/validators (found by reading the test modules, not a hand-kept list)."""

from __future__ import annotations

from gpuinfra.clouds import CLOUDS
from gpuinfra.spec import TrainingSpec
from gpuinfra.validators import RULES, Level
from gpuinfra.validators.base import Failure, rule
from helpers import Case, checked, sibling_test_modules


def all_cases() -> list[Case]:
    return [case for module in sibling_test_modules(__file__) for case in getattr(module, "CASES", [])]


def test_every_rule_has_a_failing_and_a_passing_case() -> None:
    for entry in CLOUDS.values():  # a cloud's own rules register when its package loads: load every one
        entry.part("validators")
    cases = all_cases()
    failing = {c.rule for c in cases if c.fires}
    passing = {c.rule for c in cases if not c.fires}
    assert set(RULES) - failing == set(), "rules without a failing case"
    assert set(RULES) - passing == set(), "rules without a passing case"
    assert (failing | passing) - set(RULES) == set(), "cases name rules that do not exist"


def test_every_rule_has_a_docstring_and_kebab_id() -> None:
    for rid, registered in RULES.items():
        assert registered.doc, rid
        assert rid == rid.lower() and "_" not in rid


def test_examples_are_clean() -> None:
    for stack in ("llm-train", "chat-serve", "model-registry", "llm-finetune", "corpus-prep"):
        assert checked(stack).findings == [], stack


def test_a_crashing_rule_becomes_an_error_finding() -> None:
    @rule(Level.WARNING)
    def always_crashes(spec: TrainingSpec) -> list[Failure]:
        """Crashes on purpose."""
        raise RuntimeError("boom")

    try:
        findings = checked("llm-train").findings
    finally:
        del RULES["always-crashes"]
    (crash,) = [f for f in findings if f.rule == "always-crashes"]
    assert crash.level is Level.ERROR
    assert "validator crashed: RuntimeError: boom" in crash.message
