"""`gpuinfra cost`: price stacks (previewed in-process) and Pulumi or gpuinfra documents (priced from their
graphs) from the catalog."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from gpuinfra.catalog import load_catalog, staleness
from gpuinfra.cost import Usage, load_usage_file
from gpuinfra.errors import InputError
from gpuinfra.report.build.cost import cost_out, cost_total
from gpuinfra.report.model import CostReport, InputProblem, StackCostOut
from gpuinfra.review.documents import EXPORT, GPUINFRA, load_document, pulumi_sides, side

JSON_SUFFIXES = (".json", ".jsonl")


def is_document(arg: str) -> bool:
    return arg.endswith(JSON_SUFFIXES) or arg == "-"


def cost_command(
    inputs: Iterable[str], org: Path | None, usage_file: Path | None, suppress: Iterable[str] = ()
) -> CostReport:
    """Price stacks (previewed in-process) and documents (priced from their graphs)."""
    from gpuinfra.commands.preview import PreviewOptions, preview_stacks

    inputs = list(inputs)
    usage = load_usage_file(usage_file) if usage_file else Usage()
    catalog = load_catalog()
    report = CostReport()
    stacks = [a for a in inputs if not is_document(a)]
    if stacks:
        preview = preview_stacks(stacks, PreviewOptions.of(org, suppress, usage_file))
        report.problems += preview.problems
        for s in preview.stacks:
            notes = [f"{f.rule}: {f.message}" for f in s.findings if f.level == "error" or f.rule == staleness.RULE]
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
            cost = cost_out(snap.cost) if snap.cost else None
            stale = staleness.stale_message(cost.prices_as_of) if cost else None
            notes = [*one.notes, *([f"{staleness.RULE}: {stale}"] if stale else [])]
            report.stacks.append(StackCostOut(stack=name, source=doc.kind, notes=notes, cost=cost))
    report.total = cost_total(s.cost for s in report.stacks if s.cost is not None)
    return report


__all__ = ["cost_command", "is_document"]
