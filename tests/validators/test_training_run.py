"""Training-run efficiency claims against published runs."""

from __future__ import annotations

import pytest
from helpers import Case, run_case

CASES = [
    # The best bf16 run of the calibration set: MPT-7B on 8 A100, 6 x 6.659B x 4,641 tokens/s / 312 TFLOPS = 59.4%.
    Case("mfu-above-published", "llm-train", {"run.mfu": 0.65}, message=r"run.mfu 65% at bf16 is above the 59.4%"),
    Case("mfu-above-published", "llm-train", {"run.mfu": 0.55}, fires=False),
    Case("mfu-above-published", "llm-train", fires=False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)
