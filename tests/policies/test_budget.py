"""The budget policy: the stack's maximum monthly cost, with the account's other stacks, against the account's
budget, through one interface. Account-wide totals over the repository's stacks: test_account_wide.py."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import gpuinfra.policy.rules.budget as budget
import pytest
from gpuinfra.account import AccountFacts
from gpuinfra.commands.preview import monthly_cost, preview_stacks
from gpuinfra.graph import Graph
from gpuinfra.policy.facts import StackFacts
from gpuinfra.policy.pack import pack_config, police, police_stack
from helpers import STACKS, checked, example_graph
from policy_helpers import facts_for
from pulumi_policy import StackValidationArgs, StackValidationPolicy

COVERS = ["budget-within-account"]
"""Passing and failing cases below (the estimator is injected, so they are tests rather than CASES rows)."""


def budget_run(monkeypatch: pytest.MonkeyPatch, monthly: Decimal | None, config: dict[str, object] | None = None):
    seen: list[Graph] = []

    def estimate(graph: Graph, facts: StackFacts) -> Decimal | None:
        assert facts.stack == "llm-train"
        seen.append(graph)
        return monthly

    monkeypatch.setattr(budget, "ESTIMATE", estimate)
    alone = dataclasses.replace(facts_for("llm-train"), held=AccountFacts())  # no other stacks: this stack alone
    run = police(example_graph("llm-train"), alone, pack_config(given=config or {}))
    assert seen == [example_graph("llm-train")], "the estimator is handed the stack's graph"
    return run


def test_within_budget_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    run = budget_run(monkeypatch, Decimal("1249999.99"))  # stacks/org.yaml: ml-training's budget is $1,250,000
    assert not [v for v in run.violations if v.rule == "budget-within-account"]


def test_over_budget_is_mandatory_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    run = budget_run(monkeypatch, Decimal("1262345.67"))
    (found,) = [v for v in run.violations if v.rule == "budget-within-account"]
    assert found.level.enforcement == "mandatory"
    assert found.message == (
        "llm-train costs up to $1,262,346/month at maximum size, over ml-training's budget of $1,250,000 by "
        "$12,346; shrink the stack (its maximum size) or raise monthly_budget_usd in the organization file"
    )


def test_level_and_share_come_from_the_pack_config(monkeypatch: pytest.MonkeyPatch) -> None:
    config = {"budget-within-account": {"enforcementLevel": "advisory", "share": 0.5}}
    run = budget_run(monkeypatch, Decimal("675000"), config)
    (found,) = [v for v in run.violations if v.rule == "budget-within-account"]
    assert found.level.enforcement == "advisory"
    assert "over ml-training's budget of $625,000 (50.0% of $1,250,000) by $50,000" in found.message


def test_unknown_cost_is_not_applicable_never_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    run = budget_run(monkeypatch, None)
    assert not [v for v in run.violations if v.rule == "budget-within-account"]
    assert [n.reason for n in run.not_applicable if n.policy == "budget-within-account"] == [
        "no cost estimate for this stack"
    ]


def test_the_graph_rebuilt_from_policy_resources_equals_the_engines() -> None:
    """Under the CLI the policy gets no Graph; it rebuilds one from AnalyzeStack's resources."""
    graph = example_graph("llm-train")
    captured: list[StackValidationArgs] = []
    keep = StackValidationPolicy("capture", "keeps its args", validate=lambda args, _: captured.append(args))
    police(graph, facts_for("llm-train"), {}, policies=[keep])
    (args,) = captured
    # CrossGuard's analyzer protocol carries `protect` but not `retainOnDelete` (pulumi analyzer.proto,
    # AnalyzerResourceOptions: protect, ignoreChanges, deleteBeforeReplace, additionalSecretOutputs, aliases,
    # customTimeouts, parent): that one option cannot be rebuilt, everything else must be.
    rebuilt = budget.graph_of(StackValidationArgs(args.resources, {}, {}))
    assert any(r.protect for r in graph.resources) and any(r.retain_on_delete for r in graph.resources)
    # deleteBeforeReplace and ignoreChanges are in the protocol too, but budget.graph_of does not read them yet
    # (policy/rules/budget.py is frozen while the workspace refactor lands): compared without them for now.
    bare = {"retain_on_delete": False, "delete_before_replace": False, "ignore_changes": ()}
    assert rebuilt == Graph.of(graph.stack, graph.project, (dataclasses.replace(r, **bare) for r in graph.resources))


def test_preview_hands_over_the_cost_it_priced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "ESTIMATE", lambda graph, facts: pytest.fail("priced twice"))
    inputs = checked("llm-train")
    held = facts_for("llm-train").held
    run = police_stack(inputs.inputs, inputs.plan, example_graph("llm-train"), pack_config(), Decimal("960000"), held)
    (found,) = [v for v in run.violations if v.rule == "budget-within-account"]
    assert "llm-train costs up to $960,000/month" in found.message


def test_the_default_estimate_is_what_preview_prices() -> None:
    """Under the CLI the pack prices the graph itself: the same maximum preview shows (no usage file)."""
    (stack,) = preview_stacks([str(STACKS / "Pulumi.llm-train.yaml")]).stacks
    graph = example_graph("llm-train")
    assert budget.estimate_monthly(graph, facts_for("llm-train")) == monthly_cost(stack)
    assert stack.cost is not None and monthly_cost(stack) == stack.cost.monthly_max_usd
    # The gang's 16 reserved p5.48xlarge alone are 16 x $55.04 x 730 h = $642,867.20 (an ODCR bills the on-demand
    # rate); the elastic spot nodes, the storage and the login node add less than $110,000.
    assert monthly_cost(stack) is not None and Decimal("642867.20") < monthly_cost(stack) < Decimal(750_000)
