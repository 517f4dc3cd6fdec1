"""One finding type for every stage (issue 45): the validators, preflight and the policy pack all return
`gpuinfra.findings.Finding` with one level vocabulary, and a preview's review items are made from those findings
directly: the same items a stored report of the same preview reads back (diff --base-ref, the cache)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.commands.preview import built_stack, policed
from gpuinfra.commands.snapshots import stored_findings
from gpuinfra.cost import Usage
from gpuinfra.findings import Finding, Level, ordered
from gpuinfra.graph import Graph
from gpuinfra.policy.pack import pack_config, police
from gpuinfra.preflight import preflight
from gpuinfra.review.documents import findings_of
from gpuinfra.review.items import review_items
from helpers import checked, example_graph
from policy_helpers import edited, facts_for

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
IMDSV1 = ((LAUNCH_TEMPLATE, None, {"metadataOptions.httpTokens": "optional"}),)
"""Every launch template lets instances use IMDSv1: security-imdsv2 (mandatory) refuses each."""


def test_one_level_vocabulary_with_the_packs_words_for_two_of_it() -> None:
    assert Level.INFO < Level.WARNING < Level.ERROR
    assert [str(level) for level in Level] == ["info", "warning", "error"]
    assert Level.of("mandatory") is Level.ERROR and Level.of("advisory") is Level.WARNING
    assert Level.ERROR.enforcement == "mandatory" and Level.WARNING.enforcement == "advisory"
    with pytest.raises(KeyError):
        Level.of("critical")


def test_every_stage_returns_the_one_finding_type() -> None:
    validated = checked("llm-train-eks").findings
    judged = preflight(example_graph("llm-train-eks"), load_catalog())
    run = police(edited(example_graph("llm-train"), IMDSV1), facts_for("llm-train"), pack_config())
    assert validated and judged and run.violations
    for stage, found in (("validator", validated), ("preflight", judged), ("policy", run.violations)):
        assert {type(f) for f in found} == {Finding}, stage
        assert {f.stage for f in found} == {stage}
    imds = [v for v in run.violations if v.rule == "security-imdsv2"]
    assert imds and all(v.level is Level.ERROR and v.blocking for v in imds)
    assert all(v.name and v.urn.endswith(f"::{v.name}") for v in imds)  # named after the resource they judge


def test_the_packs_findings_are_listed_blocking_first() -> None:
    a = Finding("b-rule", Level.WARNING, "", "m", stage="policy")
    b = Finding("z-rule", Level.ERROR, "", "m", stage="policy", urn="u2")
    c = Finding("z-rule", Level.ERROR, "", "m", stage="policy", urn="u1")
    assert ordered([a, b, c]) == [c, b, a]


def _policed(stack: str, graph_edits: tuple[object, ...]) -> tuple[object, object]:
    """A stack previewed as the CLI does, its graph edited before the pack judges it."""
    built = built_stack(checked(stack), Usage())
    assert isinstance(built.graph, Graph)
    bad = dataclasses.replace(built, graph=edited(built.graph, graph_edits))  # type: ignore[arg-type]
    return policed(bad, pack_config())


@pytest.mark.parametrize("stack", ["llm-train-eks", "llm-train"])
def test_a_previews_review_items_are_what_its_stored_report_reads_back(stack: str) -> None:
    """Made from the stages' findings, not from the report: the items equal those the report's JSON reads back
    (a base side of `diff --base-ref`) and those a cached entry's report reads back, in the same order."""
    report, snapshot = _policed(stack, IMDSV1)
    items = snapshot.findings  # type: ignore[attr-defined]
    sources = {i.source for i in items}
    assert "validator" in sources and "policy" in sources
    assert "preflight" in sources or stack == "llm-train"  # llm-train's graph has no preflight finding
    stored = json.loads(report.model_dump_json())  # type: ignore[attr-defined]
    assert items == findings_of(stack, stored)
    assert items == review_items(stack, stored_findings(report))  # type: ignore[arg-type]
    assert {i.level for i in items if i.source == "policy"} == {"mandatory"}
