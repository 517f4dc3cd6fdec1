"""`gpuinfra diff`: two sides of a review (two documents, one `pulumi preview --json`, or a git ref against the
working tree), compared resource by resource and finding by finding, with the monthly cost change."""

from __future__ import annotations

import tempfile
from pathlib import Path

from gpuinfra.catalog import load_catalog
from gpuinfra.cost import Usage, load_usage_file
from gpuinfra.errors import InputError
from gpuinfra.load import project_dir, stack_names
from gpuinfra.report.build.diff import diff_report
from gpuinfra.report.model import DiffReport, InputProblem
from gpuinfra.review.diff import diff_sides
from gpuinfra.review.documents import EXPORT, GPUINFRA, Side, load_document, pulumi_sides, side
from gpuinfra.review.replacements import load_rules


def diff_command(args: list[str], base_ref: str | None, org: Path | None, usage_file: Path | None) -> DiffReport:
    """Two documents (base, head); one pulumi preview (its old and new states); or --base-ref REF [STACKS]."""
    usage = load_usage_file(usage_file) if usage_file else Usage()
    catalog = load_catalog()
    notes: list[str] = []
    problems: list[InputProblem] = []
    if base_ref is not None:
        base, head, labels = _from_ref(base_ref, args, org, usage_file, usage, notes, problems)
    elif len(args) == 2:
        base = side(load_document(Path(args[0])), "base", catalog, usage)
        head = side(load_document(Path(args[1])), "head", catalog, usage)
        labels = (args[0], args[1])
    elif len(args) == 1:
        doc = load_document(Path(args[0]))
        if doc.kind in (GPUINFRA, EXPORT):
            raise InputError.single(
                f"{args[0]} is a {doc.kind}: give a base and a head document, or --base-ref",
                hint="gpuinfra diff BASE.json HEAD.json, or gpuinfra diff --base-ref main",
            )
        base, head = pulumi_sides(doc, catalog, usage)
        labels = (f"{args[0]} (old state)", f"{args[0]} (planned)")
    else:
        raise InputError.single(
            "diff needs BASE.json HEAD.json, one pulumi preview --json document, or --base-ref REF",
            hint="gpuinfra diff --base-ref main --format markdown",
        )
    notes += [*base.notes, *(n for n in head.notes if n not in base.notes)]
    return diff_report(
        diff_sides(base.stacks, head.stacks, load_rules()), labels[0], labels[1], catalog, notes, problems
    )


def _from_ref(
    ref: str,
    stacks: list[str],
    org: Path | None,
    usage_file: Path | None,
    usage: Usage,
    notes: list[str],
    problems: list[InputProblem],
) -> tuple[Side, Side, tuple[str, str]]:
    """Base: REF's own code previews REF's stacks (a subprocess in a worktree, read back as a document). Head:
    the working tree's preview, compared as it is in memory (graphs and priced breakdowns, nothing re-read)."""
    from gpuinfra.commands.preview import preview_run
    from gpuinfra.review.baseref import base_preview

    catalog = load_catalog()
    with tempfile.TemporaryDirectory(prefix="gpuinfra-diff-") as tmp:
        out = Path(tmp) / "base.json"
        label, more = base_preview(ref, stacks, out)
        notes += more
        base = side(load_document(out), "base", catalog, usage)
    head_run = preview_run(stacks or stack_names(project_dir() or Path.cwd()), org, (), usage_file)
    problems += head_run.report.problems
    return base, Side("head", GPUINFRA, head_run.snapshots), (label, "working tree")


__all__ = ["diff_command"]
