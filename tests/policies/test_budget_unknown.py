"""A budget is not judged on a total with a hole in it: when a line of the stack (or of its account's other stacks)
has no price, the total is a lower bound, so "within budget" is "cannot judge" (mandatory), unless the pack's
config accepts that unknown price (by default: AWS PCS's fees, which the catalog cannot cite yet)."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import gpuinfra.policy.rules.budget as budget
from gpuinfra.account import AccountFacts, StackTotal
from gpuinfra.policy.pack import pack_config, police
from helpers import ample_quotas, example_graph
from policy_helpers import PolicyCase, facts_for, run_case, run_example

POLICY = "budget-within-account"
TRAINING = "111111111111"


def _budget(run) -> list:  # type: ignore[no-untyped-def]
    return [v for v in run.violations if v.rule == POLICY]


def test_llm_train_leaves_out_only_the_accepted_pcs_fees() -> None:
    estimate = budget.estimate_monthly(example_graph("llm-train"), facts_for("llm-train"))
    assert estimate is not None and estimate.unknown  # type: ignore[attr-defined]
    assert {key.rsplit(" (", 1)[0] for key in estimate.unknown} == {  # type: ignore[attr-defined]
        "aws-native:pcs:Cluster: PCS controller (SMALL)",
        "aws-native:pcs:ComputeNodeGroup: PCS node management (m7i.2xlarge)",
        "aws-native:pcs:ComputeNodeGroup: PCS node management (p5.48xlarge)",
        "aws-native:pcs:Queue: Resource",
    }
    assert all(key.startswith(tuple(budget.ACCEPTED_UNPRICED)) for key in estimate.unknown)  # type: ignore[attr-defined]
    run = run_example("llm-train")
    assert POLICY in run.evaluated and _budget(run) == []


def test_without_the_acceptance_llm_train_cannot_be_judged() -> None:
    run = run_example("llm-train", {POLICY: {"accepted_unpriced": []}})
    (found,) = _budget(run)
    assert found.level.enforcement == "mandatory"
    assert found.message.startswith("cannot judge ml-training's budget of $1,250,000: at maximum size the account's ")
    # PCS node management of the gang's, the elastic and the login groups, the controller, two queues (train and
    # elastic); the home file system's backups are usage, priced per GB stored (not an unknown price)
    assert "but 6 lines have no price: llm-train: aws-native:pcs:" in found.message
    assert "llm-train: aws-native:pcs:Cluster: PCS controller (SMALL)" in found.message


def test_a_stack_in_a_region_without_prices_cannot_be_judged() -> None:
    """llm-train in eu-west-1, where the catalog prices no p5.48xlarge: its 16 GPU nodes are not in the total."""
    run_case(
        PolicyCase(
            POLICY,
            "llm-train",
            spec={"region": "eu-west-1", "availability_zone": "eu-west-1a"},
            org=ample_quotas(region="eu-west-1"),
            message=r"^cannot judge ml-training's budget .* llm-train: aws:|^cannot judge ml-training's budget .* "
            r"Instances, (on-demand|spot) \(p5\.48xlarge",
            level="mandatory",
            label="eu-west-1",
            # instance-type-not-in-region refuses p5 in eu-west-1 before the pack would: built unchecked here
            unchecked=True,
        )
    )


def test_an_unpriced_line_of_another_stack_makes_it_cannot_judge() -> None:
    other = StackTotal("side-fleet", {TRAINING: Decimal(1000)}, unknown=("aws:ec2/fleet:Fleet: Resource (burst)",))
    facts = dataclasses.replace(facts_for("llm-train"), held=AccountFacts(totals=(other,)))
    (found,) = _budget(police(example_graph("llm-train"), facts, pack_config()))
    assert "side-fleet: aws:ec2/fleet:Fleet: Resource (burst)" in found.message


def test_a_lower_bound_over_the_budget_is_over_it() -> None:
    """Unknown lines only add: a total already over the budget without them is over it, said as a lower bound."""
    other = StackTotal("huge", {TRAINING: Decimal(900_000)}, unknown=("aws:ec2/fleet:Fleet: Resource (burst)",))
    facts = dataclasses.replace(facts_for("llm-train"), held=AccountFacts(totals=(other,)))
    (found,) = _budget(police(example_graph("llm-train"), facts, pack_config()))
    assert ", over ml-training's budget of $1,250,000 by " in found.message
    assert "(at least: 1 unpriced lines are left out)" in found.message
