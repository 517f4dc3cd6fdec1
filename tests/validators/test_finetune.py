"""Fine-tuning findings: a run that is training sends the user to a training stack; a named type must hold it."""

from __future__ import annotations

import pytest
from helpers import Case, run_case

CASES = [
    Case("finetune-needs-training-stack", "llm-finetune", {"method": "full"}, message=r"belongs in a training stack"),
    # 10T parameters at 4 bits are ~5.2 TB: more than any single catalog node holds.
    Case(
        "finetune-needs-training-stack",
        "llm-finetune",
        {"base_model.parameters_billion": 10000, "instance_type": "auto"},
        message=r"no single catalog node",
    ),
    Case("finetune-needs-training-stack", "llm-finetune", fires=False),
    # One L4 (22.4 GiB) cannot hold the 36 GB 4-bit 70B base.
    Case("finetune-does-not-fit", "llm-finetune", {"instance_type": "g6.xlarge"}, message=r"g6.xlarge holds"),
    Case("finetune-does-not-fit", "llm-finetune", fires=False),
    Case("finetune-mfu-above-published", "llm-finetune", {"run.mfu": 0.65}, message=r"run.mfu 65%"),
    Case("finetune-mfu-above-published", "llm-finetune", fires=False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)
