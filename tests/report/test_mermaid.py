"""The picture: each stack's main parts by region, drawn as a Mermaid flowchart, the changed parts marked, in the
pull-request comment and from `preview --format mermaid`. Every diagram is checked with Mermaid's own parser
(mermaid 11.17.2 under node, with jsdom for the DOM its sanitizer needs: tools/mermaid; @mermaid-js/mermaid-cli
would need a browser). Without node and `npm ci --prefix tools/mermaid` the tests skip, and fail under CI."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from gpuinfra.catalog import Catalog
from gpuinfra.cost import price_graph
from gpuinfra.report.build.diff import diff_report
from gpuinfra.report.build.picture import picture
from gpuinfra.report.render.markdown import render_diff_markdown
from gpuinfra.report.render.mermaid import flowchart, label
from gpuinfra.review.diff import Snapshot, diff_sides
from gpuinfra.review.effects import replacements
from graphs import graph, provider, res
from helpers import ROOT, example_graph, gpuinfra, graph_for

TOOL = ROOT / "tools" / "mermaid"


def parse(text: str) -> dict[str, object]:
    """Mermaid's parser on `text`: {"ok": true, "type": ...} or {"ok": false, "error": ...}."""
    node = shutil.which("node")
    if node is None or not (TOOL / "node_modules" / "mermaid").is_dir():
        message = "node and `npm ci --prefix tools/mermaid` are needed to parse Mermaid"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    done = subprocess.run([node, str(TOOL / "parse.mjs")], input=text, capture_output=True, text=True, timeout=120)
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_the_parser_refuses_a_broken_diagram() -> None:
    """The check can fail: an unclosed label is a parse error."""
    assert parse('flowchart LR\n    a["x] --> b\n')["ok"] is False


def test_the_training_cluster_picture_has_its_parts_and_parses() -> None:
    text = flowchart(picture(example_graph("llm-train")))
    for part in ("PCS cluster", "PCS node group", "FSx for Lustre", "cluster placement group (EFA fabric)", "VPC"):
        assert part in text
    assert re.search(r'subgraph g0\["us-east-1"\]', text)
    assert " --> " in text
    assert parse(text) == {"ok": True, "type": "flowchart-v2"}


def test_the_fleet_picture_groups_by_region_and_parses() -> None:
    g = example_graph("chat-serve")
    p = picture(g)
    regions = {n.group for n in p.nodes}
    assert len(regions) == 4 and sum("load balancer" in n.label for n in p.nodes) == 4
    assert parse(flowchart(p))["ok"] is True


def test_hostile_names_cannot_end_the_label_or_the_fence() -> None:
    text = label('a"] --> x\n```\n<script>#')
    assert '"' not in text[1:-1] and "`" not in text and "<" not in text
    p = provider()
    name = 'evil"]\n```'
    assert parse(flowchart(picture(graph(p, res("aws:ec2/vpc:Vpc", name, p)))))["ok"] is True


def test_the_comment_carries_a_picture_of_each_changed_stack_with_the_replaced_part_marked(catalog: Catalog) -> None:
    base = graph_for("llm-train")
    head = graph_for("llm-train", {"lustre.deployment_type": "PERSISTENT_1", "lustre.throughput_mb_s_per_tib": 200})
    d = diff_sides(
        {base.stack: Snapshot(base.stack, base, price_graph(base, catalog))},
        {head.stack: Snapshot(head.stack, head, price_graph(head, catalog))},
        replacements(),
    )
    text = render_diff_markdown(diff_report(d, "main", "head", catalog))
    (block,) = re.findall(r"```mermaid\n(.*?)\n```", text, re.S)
    assert '"-/+ FSx for Lustre: llm-train-storage-lustre"' in block
    assert re.search(r"class n\d+ replaced", block)
    assert parse(block)["ok"] is True


def test_preview_format_mermaid_draws_the_whole_stack(tmp_path: Path) -> None:
    out = tmp_path / "llm-train.mmd"
    done = gpuinfra("preview", "model-registry", "--format", "mermaid", "--out", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert text.startswith("flowchart LR\n") and 'subgraph s0["model-registry"]' in text
    assert text.count("S3 bucket") == 4 and text.count("KMS key") == 4
    assert parse(text)["ok"] is True
