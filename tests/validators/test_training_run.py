"""Training-run efficiency claims against published runs."""

from __future__ import annotations

import pytest
from helpers import Case, run_case

CASES = [
    # The best bf16 run of the calibration set: torchtitan, Llama 3 8B on 64 A100, 58.2% MFU (docs/performance.md).
    Case("mfu-above-published", "llm-train", {"run.mfu": 0.65}, message=r"run.mfu 65% at bf16 is above the 58.2%"),
    Case("mfu-above-published", "llm-train", {"run.mfu": 0.55}, fires=False),
    Case("mfu-above-published", "llm-train", fires=False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)
