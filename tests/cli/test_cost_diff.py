"""`gpuinfra cost` and `gpuinfra diff` end to end: the console entry point, formats and exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from gpuinfra.report.render.parts import MARKER
from helpers import ROOT, gpuinfra, write_stack


def preview_json(tmp_path: Path, name: str, spec: dict) -> Path:  # type: ignore[type-arg]
    folder = tmp_path / name
    folder.mkdir()
    stack = write_stack(folder, "llm-train", spec)
    out = tmp_path / f"{name}.json"
    done = gpuinfra("preview", str(stack), "--format", "json", "--out", str(out))
    assert done.returncode in (0, 1), done.stderr
    return out


def test_preview_json_carries_the_cost_and_its_range() -> None:
    done = gpuinfra("preview", "llm-train", "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    cost = report["stacks"][0]["cost"]
    assert float(cost["monthly_usd"]) > 0
    assert {"monthly_min_usd", "monthly_max_usd", "prices_as_of", "unpriced", "by_component"} <= cost.keys()
    assert report["cost"]["monthly_usd"] == cost["monthly_usd"]


def test_cost_command_prints_the_breakdown_with_its_dates() -> None:
    done = gpuinfra("cost", "llm-train")
    assert done.returncode == 0, done.stderr
    assert "Instances, spot (p5.48xlarge" in done.stdout and "prices as of" in done.stdout


def test_diff_two_previews(tmp_path: Path) -> None:
    base = preview_json(tmp_path, "base", {})
    head = preview_json(
        tmp_path, "head", {"lustre.deployment_type": "PERSISTENT_1", "lustre.throughput_mb_s_per_tib": 200}
    )
    done = gpuinfra("diff", str(base), str(head), "--format", "markdown")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith(MARKER)
    # the throughput tier updates in place (tfaws: no ForceNew); PERSISTENT_1 has no EFA, and efaEnabled is create-only
    assert "**replace** (deploymentType, efaEnabled)" in text
    assert text.index("monthly cost") < text.index("### `llm-train`") < text.index("<details>")


def test_diff_exits_1_when_the_head_has_an_error_finding(tmp_path: Path) -> None:
    base = preview_json(tmp_path, "base", {})
    head = preview_json(  # too long with spot: the gang back on spot above 4 on-demand nodes
        tmp_path,
        "head",
        {"checkpointing.interval_minutes": 1000, "compute.capacity": {"type": "spot", "on_demand_base": 4}},
    )
    done = gpuinfra("diff", str(base), str(head), "--format", "json")
    report = json.loads(done.stdout)
    errors = [f for s in report["stacks"] for f in s["findings"] if f["level"] == "error"]
    assert errors and done.returncode == 1


def test_diff_needs_two_documents_or_a_base_ref(tmp_path: Path) -> None:
    base = preview_json(tmp_path, "base", {})
    done = gpuinfra("diff", str(base))
    assert done.returncode == 2 and "give a base and a head" in done.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_base_ref_in_a_fresh_clone(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=120)
    stack = clone / "stacks" / "Pulumi.llm-train.yaml"
    # Fewer nodes: 20 would overrun the on-demand P quota, a mandatory policy violation (exit 1).
    stack.write_text(stack.read_text().replace("node_count: 16", "node_count: 12"))
    done = gpuinfra("diff", "--base-ref", "HEAD~1", "llm-train", "--format", "markdown", cwd=clone)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(MARKER)
    assert "`llm-train-slurm-pcs-od`" in done.stdout and "HEAD~1 (" in done.stdout
    worktrees = subprocess.run(["git", "worktree", "list"], cwd=clone, capture_output=True, text=True).stdout
    assert len(worktrees.strip().splitlines()) == 1  # the temporary worktree is gone
