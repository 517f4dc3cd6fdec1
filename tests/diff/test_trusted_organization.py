"""`diff --base-ref` trusts the base's organization file: a change that raises its own grant and budget in
stacks/org.yaml to fit a bigger fleet is judged against the grant the base had, and the change to the file is
shown as its own part of the review."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from gpuinfra.commands.diff import diff_command
from gpuinfra.report.render import render
from helpers import committed_project

ROOT = Path(__file__).resolve().parents[2]
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
GRANT = "us-east-1: {L-DB2E81BA: 216, L-3819A6DF: 96}"
"""ml-inference's G and VT on-demand grant in us-east-1 (stacks/org.yaml)."""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The examples and the running package in one commit; in the working tree, chat-serve's first region grown
    to 60 replicas and the organization file granting (and budgeting) what that needs."""
    root = committed_project(tmp_path / "repo")
    serve = root / "stacks" / "Pulumi.chat-serve.yaml"
    text = serve.read_text()
    assert "max_replicas: 18" in text
    serve.write_text(text.replace("max_replicas: 18", "max_replicas: 60", 1))
    org = root / "stacks" / "org.yaml"
    org_text = org.read_text()
    assert GRANT in org_text and "monthly_budget_usd: 200000" in org_text
    raised = org_text.replace(GRANT, "us-east-1: {L-DB2E81BA: 100000, L-3819A6DF: 96}")
    org.write_text(raised.replace("monthly_budget_usd: 200000", "monthly_budget_usd: 9000000", 1))
    monkeypatch.chdir(root)
    return root


def test_the_change_is_judged_by_the_base_organization_and_its_edit_is_shown(repo: Path) -> None:
    report = diff_command(["chat-serve"], "HEAD", None, None, jobs=1)
    markdown = render(report, "markdown")
    text = render(report, "json")
    assert "quota-short" in text, "the grown fleet is judged against the base's grant of 216 vCPUs"
    assert "organization change: -      us-east-1: {L-DB2E81BA: 216" in markdown
    assert "organization change: +      us-east-1: {L-DB2E81BA: 100000" in markdown
    assert "judged by the base's (trusted) file" in markdown
    assert report.exit_code == 1, text[:2000]


def test_with_the_organization_unchanged_the_head_reads_its_own(repo: Path) -> None:
    """The same grown fleet, the organization file left as the base has it: the same refusal, and no
    organization section (the file is the base's in both cases)."""
    subprocess.run(["git", "checkout", "-q", "--", "stacks/org.yaml"], cwd=repo, check=True)
    report = diff_command(["chat-serve"], "HEAD", None, None, jobs=1)
    markdown = render(report, "markdown")
    assert "quota-short" in render(report, "json")
    assert "organization change" not in markdown
