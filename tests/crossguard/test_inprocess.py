"""The in-process runner keeps the analyzer's semantics: levels, config, not-applicable, unknown values."""

from __future__ import annotations

import pytest
from gpuinfra.graph import UNKNOWN
from gpuinfra.policy import rules as policies
from gpuinfra.policy.pack import pack_config, police
from gpuinfra.policy.runner import diagnostic, run_pack
from helpers import example_graph
from policy_helpers import edited, facts_for
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

LT = "aws:ec2/launchTemplate:LaunchTemplate"
OD_LT = (LT, "llm-train-slurm-pcs-od-lt")
IMDSV1 = ((*OD_LT, {"metadataOptions.httpTokens": "optional"}),)


def imds(run: object) -> list:  # type: ignore[type-arg]
    return [v for v in run.violations if v.rule == "security-imdsv2"]  # type: ignore[attr-defined]


def test_a_configured_level_replaces_the_default() -> None:
    graph = edited(example_graph("llm-train"), IMDSV1)
    (found,) = imds(police(graph, facts_for("llm-train"), pack_config(given={"security-imdsv2": "advisory"})))
    assert found.level.enforcement == "advisory"
    assert found.urn.endswith("aws:ec2/launchTemplate:LaunchTemplate::llm-train-slurm-pcs-od-lt")
    assert diagnostic(found) == (
        "Instances require IMDSv2 session tokens (metadataOptions.httpTokens = required).\n" + found.message
    )


def test_disabled_policies_do_not_run() -> None:
    graph = edited(example_graph("llm-train"), IMDSV1)
    run = police(graph, facts_for("llm-train"), pack_config(given={"security-imdsv2": "disabled"}))
    assert imds(run) == [] and run.levels["security-imdsv2"] == "disabled"


def test_remediate_is_reported_as_mandatory() -> None:
    graph = edited(example_graph("llm-train"), IMDSV1)
    (found,) = imds(police(graph, facts_for("llm-train"), pack_config(given={"security-imdsv2": "remediate"})))
    assert found.level.enforcement == "mandatory"


def test_an_unknown_value_makes_the_policy_advisory_cant_run() -> None:
    graph = edited(example_graph("llm-train"), ((*OD_LT, {"metadataOptions.httpTokens": UNKNOWN}),))
    (found,) = imds(police(graph, facts_for("llm-train"), pack_config()))
    assert found.level.enforcement == "advisory" and found.unknown
    assert found.message == (
        "can't run policy 'security-imdsv2' from policy pack 'gpuinfra@v0.0.1' during preview: "
        "string value at .metadataOptions.httpTokens can't be known during preview"
    )


def test_not_applicable_is_recorded_not_reported() -> None:
    run = police(example_graph("llm-train"), facts_for("llm-train"), pack_config())
    assert not [v for v in run.violations if v.rule.startswith("inference-")]
    assert {n.policy for n in run.not_applicable} >= {"inference-on-demand-base", "inference-health-checks"}


def test_without_facts_gpuinfra_policies_are_not_applicable_but_security_still_runs() -> None:
    graph = edited(example_graph("llm-train"), IMDSV1)
    run = police(graph, None, pack_config())
    assert imds(run)
    assert "separation-accounts" in {n.policy for n in run.not_applicable}


def test_a_crashing_policy_is_a_mandatory_violation() -> None:
    def boom(args, report_violation):  # type: ignore[no-untyped-def]
        raise KeyError("surprise")

    broken = ResourceValidationPolicy(
        "broken", "always crashes", validate=boom, enforcement_level=EnforcementLevel.ADVISORY
    )
    run = run_pack(example_graph("llm-train"), [broken], {}, pack="t")
    assert {v.level.enforcement for v in run.violations} == {"mandatory"}
    assert run.violations[0].message == "policy crashed: KeyError: 'surprise'"


def test_type_prefiltering_changes_nothing() -> None:
    """Resource policies declare their types; calling them on every type (as the CLI does) gives the same run."""
    graph = edited(example_graph("llm-train"), IMDSV1)
    unfiltered = [
        ResourceValidationPolicy(
            p.name,
            p.description,
            validate=p.validate,
            enforcement_level=p.enforcement_level,
            config_schema=p.config_schema,
        )
        if isinstance(p, ResourceValidationPolicy)
        else p
        for p in policies.POLICIES
    ]
    filtered_run = police(graph, facts_for("llm-train"), pack_config())
    unfiltered_run = police(graph, facts_for("llm-train"), pack_config(), policies=unfiltered)
    assert sorted(filtered_run.violations) == sorted(unfiltered_run.violations)
    assert sorted(filtered_run.not_applicable) == sorted(unfiltered_run.not_applicable)


@pytest.mark.parametrize("stack", ["llm-train"])
def test_the_example_stacks_pass_every_mandatory_policy(stack: str) -> None:
    run = police(example_graph(stack), facts_for(stack), pack_config())
    assert run.mandatory == []
    assert run.violations == [], [v.message for v in run.violations]
