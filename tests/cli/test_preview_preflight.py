"""Preflight findings reach every place a user reads: `preview` (table, Markdown, JSON `preflight` per stack,
exit 1 on a refusal) and the review (`diff`'s findings and the PR comment, blocking).

A refusal is planted the way tests/preflight plants one: the graph the engine returns is changed before
preflight judges it (a launch template's IMDS hop limit of 65, above the 1-64 EC2's API reference allows
for HttpPutResponseHopLimit), so these tests do not depend on any generator having a bug."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import gpuinfra.commands.preview as preview_module
import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.commands.diff import diff_command
from gpuinfra.commands.preview import PreviewRun, preview_run
from gpuinfra.graph import Graph
from gpuinfra.graph.tokens import LAUNCH_TEMPLATE
from gpuinfra.report.build.diff import diff_report
from gpuinfra.report.render import render
from gpuinfra.review.diff import diff_sides
from gpuinfra.review.effects import replacements

STACK = "chat-serve"
RULE = "PF-EC2-IMDS"
PATH = "metadataOptions.httpPutResponseHopLimit"


def _plant(graph: Graph) -> Graph:
    """The graph with its first launch template's hop limit set to 65."""
    target = graph.of_type(LAUNCH_TEMPLATE)[0]
    inputs: dict[str, Any] = copy.deepcopy(target.inputs)
    inputs.setdefault("metadataOptions", {})["httpPutResponseHopLimit"] = 65
    changed = replace(target, inputs=inputs)
    return Graph.of(graph.stack, graph.project, [changed if r.urn == target.urn else r for r in graph.resources])


@pytest.fixture(scope="module")
def clean() -> PreviewRun:
    return preview_run([STACK])


@pytest.fixture(scope="module")
def refused() -> Iterator[PreviewRun]:
    real = preview_module.preflight
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(preview_module, "preflight", lambda graph, catalog: real(_plant(graph), catalog))
        yield preview_run([STACK])


def test_a_clean_stack_carries_an_empty_refusal_list_and_exits_0(clean: PreviewRun) -> None:
    (stack,) = clean.report.stacks
    assert stack.preflight is not None
    assert [f for f in stack.preflight if f.level == "error"] == []
    assert clean.report.exit_code == 0
    doc = json.loads(render(clean.report, "json"))
    assert doc["stacks"][0]["preflight"] == [f.model_dump(mode="json") for f in stack.preflight]


def test_a_refusal_is_in_every_format_and_fails_the_preview(refused: PreviewRun) -> None:
    assert refused.report.exit_code == 1
    (stack,) = refused.report.stacks
    (finding,) = [f for f in stack.preflight or [] if f.level == "error"]
    assert (finding.rule, finding.path, finding.value) == (RULE, PATH, "65")
    assert "EC2" in finding.source

    doc = json.loads(render(refused.report, "json"))
    assert {"rule": RULE, "path": PATH, "level": "error"}.items() <= doc["stacks"][0]["preflight"][0].items()
    markdown = render(refused.report, "markdown")
    assert "**Preflight**: 1 refused by AWS or Kubernetes" in markdown and f"`{RULE}`" in markdown
    table = render(refused.report, "table")
    assert "preflight: 1 refused by AWS or Kubernetes" in table and RULE in table


def test_the_review_shows_a_new_refusal_as_blocking(clean: PreviewRun, refused: PreviewRun) -> None:
    report = diff_report(
        diff_sides(clean.snapshots, refused.snapshots, replacements()), "base", "head", load_catalog(), [], []
    )
    assert report.exit_code == 1
    rows = [f for s in report.stacks for f in s.findings if f.rule == RULE]
    assert [(f.source, f.level, f.status) for f in rows] == [("preflight", "error", "new")]
    assert rows[0].where.endswith(PATH)
    comment = render(report, "markdown")
    assert f"`{RULE}`" in comment


def test_a_fixed_refusal_shows_as_resolved_and_no_longer_blocks(clean: PreviewRun, refused: PreviewRun) -> None:
    report = diff_report(
        diff_sides(refused.snapshots, clean.snapshots, replacements()), "base", "head", load_catalog(), [], []
    )
    assert report.exit_code == 0
    assert [f.status for s in report.stacks for f in s.findings if f.rule == RULE] == ["resolved"]


def test_documents_carry_refusals_into_diff(clean: PreviewRun, refused: PreviewRun, tmp_path: Path) -> None:
    """`gpuinfra diff base.json head.json` reads the findings back from the `preflight` list of each stack."""
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    base.write_text(render(clean.report, "json"))
    head.write_text(render(refused.report, "json"))
    report = diff_command([str(base), str(head)], None, None, None)
    assert report.exit_code == 1
    assert [(f.level, f.status) for s in report.stacks for f in s.findings if f.rule == RULE] == [("error", "new")]
