"""Account-wide totals: quotas and budgets hold for every stack of the repository in an account together.

stacks/ holds two AWS training stacks in ml-training, us-east-1: llm-train (AWS PCS), 16 p5.48xlarge on an On-Demand
Capacity Reservation, and llm-train-eks (EKS), 4 on-demand and 12 spot p5.48xlarge at maximum size. A p5.48xlarge has
192 vCPUs (AWS, "Amazon EC2 P5 Instances", https://aws.amazon.com/ec2/instance-types/p5/), so of the Running
On-Demand P instances quota (L-417A185B) llm-train needs 16 x 192 = 3072 vCPUs and llm-train-eks 4 x 192 = 768:
each within a grant of 3200 alone, 3840 (and llm-finetune's 16) together.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gpuinfra.account import AccountFacts
from gpuinfra.catalog import load_catalog
from gpuinfra.cost import Usage, assumed_usage, price_graph
from gpuinfra.cost.money import money
from gpuinfra.load import load_inputs
from gpuinfra.plan import build_plan
from gpuinfra.policy.facts import StackFacts
from gpuinfra.policy.pack import pack_config, police
from gpuinfra.workspace import workspace_of
from helpers import example_graph, write_stack
from policy_helpers import facts_for, run_example

P5_VCPUS = 192
GRANT = 3200
A_GRANT = {"accounts.ml-training.quotas.us-east-1.L-417A185B": GRANT}
NEEDS = {"llm-train": 16 * P5_VCPUS, "llm-train-eks": 4 * P5_VCPUS}
"""On-demand P vCPUs of each training stack at maximum size (the module docstring)."""
FINETUNE_OD = 16
"""p5.4xlarge: 16 vCPUs (Amazon EC2 accelerated computing instance types)."""


def violations(stack: str, org: dict[str, object], policy: str, alone: bool = False) -> list[str]:
    facts = facts_for(stack, org=org)
    if alone:
        facts = dataclasses.replace(facts, held=AccountFacts())
    run = police(example_graph(stack), facts, pack_config())
    return [v.message for v in run.violations if v.rule == policy and v.level.enforcement == "mandatory"]


def test_each_training_stack_fits_the_grant_alone() -> None:
    for stack in ("llm-train", "llm-train-eks"):
        assert violations(stack, A_GRANT, "quota-within-grant", alone=True) == []


def test_together_they_exceed_it_and_the_review_of_either_names_both() -> None:
    for stack, other in (("llm-train", "llm-train-eks"), ("llm-train-eks", "llm-train")):
        need = NEEDS[stack]
        (message,) = [m for m in violations(stack, A_GRANT, "quota-within-grant") if "L-417A185B" in m]
        assert f"the stack needs {need} vCPUs" in message, message
        # llm-finetune's on-demand fallback environment holds one p5.4xlarge (16 vCPUs) in the account as well
        held = sorted([("llm-finetune", FINETUNE_OD), (other, NEEDS[other])])
        holders = ", ".join(f"{s} ({v})" for s, v in held)
        total = need + NEEDS[other] + FINETUNE_OD
        assert f"{GRANT - NEEDS[other] - FINETUNE_OD} available of the {GRANT} granted" in message, message
        assert f"other stacks hold {holders}, so together they need {total}" in message, message
        assert f"request an increase of {total - GRANT} vCPUs" in message, message


def maximum(stack: str) -> object:
    """The cost module's maximum monthly price of an example (the cost module has its own tests)."""
    facts = facts_for(stack)
    graph = example_graph(stack)
    return price_graph(graph, load_catalog(), Usage().with_assumed(assumed_usage(facts.plan, graph))).monthly_max


def test_two_stacks_over_the_budget_together_fail_the_review_naming_both() -> None:
    org = {"accounts.ml-training.monthly_budget_usd": 1_000_000}
    own, other = maximum("llm-train"), maximum("llm-train-eks")
    finetune = maximum("llm-finetune")  # the fine-tuning queue shares the training account
    assert own < 1_000_000 and other < 1_000_000 < own + other  # type: ignore[operator]
    assert violations("llm-train", org, "budget-within-account", alone=True) == []
    (message,) = violations("llm-train", org, "budget-within-account")
    assert f"llm-train costs up to {money(own, 0)}/month at maximum size" in message
    total = own + other + finetune  # type: ignore[operator]
    assert (
        f"(llm-finetune up to {money(finetune, 0)}, llm-train-eks up to {money(other, 0)}) ml-training costs up to "
        f"{money(total, 0)}" in message
    )
    assert f"by {money(total - 1_000_000, 0)}" in message


def test_the_unchanged_examples_fit_their_accounts_together() -> None:
    for stack in ("llm-train", "llm-train-eks", "llm-finetune", "chat-serve", "chat-serve-k8s", "model-registry"):
        run = run_example(stack)
        assert [v for v in run.violations if v.rule in ("quota-within-grant", "budget-within-account")] == []


def test_a_stack_that_cannot_be_read_is_not_counted_as_zero(tmp_path: Path) -> None:
    stack = write_stack(tmp_path, "llm-train")
    (tmp_path / "Pulumi.broken.yaml").write_text("config:\n  gpuinfra:training:\n    name: [unclosed\n")
    inputs = load_inputs(stack)
    catalog = load_catalog()
    held = workspace_of(inputs.stack.path, inputs.org.path).facts(inputs)
    facts = StackFacts.of(inputs, build_plan(inputs.spec, inputs.org.org, catalog), catalog, held)
    run = police(example_graph("llm-train"), facts, pack_config())
    for policy in ("quota-within-grant", "budget-within-account"):
        found = [v for v in run.violations if v.rule == policy and "broken" in v.message]
        assert found and found[0].blocking and "cannot be read" in found[0].message, run.violations
