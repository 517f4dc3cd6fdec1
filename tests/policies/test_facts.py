"""The pack fails closed: under the Pulumi CLI its facts come from PULUMI_CONFIG / PULUMI_STACK, and a gpuinfra
stack whose spec or organization file cannot be read is one mandatory violation, not silent passes."""

from __future__ import annotations

import json

import pytest
from gpuinfra.policy import facts, rules
from gpuinfra.policy.pack import pack_config
from gpuinfra.policy.runner import run_pack
from gpuinfra.pulumi.preview import engine_config
from gpuinfra.workspace import pack as workspace_pack
from helpers import ROOT, example_graph, inputs_for

COVERS = ["separation-facts-readable"]


def cli_run(monkeypatch: pytest.MonkeyPatch, config: dict[str, str]):  # type: ignore[no-untyped-def]
    """The pack as the CLI runs it: no facts installed in-process, the stack's config in the environment."""
    graph = example_graph("llm-train")  # first: the engine reads PULUMI_CONFIG too
    monkeypatch.setenv("PULUMI_STACK", "llm-train")
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps(config))
    monkeypatch.chdir(ROOT)
    facts.install_source(workspace_pack.environment_facts)  # as policies/__main__.py does
    workspace_pack._from_environment.cache_clear()
    try:
        return run_pack(graph, rules.POLICIES, pack_config(), pack=rules.PACK_NAME)
    finally:
        workspace_pack._from_environment.cache_clear()


def test_an_org_path_in_the_stack_is_one_mandatory_violation(monkeypatch: pytest.MonkeyPatch) -> None:
    config, _ = engine_config(inputs_for("llm-train"))
    config["gpuinfra:org"] = "/nonexistent/org.yaml"
    run = cli_run(monkeypatch, config)
    (violation,) = [v for v in run.violations if v.rule == "separation-facts-readable"]
    assert violation.level.enforcement == "mandatory"
    assert "names its own organization file" in violation.message and "/nonexistent/org.yaml" in violation.message
    # the other gpuinfra policies say why they could not judge, rather than passing
    assert "separation-accounts" in {n.policy for n in run.not_applicable}


def test_readable_facts_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    config, _ = engine_config(inputs_for("llm-train"))
    run = cli_run(monkeypatch, config)
    assert [v for v in run.violations if v.rule == "separation-facts-readable"] == []
    assert "separation-facts-readable" in run.evaluated


def test_a_stack_without_gpuinfra_config_is_not_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    run = cli_run(monkeypatch, {"aws:region": "us-east-1"})
    assert "separation-facts-readable" in {n.policy for n in run.not_applicable}


def test_a_spec_that_is_not_json_is_one_mandatory_violation(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Pulumi CLI hands a structured config value as JSON text: text that is not JSON fails closed too."""
    config, _ = engine_config(inputs_for("llm-train"))
    config["gpuinfra:training"] = "{not json"
    run = cli_run(monkeypatch, config)
    (violation,) = [v for v in run.violations if v.rule == "separation-facts-readable"]
    assert violation.level.enforcement == "mandatory" and "not JSON" in violation.message


def test_a_config_that_is_not_an_object_is_one_mandatory_violation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PULUMI_STACK", "llm-train")
    monkeypatch.setenv("PULUMI_CONFIG", "[1, 2]")
    monkeypatch.chdir(ROOT)
    facts.install_source(workspace_pack.environment_facts)  # as policies/__main__.py does
    workspace_pack._from_environment.cache_clear()
    try:
        run = run_pack(example_graph("llm-train"), rules.POLICIES, pack_config(), pack=rules.PACK_NAME)
    finally:
        workspace_pack._from_environment.cache_clear()
    (violation,) = [v for v in run.violations if v.rule == "separation-facts-readable"]
    assert violation.level.enforcement == "mandatory" and "PULUMI_CONFIG" in violation.message
