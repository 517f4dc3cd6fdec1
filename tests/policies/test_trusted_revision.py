"""The pack under the Pulumi CLI trusts the base branch's organization file, never the pull request's copy: with no
file pinned, it reads stacks/org.yaml of `separation-trusted-organization.base_ref`, or in a GitHub Actions
pull-request run of origin/$GITHUB_BASE_REF (GitHub sets it only for pull_request events: "Variables reference",
GITHUB_BASE_REF), from git. A revision it cannot read fails closed.

The attack: the base grants ml-inference 8 vCPUs of G instances in us-east-1, which the unchanged chat-serve
exceeds; the pull request raises the grant back in its own stacks/org.yaml. Judged by the working tree's file, the
pack passes the stack; judged by the base's, quota-within-grant refuses it.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from bad_inputs import run_cli
from gpuinfra.policy import facts, rules
from gpuinfra.policy.pack import pack_config
from gpuinfra.policy.runner import run_pack
from gpuinfra.pulumi.preview import engine_config
from gpuinfra.workspace import pack as workspace_pack
from gpuinfra.workspace import trusted
from helpers import GIT, committed_project, example_graph, inputs_for
from pack_client import running_pack

GRANT = "us-east-1: {L-DB2E81BA: 216, L-3819A6DF: 96}"
"""stacks/org.yaml: ml-inference's G and VT on-demand grant in us-east-1."""
SHORT = "us-east-1: {L-DB2E81BA: 8, L-3819A6DF: 96}"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The examples committed with the short grant (the base, also as origin/main); the working tree's
    stacks/org.yaml raises it back (the pull request's edit); the CLI's environment for chat-serve."""
    root = committed_project(tmp_path / "repo")
    org = root / "stacks" / "org.yaml"
    text = org.read_text()
    assert GRANT in text
    org.write_text(text.replace(GRANT, SHORT))
    subprocess.run([*GIT, "commit", "-qam", "short grant"], cwd=root, check=True)
    subprocess.run([*GIT, "update-ref", "refs/remotes/origin/main", "HEAD"], cwd=root, check=True)
    org.write_text(text)
    config, _ = engine_config(inputs_for("chat-serve"))
    monkeypatch.setenv("PULUMI_STACK", "chat-serve")
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps(config))
    monkeypatch.chdir(root)
    facts.install_source(workspace_pack.environment_facts)  # as policies/__main__.py does
    workspace_pack._from_environment.cache_clear()
    trusted.revision_organization.cache_clear()
    yield root
    facts.pin_organization("")
    workspace_pack._from_environment.cache_clear()
    trusted.revision_organization.cache_clear()


def refusals(policy: str) -> list[str]:
    graph = example_graph("chat-serve")
    run = run_pack(graph, rules.POLICIES, pack_config(), pack=rules.PACK_NAME)
    return [v.message for v in run.violations if v.rule == policy and v.level.enforcement == "mandatory"]


def test_the_working_trees_file_passes_the_change_it_was_edited_for(repo: Path) -> None:
    facts.pin_organization("")
    assert refusals("quota-within-grant") == []


def test_a_configured_base_ref_is_trusted_instead(repo: Path) -> None:
    facts.pin_organization("", "HEAD")
    found = refusals("quota-within-grant")
    assert any("us-east-1 L-DB2E81BA" in m and "of the 8 granted" in m for m in found), found


def test_a_pull_request_run_trusts_its_base_branch(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    facts.pin_organization("")
    assert any("of the 8 granted" in m for m in refusals("quota-within-grant"))


def test_a_pinned_file_takes_precedence(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    facts.pin_organization("stacks/org.yaml", "HEAD")
    assert refusals("quota-within-grant") == []


def test_a_base_that_cannot_be_read_fails_closed(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_BASE_REF", "not-fetched")
    facts.pin_organization("")
    (message,) = refusals("separation-facts-readable")
    assert "cannot read the trusted organization file at origin/not-fetched" in message
    assert "fetch-depth: 0" in message


def test_the_real_pack_takes_base_ref_from_its_config_and_the_pull_request_from_its_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Over the analyzer protocol, the pack process started as the engine starts it: the config's base_ref reaches
    it at Configure, GITHUB_BASE_REF through its environment; a revision this checkout lacks fails closed."""
    config, _ = engine_config(inputs_for("chat-serve"))
    graph = example_graph("chat-serve")
    given = {"separation-trusted-organization": {"base_ref": "no-such-revision"}}
    with running_pack("chat-serve", config) as pack:
        pack.configure(pack_config(given=given))
        diagnostics, _ = pack.analyze_graph(graph)
    refused = [d.message for d in diagnostics if d.policy == "separation-facts-readable" and d.level == "mandatory"]
    assert any("at no-such-revision" in m for m in refused), refused
    monkeypatch.setenv("GITHUB_BASE_REF", "no-such-branch")
    with running_pack("chat-serve", config) as pack:
        pack.configure(pack_config())
        diagnostics, _ = pack.analyze_graph(graph)
    refused = [d.message for d in diagnostics if d.policy == "separation-facts-readable" and d.level == "mandatory"]
    assert any("at origin/no-such-branch" in m for m in refused), refused


@pytest.mark.parametrize("base_ref", ["", "HEAD"])
def test_gpuinfra_preview_reads_the_same_revision_from_the_same_config(
    base_ref: str, repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process, the config the pack takes under the CLI gives the same verdict: with base_ref the short grant
    refuses chat-serve (exit 1); without, the working tree's raised grant passes it (exit 0)."""
    config = tmp_path / "pin.json"
    config.write_text(json.dumps({"separation-trusted-organization": {"base_ref": base_ref}}))
    code, out, err = run_cli(capsys, monkeypatch, "preview", "chat-serve", "--policy-config", str(config))
    assert "Traceback" not in err
    if base_ref:
        assert code == 1 and "granted 8" in out + err, out[-3000:] + err
    else:
        assert code == 0, out[-3000:] + err


def test_gpuinfra_preview_refuses_a_revision_it_cannot_read(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "pin.json"
    config.write_text(json.dumps({"separation-trusted-organization": {"base_ref": "origin/not-fetched"}}))
    code, _, err = run_cli(capsys, monkeypatch, "preview", "chat-serve", "--policy-config", str(config))
    assert code == 2 and "Traceback" not in err
    assert f"{config}: cannot read the trusted organization file at origin/not-fetched" in err, err
