"""`gpuinfra validate`: load, plan and validate stacks; the report carries findings and the plan."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from gpuinfra.catalog import load_catalog
from gpuinfra.errors import InputError
from gpuinfra.report.build.stack import stack_report
from gpuinfra.report.model import InputProblem, Report, StackReport
from gpuinfra.validators.checked import Checked, check_suppress_ids
from gpuinfra.workspace.check import check_stack


def checked_stacks(
    report: Report, stacks: Iterable[str], org: Path | None, suppress: Iterable[str]
) -> Iterator[Checked]:
    """Each stack loaded, planned and validated; one that cannot be read becomes a problem of `report`
    (exit 2) and the others still run."""
    suppress = list(suppress)
    check_suppress_ids(suppress)
    for arg in stacks:
        try:
            yield check_stack(arg, org, suppress)
        except InputError as exc:
            report.problems.append(InputProblem(stack=str(arg), messages=[p.render() for p in exc.problems]))


def to_report(checked: Checked) -> StackReport:
    return stack_report(checked.inputs, checked.plan, checked.findings, load_catalog())


def validate_stacks(stacks: Iterable[str], org: Path | None = None, suppress: Iterable[str] = ()) -> Report:
    report = Report(command="validate")
    report.stacks.extend(to_report(checked) for checked in checked_stacks(report, stacks, org, suppress))
    return report


__all__ = ["checked_stacks", "to_report", "validate_stacks"]
