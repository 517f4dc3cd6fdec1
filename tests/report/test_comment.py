"""The pull-request comment reads in ten seconds: the headline (verdict, cost change, counts), then the changed
stacks; $0.00 rows folded into a count; "No changes" when nothing changed; every free-text field inert in
GitHub Markdown (checked by parsing it with markdown-it-py, a CommonMark parser); the size cap kept."""

from __future__ import annotations

import re
from pathlib import Path

from gpuinfra.catalog import Catalog
from gpuinfra.cost import price_graph
from gpuinfra.report.build.diff import diff_report
from gpuinfra.report.model import InputProblem
from gpuinfra.report.render.markdown import COMMENT_LIMIT, CUT_MARKER, REVIEW_ARTIFACT, render_diff_markdown
from gpuinfra.review.diff import ReviewItem, Snapshot, diff_sides
from gpuinfra.review.effects import replacements
from graphs import graph, provider, res
from helpers import ample_quotas, graph_for
from markdown_it import MarkdownIt

HOSTILE = "<img src=x onerror=alert(1)> @octocat fixes #12 **now** [here](https://evil.example) | x\n# heading `code`"


def review(base, head, catalog: Catalog, findings=(), problems=(), notes=()):  # type: ignore[no-untyped-def]
    d = diff_sides(
        {base.stack: Snapshot(base.stack, base, price_graph(base, catalog))} if base else {},
        {head.stack: Snapshot(head.stack, head, price_graph(head, catalog), tuple(findings))},
        replacements(),
    )
    return render_diff_markdown(diff_report(d, "main", "head", catalog, notes, problems))


def test_nothing_changed_says_no_changes(catalog: Catalog) -> None:
    p = provider()
    g = graph(p, res("aws:ec2/natGateway:NatGateway", "nat", p))
    text = review(g, g, catalog)
    assert text.splitlines()[1] == "## gpuinfra: No changes"
    assert "| |" not in text  # no tables


def test_free_rows_are_folded_into_a_count(catalog: Catalog) -> None:
    """40 new VPCs cost nothing (Infracost lists VPCs among its free resources): one count, not 40 rows."""
    p = provider()
    vpcs = [res("aws:ec2/vpc:Vpc", f"vpc-{i}", p, cidrBlock=f"10.{i}.0.0/16") for i in range(40)]
    nat = res("aws:ec2/natGateway:NatGateway", "nat", p)
    text = review(graph(p), graph(p, nat, *vpcs), catalog)
    assert "\n| + | `nat` |" in text
    assert "| + | `vpc-" not in text
    assert "<details><summary>40 more at $0.00/month: 40 to add</summary>" in text


def test_the_headline_counts_adds_changes_replaces_and_deletes(catalog: Catalog) -> None:
    p = provider()
    old = [
        res("aws:ec2/natGateway:NatGateway", "gone", p),
        res("aws:ec2/vpc:Vpc", "vpc", p, cidrBlock="10.0.0.0/16"),
        res("aws:ec2/vpc:Vpc", "vpc2", p, cidrBlock="10.1.0.0/16", enableDnsHostnames=False),
    ]
    new = [
        res("aws:ec2/natGateway:NatGateway", "new", p),
        res("aws:ec2/vpc:Vpc", "vpc", p, cidrBlock="10.9.0.0/16"),
        res("aws:ec2/vpc:Vpc", "vpc2", p, cidrBlock="10.1.0.0/16", enableDnsHostnames=True),
    ]
    heading = review(graph(p, *old), graph(p, *new), catalog).splitlines()[1]
    assert heading.endswith(" · 1 to add, 1 to change, 1 to replace, 1 to delete")


def test_hostile_text_comes_out_inert(catalog: Catalog) -> None:
    p = provider()
    g = graph(p, res("aws:ec2/natGateway:NatGateway", "nat", p))
    finding = ReviewItem(g.stack, "policy", "tags-present", "advisory", "nat", HOSTILE)
    problem = InputProblem(stack=g.stack, messages=[HOSTILE])
    text = review(None, g, catalog, findings=[finding], problems=[problem], notes=[HOSTILE])
    assert "@octocat" not in text and "#12" not in text  # no mention, no issue link
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    inline = [t for block in tokens for t in (block.children or [])]
    html = [t.content for t in [*tokens, *inline] if t.type in ("html_inline", "html_block")]
    assert all(h.startswith(("<!--", "<details", "</details", "<summary", "</summary", "<sub", "</sub")) for h in html)
    assert not [t for t in inline if t.type == "link_open" and "evil" in str(t.attrs)]
    assert not [t for t in inline if t.type == "strong_open" and "now" in str(t.attrs)]
    headings = [t for t in tokens if t.type == "heading_open"]
    assert len(headings) == 3  # the comment's own: headline, policy, the stack; none from the message
    rendered = MarkdownIt("commonmark").enable("table").render(text)
    assert "<img" not in rendered and "&lt;img src=x onerror=alert(1)&gt;" in rendered


