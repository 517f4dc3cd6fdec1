"""Network placement rules."""

from __future__ import annotations

import copy

import pytest
from helpers import Case, example_data, run_case

REGIONS = example_data("chat-serve")["config"]["gpuinfra:inference"]["regions"]

CASES = [
    Case(
        "duplicate-region",
        "chat-serve",
        {"regions": [*REGIONS, copy.deepcopy(REGIONS[0])]},
        message=r"region us-east-1 is listed twice \(also at regions\[0\]\)",
    ),
    Case("duplicate-region", "chat-serve", fires=False),
    Case(
        "single-zone-region",
        "chat-serve",
        {"regions[0].availability_zones": ["us-east-1a"]},
        message="region us-east-1 uses 1 zone",
    ),
    Case("single-zone-region", "chat-serve", fires=False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)
