"""The README's usage-file example and the pull-request workflow stay in step with the code."""

from __future__ import annotations

import re
from pathlib import Path

from gpuinfra.cost import load_usage_file
from gpuinfra.report.render.parts import MARKER
from helpers import ROOT
from ruamel.yaml import YAML

WORKFLOW = ROOT / ".github" / "workflows" / "gpuinfra-review.yml"


def test_readme_usage_file_example_loads(tmp_path: Path) -> None:
    readme = (ROOT / "docs" / "cost.md").read_text()  # the README's cost reference, moved into docs/
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "resource_usage:" in b)
    path = tmp_path / "usage.yml"
    path.write_text(block)
    usage = load_usage_file(path)
    assert usage.file.resource_usage["llm-train-slurm-pcs-elastic"].instances == 1


def test_workflow_runs_the_diff_and_finds_its_comment_by_the_marker() -> None:
    workflow = YAML(typ="safe").load(WORKFLOW.read_text())
    assert "pull_request" in workflow["on"]
    steps = workflow["jobs"]["review"]["steps"]
    run = "\n".join(str(s.get("run", "")) for s in steps)
    script = "\n".join(str((s.get("with") or {}).get("script", "")) for s in steps)
    assert "gpuinfra diff --base-ref" in run and "--format markdown" in run
    assert f"'{MARKER}'" in script
    assert steps[0]["with"]["fetch-depth"] == 0
    assert workflow["permissions"]["pull-requests"] == "write"


def test_workflow_keeps_the_base_preview_in_the_folder_its_cache_step_restores() -> None:
    workflow = YAML(typ="safe").load(WORKFLOW.read_text())
    steps = workflow["jobs"]["review"]["steps"]
    (cached,) = [s for s in steps if str(s.get("uses", "")).startswith("actions/cache@")]
    (review,) = [s for s in steps if "gpuinfra diff --base-ref" in str(s.get("run", ""))]
    folder = cached["with"]["path"]
    assert f"--cache-dir {folder}/" in review["run"]
    assert review["env"]["GPUINFRA_CACHE_DIR"] == folder
    assert steps.index(cached) < steps.index(review)


def test_both_workflows_judge_the_change_by_the_base_branchs_organization_file(tmp_path: Path) -> None:
    """The repository's workflow and the one `gpuinfra init` writes run the review as `diff --base-ref` of the pull
    request's base with its history fetched, so the head's stacks are judged by the base's stacks/org.yaml
    (tests/diff/test_trusted_organization.py), and neither names an organization file the change could edit."""
    from gpuinfra.commands.init import init_repository

    init_repository(tmp_path)
    for path in (WORKFLOW, tmp_path / ".github" / "workflows" / "gpuinfra-review.yml"):
        text = path.read_text()
        steps = YAML(typ="safe").load(text)["jobs"]["review"]["steps"]
        lines = [line.strip() for s in steps for line in str(s.get("run", "")).splitlines()]
        commands = [line for line in lines if re.match(r"(\.venv/bin/)?gpuinfra diff ", line)]
        assert commands and all(c.startswith(("gpuinfra diff --base-ref", ".venv/bin/gpuinfra diff --base-ref"))
                                and '--base-ref "origin/${GITHUB_BASE_REF}"' in c for c in commands), path  # fmt: skip
        assert "--org" not in text and "organization_file" not in text, path
        assert steps[0]["with"]["fetch-depth"] == 0, path