def test_findings_alone_over_the_limit_are_cut_with_a_pointer(catalog: Catalog) -> None:
    p = provider()
    g = graph(p, res("aws:ec2/natGateway:NatGateway", "nat", p))
    many = [ReviewItem(g.stack, "policy", f"rule-{i}", "advisory", "nat", "x" * 400) for i in range(400)]
    text = review(g, g, catalog, findings=many)
    assert len(text) <= COMMENT_LIMIT
    assert text.rstrip().endswith("is the workflow run's `gpuinfra-review` artifact.*")
    # the marker the workflow `gpuinfra init` writes greps for before it uploads that artifact
    workflow = (Path(__file__).parents[2] / "templates" / "init" / "repo-workflow.yaml.j2").read_text()
    assert f"<!-- {CUT_MARKER} -->" in text and f"grep -q '{CUT_MARKER}' review.md" in workflow
    assert f"name: {REVIEW_ARTIFACT}   #" in workflow and "path: review.json" in workflow


def test_the_readme_example_change_fits_one_screen_above_the_details(catalog: Catalog) -> None:
    """The newcomer's edit of llm-train (node_count 16->18, Lustre 250->500 MB/s/TiB): the headline, findings and
    rows before the first collapsed block fit 40 lines (one screen)."""
    change = {"compute.node_count": 18, "lustre.throughput_mb_s_per_tib": 500}
    base = graph_for("llm-train", {"lustre.throughput_mb_s_per_tib": 250}, ample_quotas())
    head = graph_for("llm-train", change, ample_quotas())
    text = review(base, head, catalog)
    above = text.split("<details>", 1)[0]
    (diagram,) = re.findall(r"```mermaid\n.*?\n```", above, re.S)  # drawn as one picture, not read as lines
    assert len(above.replace(diagram, "(picture)").splitlines()) <= 30, above
    heading = text.splitlines()[1]
    # what it does to running instances first, then the money: the elastic spot nodes roll (the faster Lustre shortens
    # the checkpoint window the interruption watcher allows, in their user data); the login node does not (the
    # acceptance job counts the partition's nodes when submitted, so a resize leaves its user data alone)
    assert heading.startswith("## gpuinfra: 🔄 1 group rolls its instances (llm-train-slurm-pcs-elastic); "), heading
    assert "; 🔄 2 nodes added; monthly cost +" in heading and "0 to replace" in heading
    versions = {v for g in (base, head) for v, meaning in g.after_apply.items() if "template's version" in meaning}
    assert versions and not any(v in text for v in versions)  # no invented launch template version is shown
    assert "replace" not in above.split("\n", 2)[2].split("<details>")[0].replace("0 to replace", "")


def test_a_resize_changes_only_the_node_groups_and_the_headline_says_so(catalog: Catalog) -> None:
    """llm-train 16 -> 20 nodes: the whole gang is on reserved capacity (#48, review T15), so its group grows
    16 -> 20, and nothing else changes (the elastic spot partition is sized on its own); the login node (whose NCCL
    acceptance job spans every node) is not touched, and the headline says 4 nodes are added and nothing rolls."""
    base = graph_for("llm-train", {}, ample_quotas())
    head = graph_for("llm-train", {"compute.node_count": 20}, ample_quotas())
    d = diff_sides(
        {"llm-train": Snapshot("llm-train", base, price_graph(base, catalog))},
        {"llm-train": Snapshot("llm-train", head, price_graph(head, catalog))},
        replacements(),
    )
    changed = {(r.name, c.path, c.before, c.after) for s in d.stacks for r in s.resources for c in r.changes}
    assert changed == {
        ("llm-train-slurm-pcs-od", "scalingConfiguration.minInstanceCount", 16, 20),
        ("llm-train-slurm-pcs-od", "scalingConfiguration.maxInstanceCount", 16, 20),
    }, changed
    text = render_diff_markdown(diff_report(d, "main", "head", catalog))
    heading = text.splitlines()[1]
    assert heading.startswith("## gpuinfra: 🔄 4 nodes added; monthly cost +"), heading
    assert "roll" not in heading and heading.endswith("· 0 to add, 1 to change, 0 to replace, 0 to delete")
    assert "`llm-train-slurm-pcs-login" not in text  # no row, no property table
    assert '"PCS node group: llm-train-slurm-pcs-login"' in text  # drawn unchanged (a changed one is marked "~ ")
