"""Rack power and cooling rules (on premises: an AWS spec has no racks, test_pcs.py)."""

from __future__ import annotations

import pytest
from helpers import Case, run_case

CASES = [
    Case(
        "rack-exceeds-cooling",
        "llm-train-onprem",
        {"racks.cooling": "air"},
        message=r"racks draw 40.8 kW \(4 x 10.2 kW nodes\) but air cooling carries about 30 kW per rack",
    ),
    Case(
        "rack-exceeds-cooling", "llm-train-onprem", {"racks.cooling": "air", "racks.power_budget_kw": 30}, fires=False
    ),
    Case("rack-exceeds-cooling", "llm-train-onprem", {"racks.cooling": "immersion"}, fires=False),
    Case(
        "node-exceeds-rack-budget",
        "llm-train-onprem",
        {"racks.power_budget_kw": 8},
        message="one dgx-h100.system draws 10.2 kW, more than power_budget_kw 8",
    ),
    Case("node-exceeds-rack-budget", "llm-train-onprem", {"racks.power_budget_kw": 10.2}, fires=False),
    Case(
        "rack-power-unknown",
        "llm-train-onprem",
        {"compute.instance_type": "trn1.32xlarge", "model.parameters_billion": 7},
        message="no published power figure for trn1.32xlarge",
    ),
    Case("rack-power-unknown", "llm-train-onprem", fires=False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)
