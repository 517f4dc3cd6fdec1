"""Registry rules: the promote role trusts named roles only."""

from __future__ import annotations

import pytest
from helpers import DELETE, Case, run_case

CASES = [
    Case(
        "promoter-not-a-role",
        "model-registry",
        org={"registry.promoters": []},  # the default: the training accounts' roots
        message=r"trust whole accounts \(arn:aws:iam::111111111111:root;",
    ),
    Case(
        "promoter-not-a-role",
        "model-registry",
        org={"registry.promoters": ["arn:aws:iam::111111111111:role/ml-release", "arn:aws:iam::111111111111:root"]},
        message=r"trust whole accounts \(arn:aws:iam::111111111111:root;",
    ),
    Case("promoter-not-a-role", "model-registry", fires=False),  # the example names arn:...:role/ml-release
    Case("registry-alarms-page-no-one", "model-registry", fires=False),  # ml-registry names an on-call
    Case(
        "registry-alarms-page-no-one",
        "model-registry",
        org={"accounts.ml-registry.alerts": DELETE},
        message=r"account 'ml-registry' names no alerts: the replication alarms",
    ),
    # No replica region, no replication alarm: nothing to page about.
    Case(
        "registry-alarms-page-no-one",
        "model-registry",
        org={"accounts.ml-registry.alerts": DELETE, "registry.replica_regions": []},
        fires=False,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)
