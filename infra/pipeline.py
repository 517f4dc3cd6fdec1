"""The pipeline as functions: load -> plan -> validate (-> engine -> policies -> cost) per stack.

The CLI calls these; tests and benchmarks call them too, so every entry point runs the same stages.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from .catalog import Catalog, load_catalog
from .cost import Usage
from .errors import InputError
from .graph import Graph
from .inputs import Inputs, load_inputs
from .plan import InferencePlan, RegistryPlan, TrainingPlan, build_plan
from .report.build import stack_report
from .report.model import FindingOut, InputProblem, Report, StackReport
from .validators import RULES, Finding, Level, validate


@dataclass(frozen=True)
class Checked:
    """A stack after loading, planning and validation."""

    inputs: Inputs
    plan: TrainingPlan | InferencePlan | RegistryPlan
    findings: list[Finding]


def check_stack(
    stack: str | Path, org: Path | None = None, suppress: Iterable[str] = (), catalog: Catalog | None = None
) -> Checked:
    """Load a stack file and its organization, then plan and validate it."""
    catalog = catalog or load_catalog()
    return check(load_inputs(stack, org, catalog), catalog, suppress)


def check(inputs: Inputs, catalog: Catalog, suppress: Iterable[str] = ()) -> Checked:
    """Plan and validate already-loaded inputs."""
    plan = build_plan(inputs.spec, inputs.org.org, catalog)
    findings = validate(inputs.spec, plan, inputs.org.org, catalog, inputs.stack.config, suppress)
    return Checked(inputs, plan, findings)


def check_suppress_ids(suppress: Iterable[str]) -> None:
    unknown = sorted(set(suppress) - set(RULES))
    if unknown:
        from .errors import Problem
        from .spec import did_you_mean

        raise InputError(
            [Problem(f"--suppress names unknown rule {u!r}", hint=did_you_mean(u, RULES)) for u in unknown]
        )


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


def validate_stacks(stacks: Iterable[str], org: Path | None = None, suppress: Iterable[str] = ()) -> Report:
    report = Report(command="validate")
    report.stacks.extend(to_report(checked) for checked in checked_stacks(report, stacks, org, suppress))
    return report


def to_report(checked: Checked) -> StackReport:
    return stack_report(checked.inputs, checked.plan, checked.findings)


def preview_stacks(
    stacks: Iterable[str],
    org: Path | None = None,
    suppress: Iterable[str] = (),
    usage_file: Path | None = None,
    policy_config: Path | None = None,
) -> Report:
    """Validate, plan and (when no error stands) run each stack's program in the embedded engine, then price
    its graph (usage from `usage_file` and from the plan) and run the policy pack over it."""
    from .cost import load_usage_file
    from .crossguard import pack_config, police_stack
    from .engine import EngineError
    from .preview import preview_graph
    from .report.build import graph_report, policy_report
    from .report.costs import cost_total

    usage = load_usage_file(usage_file) if usage_file else Usage()
    policies = pack_config(policy_config)
    report = Report(command="preview")
    for checked in checked_stacks(report, stacks, org, suppress):
        stack = to_report(checked)
        if not any(f.level >= Level.ERROR for f in checked.findings):
            try:
                graph = preview_graph(checked.inputs)
            except EngineError as exc:
                stack.findings.append(engine_failure(str(exc)))
            else:
                stack = priced(graph_report(stack, graph), graph, usage)
                run = police_stack(checked.inputs, checked.plan, graph, policies, monthly_cost(stack))
                stack = policy_report(stack, run, graph)
        report.stacks.append(stack)
    report.cost = cost_total(s.cost for s in report.stacks if s.cost is not None)
    return report


def priced(stack: StackReport, graph: Graph, usage: Usage) -> StackReport:
    """The stack report with its graph priced: usage from the usage file, else assumed from the plan."""
    from .cost import assumed_usage, price_graph
    from .report.costs import with_cost

    usage = usage.with_assumed(assumed_usage(stack.plan, graph))
    return with_cost(stack, price_graph(graph, load_catalog(), usage))


def monthly_cost(stack: StackReport) -> Decimal | None:
    """The expected monthly cost preview priced, for the budget policy; None when nothing had a price."""
    cost = stack.cost
    if cost is None or not any(r.monthly_usd is not None for r in cost.resources):
        return None
    return cost.monthly_usd


def engine_failure(message: str) -> FindingOut:
    return FindingOut(
        rule="pulumi-program",
        level="error",
        path="",
        message=message,
        hint="the program failed under the embedded engine; run `pulumi preview` for details",
    )


__all__ = [
    "Checked",
    "check",
    "check_stack",
    "check_suppress_ids",
    "checked_stacks",
    "preview_stacks",
    "priced",
    "to_report",
    "validate_stacks",
]
