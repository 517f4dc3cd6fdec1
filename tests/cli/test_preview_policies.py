"""`gpuinfra preview` runs the policy pack: the example passes, a quota shortfall fails with exit 1."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import gpuinfra, write_stack

LOW_P_QUOTA = {"accounts.ml-training.quotas.us-east-1.L-417A185B": 512}


EXAMPLES = ("llm-train", "llm-train-eks", "chat-serve", "chat-serve-k8s", "model-registry")


def test_the_examples_pass_every_mandatory_policy() -> None:
    result = gpuinfra("preview", *EXAMPLES, "--format", "json")
    assert result.returncode == 0, result.stderr
    stacks = {s["stack"]: s for s in json.loads(result.stdout)["stacks"]}
    assert set(stacks) == set(EXAMPLES)
    for name, stack in stacks.items():
        policy = stack["policy"]
        assert policy["pack"] == "gpuinfra"
        assert [v for v in policy["violations"] if v["level"] == "mandatory"] == [], name
    statuses = {p["name"]: p["status"] for p in stacks["llm-train"]["policy"]["policies"]}
    assert statuses["quota-within-grant"] == "passed" and statuses["separation-accounts"] == "passed"
    assert statuses["inference-on-demand-base"] == "not-applicable"
    assert set(statuses.values()) == {"passed", "not-applicable"}
    assert stacks["llm-train"]["policy"]["violations"] == stacks["chat-serve"]["policy"]["violations"] == []
    # Advisory only: the Kubernetes example's Deployments do not spread replicas over zones.
    assert {v["policy"] for v in stacks["chat-serve-k8s"]["policy"]["violations"]} <= {"inference-pod-zone-spread"}


def test_pointing_the_inference_stack_at_the_training_account_fails(tmp_path: Path) -> None:
    """Separation holds at both layers. The validators refuse the spec, so the engine never runs (exit 1); the
    pack's separation-accounts catches the same graph if that gate is bypassed (tests/policies/test_separation.py)."""
    path = write_stack(tmp_path, "chat-serve", spec={"account": "ml-training"})
    result = gpuinfra("preview", str(path), "--format", "json")
    assert result.returncode == 1, result.stderr
    (stack,) = json.loads(result.stdout)["stacks"]
    errors = [f for f in stack["findings"] if f["level"] == "error"]
    (mismatch,) = [f for f in errors if f["rule"] == "account-purpose-mismatch"]
    assert "account 'ml-training' has purpose 'training'" in mismatch["message"]
    assert stack["resources"] is None and stack["policy"] is None


def test_a_quota_below_the_clusters_need_fails_with_the_code_and_numbers(tmp_path: Path) -> None:
    """validate and preview agree: the validator quota-short (the verdict quota-within-grant shares) refuses
    the stack before the engine runs; the policy's own message is pinned in tests/policies/test_quotas.py."""
    path = write_stack(tmp_path, "llm-train", org=LOW_P_QUOTA)
    for command in ("validate", "preview"):
        result = gpuinfra(command, str(path), "--format", "json")
        assert result.returncode == 1, result.stdout + result.stderr
        (stack,) = json.loads(result.stdout)["stacks"]
        (finding,) = [f for f in stack["findings"] if f["level"] == "error"]
        assert finding["rule"] == "quota-short"
        assert finding["message"] == (
            "ml-training us-east-1: L-417A185B (Running On-Demand P instances) needs 3072 vCPUs at full size, "
            "granted 512"
        )


def test_the_pack_config_can_change_a_level(tmp_path: Path) -> None:
    """budget-within-account is advisory; the config raises it to mandatory, which fails the preview."""
    path = write_stack(tmp_path, "llm-train", org={"accounts.ml-training.monthly_budget_usd": 1000})
    config = tmp_path / "policy-config.json"
    config.write_text(json.dumps({"budget-within-account": "mandatory"}))
    result = gpuinfra("preview", str(path), "--policy-config", str(config), "--format", "json")
    assert result.returncode == 1, result.stderr
    (violation,) = json.loads(result.stdout)["stacks"][0]["policy"]["violations"]
    assert violation["policy"] == "budget-within-account" and violation["level"] == "mandatory"


def test_a_bad_pack_config_is_an_input_error(tmp_path: Path) -> None:
    config = tmp_path / "policy-config.json"
    config.write_text(json.dumps({"quota-within-grnat": "advisory"}))
    result = gpuinfra("preview", "llm-train", "--policy-config", str(config))
    assert result.returncode == 2
    assert "policy config names unknown policy 'quota-within-grnat'" in result.stderr
    assert "did you mean 'quota-within-grant'" in result.stderr and "Traceback" not in result.stderr
