"""Quotas are the account's: `validate`, the program's increase request and the policy all count the
repository's other stacks in the same account and region (plan/account.py), and agree."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from gpuinfra.load import load_inputs
from gpuinfra.plan import TrainingPlan
from gpuinfra.policy.pack import pack_config, police_stack
from gpuinfra.pulumi.preview import preview_graph
from gpuinfra.workspace import workspace_of
from gpuinfra.workspace.check import check_stack
from helpers import STACKS, checked, gpuinfra, graph_for

P5_VCPUS = 192  # p5.48xlarge (AWS EC2 accelerated computing instance types page)
FINETUNE = 16  # llm-finetune: one p5.4xlarge (16 vCPUs) in each of its Batch environments (on-demand, spot)


def test_validate_counts_the_other_stacks_of_the_account() -> None:
    plan = checked("llm-train").plan
    assert isinstance(plan, TrainingPlan)
    od = next(q for q in plan.quotas if q.code == "L-417A185B")
    # llm-train: 16 p5.48xlarge on an On-Demand Capacity Reservation (it counts against the On-Demand quota);
    # llm-train-eks: on_demand_base 4 of 16. llm-train-onprem is on premises.
    assert od.own == 16 * P5_VCPUS
    assert od.held == (("llm-finetune", FINETUNE), ("llm-train-eks", 4 * P5_VCPUS))
    assert od.vcpus == 20 * P5_VCPUS + FINETUNE
    spot = next(q for q in plan.quotas if q.code == "L-C4BD4855")
    # llm-train's 2 elastic spot nodes at their most, llm-train-eks's 12 spot nodes
    assert (spot.own, spot.vcpus) == (2 * P5_VCPUS, 14 * P5_VCPUS + FINETUNE)


def test_the_increase_request_asks_for_the_account_total() -> None:
    """AWS sets the account's quota value: a request for the stack's own 3072 would leave the others' out."""
    org = {
        "accounts.ml-training.quotas.us-east-1.L-417A185B": 512,
        "accounts.ml-training.request_quota_increases": True,
    }
    graph = graph_for("llm-train", org=org)
    quota = "aws:servicequotas/serviceQuota:ServiceQuota"
    requests = {r.inputs["quotaCode"]: r.inputs["value"] for r in graph.resources if r.type == quota}
    assert requests == {"L-417A185B": 20 * P5_VCPUS + FINETUNE}
    result = checked("llm-train", org=org)
    assert "quota-short" not in {f.rule for f in result.findings}


def test_a_sibling_that_cannot_be_read_fails_validate_and_the_policy_alike(tmp_path: Path) -> None:
    """Fail closed: a stack of the same directory that cannot be read holds an unknown share of the quota."""
    for name in ("org.yaml", "Pulumi.llm-train.yaml"):
        shutil.copy(STACKS / name, tmp_path / name)
    (tmp_path / "Pulumi.broken.yaml").write_text("config:\n  gpuinfra:training: {name: broken\n")
    result = gpuinfra("validate", str(tmp_path / "Pulumi.llm-train.yaml"), "--format", "json")
    assert result.returncode == 1, result.stdout + result.stderr
    stacks = json.loads(result.stdout)["stacks"]
    messages = [f["message"] for s in stacks for f in s["findings"] if f["level"] == "error"]
    assert any("quota totals cannot be checked: the repository's stack broken cannot be read" in m for m in messages)

    inputs = load_inputs(tmp_path / "Pulumi.llm-train.yaml")
    checked = check_stack(tmp_path / "Pulumi.llm-train.yaml")
    plan = checked.plan
    problems = [f.message for f in checked.findings if "broken" in f.message]
    assert problems and "the repository's stack broken cannot be read" in problems[0]
    held = workspace_of(inputs.stack.path, inputs.org.path).facts(inputs)
    run = police_stack(inputs, plan, preview_graph(inputs, plan), pack_config(), held=held)
    assert any(v.rule == "quota-within-grant" and "broken cannot be read" in v.message for v in run.mandatory), [
        v.message for v in run.violations
    ]
