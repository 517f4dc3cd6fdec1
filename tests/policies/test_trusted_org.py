"""Trusted facts: the relabelled-account attack of issue 26, planted and caught everywhere it could land.

The attack: a pull request adds `gpuinfra:org: private/org.yaml` to an inference stack, and the private file
relabels the training account (111111111111) as `purpose: inference` with huge quotas and budget, so the fleet
would deploy into the training account with every check green. Now the stack cannot choose its organization
file: validate and preview refuse it (exit 2, the key no longer fits the stack schema), the program refuses it
(`inputs_from_config`, what `pulumi up` runs), and the pack refuses it (separation-facts-readable, mandatory),
in-process and over the real analyzer protocol. Judged by the trusted file, the graph the attacker wanted fails
separation-accounts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bad_inputs import run_cli
from gpuinfra.catalog import load_catalog
from gpuinfra.errors import InputError
from gpuinfra.load import inputs_from_config
from gpuinfra.policy import facts, rules
from gpuinfra.policy.pack import pack_config, police
from gpuinfra.policy.runner import run_pack
from gpuinfra.pulumi.preview import engine_config
from gpuinfra.workspace import pack as workspace_pack
from helpers import ROOT, STACKS, apply, example_graph, inputs_for, org_data, write_stack
from pack_client import running_pack
from policy_helpers import facts_for, program_graph
from ruamel.yaml import YAML

COVERS = ["separation-trusted-organization"]
TRAINING_ID = "111111111111"
RELABEL = {
    "accounts.ml-training.purpose": "inference",
    "accounts.ml-training.monthly_budget_usd": 10_000_000,
    "accounts.ml-training.quotas.us-east-1.L-DB2E81BA": 100_000,
    "accounts.ml-training.quotas.us-east-1.L-3819A6DF": 100_000,
}
"""The private organization file's changes: the training account relabelled as an inference account."""
ATTACK_SPEC = {"account": "ml-training"}
"""The inference stack then names the (relabelled) training account."""


def plant(tmp_path: Path) -> Path:
    """chat-serve aimed at the training account, naming a private organization file that relabels it."""
    stack = write_stack(tmp_path, "chat-serve", spec=ATTACK_SPEC)
    (tmp_path / "private").mkdir()
    with (tmp_path / "private" / "org.yaml").open("w") as fh:
        YAML().dump(apply(org_data(), RELABEL), fh)
    text = stack.read_text().replace("config:\n", "config:\n  gpuinfra:org: private/org.yaml\n", 1)
    stack.write_text(text)
    return stack


@pytest.mark.parametrize("command", ["validate", "preview"])
def test_the_cli_refuses_a_stack_naming_its_own_organization(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = plant(tmp_path)
    code, out, err = run_cli(capsys, monkeypatch, command, str(stack))
    assert code == 2, out + err
    assert "Traceback" not in err
    line = next(i for i, text in enumerate(stack.read_text().splitlines(), 1) if "gpuinfra:org" in text)
    assert f"Pulumi.chat-serve.yaml:{line}" in err and "names its own organization file" in err, err
    assert str(tmp_path / "org.yaml") in err and "hint: remove gpuinfra:org" in err, err


def test_the_program_refuses_it_too() -> None:
    """`pulumi up` runs program.load(), which reads the stack with `inputs_from_config`."""
    config = {**engine_config(inputs_for("chat-serve"))[0], "gpuinfra:org": "/tmp/private/org.yaml"}
    with pytest.raises(InputError) as refused:
        inputs_from_config("chat-serve", config, ROOT, load_catalog())
    assert "names its own organization file" in refused.value.render()


def test_naming_the_trusted_file_itself_is_allowed() -> None:
    config = {**engine_config(inputs_for("chat-serve"))[0], "gpuinfra:org": "stacks/org.yaml"}
    inputs = inputs_from_config("chat-serve", config, ROOT, load_catalog())
    assert inputs.org.path == STACKS / "org.yaml"


def cli_config(tmp_path: Path) -> dict[str, str]:
    config, _ = engine_config(inputs_for("chat-serve"))
    return {
        **config,
        "gpuinfra:inference": json.dumps({**json.loads(config["gpuinfra:inference"]), **ATTACK_SPEC}),
        "gpuinfra:org": str(tmp_path / "private" / "org.yaml"),
    }


def test_the_pack_refuses_it_under_the_cli_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plant(tmp_path)
    graph = example_graph("chat-serve")  # before the environment below: the engine reads PULUMI_CONFIG too
    monkeypatch.setenv("PULUMI_STACK", "chat-serve")
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps(cli_config(tmp_path)))
    monkeypatch.chdir(ROOT)
    facts.install_source(workspace_pack.environment_facts)  # as policies/__main__.py does
    workspace_pack._from_environment.cache_clear()
    try:
        run = run_pack(graph, rules.POLICIES, pack_config(), pack=rules.PACK_NAME)
    finally:
        workspace_pack._from_environment.cache_clear()
    (violation,) = [v for v in run.violations if v.rule == "separation-facts-readable"]
    assert violation.level.enforcement == "mandatory" and "names its own organization file" in violation.message
    assert {"separation-accounts", "quota-within-grant", "budget-within-account"} <= {
        n.policy for n in run.not_applicable
    }


def test_the_pack_refuses_it_over_the_analyzer_protocol(tmp_path: Path) -> None:
    plant(tmp_path)
    graph = example_graph("chat-serve")
    with running_pack("chat-serve", cli_config(tmp_path)) as pack:
        pack.configure(pack_config())
        diagnostics, _ = pack.analyze_graph(graph)
    refused = [d for d in diagnostics if d.policy == "separation-facts-readable"]
    assert [d.level for d in refused] == ["mandatory"]
    assert "names its own organization file" in refused[0].message


def test_the_graph_the_attacker_wanted_fails_on_the_trusted_facts() -> None:
    """Built against the relabelled file (as `pulumi up` would have), judged by stacks/org.yaml."""
    graph = program_graph("chat-serve", ATTACK_SPEC, RELABEL, unchecked=True)
    providers = [r for r in graph.resources if r.type == "pulumi:providers:aws"]
    assert providers and all(TRAINING_ID in json.dumps(p.inputs) for p in providers)
    run = police(graph, facts_for("chat-serve"), pack_config())
    found = [v for v in run.violations if v.rule == "separation-accounts"]
    assert found and all(v.level.enforcement == "mandatory" for v in found)
    assert any(f"ml-training ({TRAINING_ID}), a training account" in v.message for v in found), found


def test_a_pinned_organization_file_must_be_the_one_read(tmp_path: Path) -> None:
    """In-process the host read the facts (from --org or stacks/org.yaml); the pack's pin must match it."""
    elsewhere = tmp_path / "org.yaml"
    elsewhere.write_text((STACKS / "org.yaml").read_text())
    pinned = {"separation-trusted-organization": {"organization_file": str(elsewhere)}}
    run = police(example_graph("chat-serve"), facts_for("chat-serve"), pack_config(given=pinned))
    (violation,) = [v for v in run.violations if v.rule == "separation-trusted-organization"]
    assert violation.level.enforcement == "mandatory" and str(elsewhere) in violation.message


def test_the_default_and_a_matching_pin_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    for given in ({}, {"separation-trusted-organization": {"organization_file": "stacks/org.yaml"}}):
        run = police(example_graph("chat-serve"), facts_for("chat-serve"), pack_config(given=given))
        assert [v for v in run.violations if v.rule == "separation-trusted-organization"] == []
        assert "separation-trusted-organization" in run.evaluated
