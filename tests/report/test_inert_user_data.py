"""Inert text never rolls a node: a spec edit that changes a launch template's user data changes something a node
does, never only a comment (a new user data is a new template version, and the groups pinned to it roll). And the
review shows the line that does something: the first changed line that is not a comment on both sides."""

from __future__ import annotations

import pytest
from gpuinfra.catalog import Catalog
from gpuinfra.cost import price_graph
from gpuinfra.report.build.diff import diff_report
from gpuinfra.report.format import readable
from gpuinfra.report.render.markdown import render_diff_markdown
from gpuinfra.review.diff import Diff, Snapshot, diff_sides
from gpuinfra.review.effects import replacements
from helpers import ample_quotas, graph_for


def review(catalog: Catalog, change: dict[str, object]) -> Diff:
    base = graph_for("llm-train", {}, ample_quotas())
    head = graph_for("llm-train", change, ample_quotas())
    return diff_sides(
        {"llm-train": Snapshot("llm-train", base, price_graph(base, catalog))},
        {"llm-train": Snapshot("llm-train", head, price_graph(head, catalog))},
        replacements(),
    )


def changed_lines(before: object, after: object) -> list[tuple[str, str]]:
    old, new = (readable(before) or "").splitlines(), (readable(after) or "").splitlines()
    assert len(old) == len(new)  # these edits change values, not the number of lines
    return [(a, b) for a, b in zip(old, new, strict=True) if a != b]


@pytest.mark.parametrize(
    "change",
    [
        {"checkpointing.retention_days": 30},  # the bucket expires copies; the login node's pruner only tags them
        {"compute.node_count": 20},  # the acceptance job counts the partition's nodes when submitted
        {"checkpointing.keep_last": 5},  # the pruner keeps 5 (and the trainers are told so)
        {"lustre.storage_capacity_gib": 76800},  # a faster Lustre: the spot nodes' checkpoint window shrinks
    ],
)
def test_no_edit_changes_only_comments_in_user_data(catalog: Catalog, change: dict[str, object]) -> None:
    for s in review(catalog, change).stacks:
        for r in s.resources:
            for c in r.changes:
                if c.path == "userData":
                    lines = changed_lines(c.before, c.after)
                    assert any(not (a.lstrip().startswith("#") and b.lstrip().startswith("#")) for a, b in lines), (
                        r.name,
                        lines,
                    )


def test_a_retention_change_leaves_every_node_alone(catalog: Catalog) -> None:
    """retention_days is the bucket's lifecycle rule: it used to be repeated in a comment of the login node's
    pruner, which rolled the login node."""
    changed = {r.name for s in review(catalog, {"checkpointing.retention_days": 30}).stacks for r in s.resources}
    assert not {n for n in changed if "-lt" in n or n.endswith(("-login", "-od", "-spot"))}, changed


def test_the_table_shows_the_changed_command_not_its_comment(catalog: Catalog) -> None:
    """A larger Lustre writes a checkpoint faster (57,600 -> 76,800 GiB at 250 MB/s/TiB): the interruption
    watcher's comment and its command both change; the row shows the command."""
    d = review(catalog, {"lustre.storage_capacity_gib": 76800})
    text = render_diff_markdown(diff_report(d, "main", "head", catalog))
    (row,) = [line for line in text.splitlines() if line.startswith("| `userData` |")]
    assert "echo $(($(date +%s) + " in row and "#" not in row.split("|")[2], row
