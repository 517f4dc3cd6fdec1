"""`gpuinfra cost` and `gpuinfra diff` as functions: arguments in, report model out. The CLI only renders."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .catalog import load_catalog
from .cost import Usage, load_usage_file
from .diff import diff_sides
from .errors import InputError
from .replace_rules import load_rules
from .report.costs import cost_out, cost_total
from .report.diff_build import diff_report
from .report.model import CostReport, DiffReport, InputProblem, StackCostOut
from .review import EXPORT, GPUINFRA, Document, Side, load_document, pulumi_sides, side

JSON_SUFFIXES = (".json", ".jsonl")


def is_document(arg: str) -> bool:
    return arg.endswith(JSON_SUFFIXES) or arg == "-"


def cost_command(
    inputs: Iterable[str], org: Path | None, usage_file: Path | None, suppress: Iterable[str] = ()
) -> CostReport:
    """Price stacks (previewed in-process) and documents (priced from their graphs)."""
    from .pipeline import preview_stacks

    inputs = list(inputs)
    usage = load_usage_file(usage_file) if usage_file else Usage()
    catalog = load_catalog()
    report = CostReport()
    stacks = [a for a in inputs if not is_document(a)]
    if stacks:
        preview = preview_stacks(stacks, org, suppress, usage_file)
        report.problems += preview.problems
        for s in preview.stacks:
            notes = [f"{f.rule}: {f.message}" for f in s.findings if f.level == "error"]
            report.stacks.append(StackCostOut(stack=s.stack, source="stack file", cost=s.cost, notes=notes))
    for arg in inputs:
        if not is_document(arg):
            continue
        try:
            doc = load_document(Path(arg))
        except InputError as exc:
            report.problems.append(InputProblem(stack=arg, messages=[p.render() for p in exc.problems]))
            continue
        one = (
            pulumi_sides(doc, catalog, usage)[1]
            if doc.kind not in (GPUINFRA, EXPORT)
            else side(doc, "head", catalog, usage)
        )
        for name, snap in sorted(one.stacks.items()):
            report.stacks.append(
                StackCostOut(
                    stack=name, source=doc.kind, notes=list(one.notes), cost=cost_out(snap.cost) if snap.cost else None
                )
            )
    report.total = cost_total(s.cost for s in report.stacks if s.cost is not None)
    return report


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
    from .baseref import base_preview, stack_names
    from .pipeline import preview_stacks

    catalog = load_catalog()
    with tempfile.TemporaryDirectory(prefix="gpuinfra-diff-") as tmp:
        out = Path(tmp) / "base.json"
        label, more = base_preview(ref, stacks, out)
        notes += more
        base = side(load_document(out), "base", catalog, usage)
    head_report = preview_stacks(stacks or stack_names(Path.cwd()), org, (), usage_file)
    head_doc = Document(Path("head"), GPUINFRA, json.loads(head_report.model_dump_json()))
    head = side(head_doc, "head", catalog, usage)
    problems += head_report.problems
    return base, head, (label, "working tree")


__all__ = ["cost_command", "diff_command", "is_document"]
