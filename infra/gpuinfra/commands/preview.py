"""`gpuinfra preview`: validate and plan each stack, run its program in the embedded engine, judge every
resource by the providers' own definitions (preflight), then price the graph and run the policy pack over it.
The report is what people and `diff` read; the snapshots (graph, priced breakdown, findings) are what an
in-process review compares, with nothing re-read or re-priced."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from gpuinfra.catalog import load_catalog
from gpuinfra.commands.validate import checked_stacks, to_report
from gpuinfra.cost import Breakdown, Usage, assumed_usage, load_usage_file, price_graph
from gpuinfra.graph import Graph
from gpuinfra.plan.figures import plan_figures
from gpuinfra.policy.config import PolicyConfig
from gpuinfra.preflight import PreflightFinding, preflight
from gpuinfra.preflight.access.judge import flow_findings
from gpuinfra.report.build.cost import cost_total, with_cost
from gpuinfra.report.build.stack import graph_report, policy_report, preflight_report
from gpuinfra.report.model import FindingOut, InputProblem, Report, StackReport
from gpuinfra.review.diff import Snapshot
from gpuinfra.review.documents import findings_of
from gpuinfra.validators.checked import Checked, check_suppress_ids


@dataclass(frozen=True)
class PreviewRun:
    report: Report
    snapshots: dict[str, Snapshot] = field(default_factory=dict)
    """Per stack: the graph, its priced breakdown and its findings, as a review's head side."""


def preview_run(
    stacks: Iterable[str],
    org: Path | None = None,
    suppress: Iterable[str] = (),
    usage_file: Path | None = None,
    policy_config: Path | None = None,
    jobs: int = 1,
) -> PreviewRun:
    """Validate, plan and (when no error stands) run each stack's program in the embedded engine, then price
    its graph (usage from `usage_file` and from the plan) and run the policy pack over it. With `jobs` > 1 the
    stacks are previewed in that many worker processes (each stack's preview depends only on its files), and
    the report is assembled in the order given, exactly as a serial run assembles it."""
    from gpuinfra.policy.pack import pack_config

    stacks, suppress = list(stacks), list(suppress)
    usage = load_usage_file(usage_file) if usage_file else Usage()
    policies = pack_config(policy_config)
    report = Report(command="preview")
    snapshots: dict[str, Snapshot] = {}
    outcomes: Iterable[Outcome]
    if jobs > 1 and len(stacks) > 1:
        check_suppress_ids(suppress)
        outcomes = _in_workers(stacks, org, suppress, usage_file, policy_config, jobs)
    else:
        outcomes = (
            (checked.inputs.stack.name, *preview_checked(checked, usage, policies))
            for checked in checked_stacks(report, stacks, org, suppress)
        )
    for outcome in outcomes:
        if isinstance(outcome, InputProblem):
            report.problems.append(outcome)
            continue
        name, stack, snapshots[name] = outcome
        report.stacks.append(stack)
    report.cost = cost_total(s.cost for s in report.stacks if s.cost is not None)
    return PreviewRun(report, snapshots)


Outcome = tuple[str, StackReport, Snapshot] | InputProblem


def _in_workers(
    stacks: list[str],
    org: Path | None,
    suppress: list[str],
    usage_file: Path | None,
    policy_config: Path | None,
    jobs: int,
) -> list[Outcome]:
    """Each stack previewed in a worker process; outcomes in the order of `stacks`. Workers are spawned, never
    forked: a fork of a process whose Pulumi runtime has run (gRPC and asyncio threads) can deadlock in the
    child (seen here: a forked worker hung after a serial preview in the same process)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(min(jobs, len(stacks)), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(_preview_one, arg, org, suppress, usage_file, policy_config) for arg in stacks]
        return [future.result() for future in futures]


def _preview_one(
    arg: str, org: Path | None, suppress: list[str], usage_file: Path | None, policy_config: Path | None
) -> Outcome:
    """One stack, in a worker: what one turn of the serial loop does."""
    from gpuinfra.errors import InputError
    from gpuinfra.policy.pack import pack_config
    from gpuinfra.validators.checked import check_stack

    usage = load_usage_file(usage_file) if usage_file else Usage()
    try:
        checked = check_stack(arg, org, suppress)
    except InputError as exc:
        return InputProblem(stack=str(arg), messages=[p.render() for p in exc.problems])
    return (checked.inputs.stack.name, *preview_checked(checked, usage, pack_config(policy_config)))


def preview_checked(
    checked: Checked, usage: Usage, policies: Mapping[str, PolicyConfig]
) -> tuple[StackReport, Snapshot]:
    """One checked stack through the engine (unless an error finding stands), cost and the policy pack."""
    from gpuinfra.policy.pack import police_stack
    from gpuinfra.pulumi.engine import EngineError
    from gpuinfra.pulumi.preview import preview_graph

    stack = to_report(checked)
    graph: Graph | None = None
    breakdown: Breakdown | None = None
    if not checked.blocked:
        try:
            graph = preview_graph(checked.inputs, checked.plan)
        except EngineError as exc:
            stack.findings.append(engine_failure(str(exc)))
        else:
            catalog = load_catalog()
            stack = preflight_report(
                graph_report(stack, graph), preflight(graph, catalog) + flows_judged(checked, graph)
            )
            breakdown = price_graph(graph, catalog, usage.with_assumed(assumed_usage(checked.plan, graph)))
            stack = with_cost(stack, breakdown)
            run = police_stack(checked.inputs, checked.plan, graph, policies, monthly_cost(stack))
            stack = policy_report(stack, run, graph)
    return stack, Snapshot(
        stack.stack, graph, breakdown, findings_of(stack.stack, _findings(stack)), figures=plan_figures(checked.plan)
    )


def flows_judged(checked: Checked, graph: Graph) -> list[PreflightFinding]:
    """The stack's declared data flows judged by its own graph's policies and its peers' (the registry's)."""
    from gpuinfra.pulumi.components.flows import declared_flows
    from gpuinfra.pulumi.peers import peer_graphs

    flows = declared_flows(checked.inputs, checked.plan)
    return flow_findings(flows, graph, peer_graphs(checked.inputs)) if flows else []


def preview_stacks(
    stacks: Iterable[str],
    org: Path | None = None,
    suppress: Iterable[str] = (),
    usage_file: Path | None = None,
    policy_config: Path | None = None,
    jobs: int = 1,
) -> Report:
    return preview_run(stacks, org, suppress, usage_file, policy_config, jobs).report


_REPR = re.compile(r"<[\w.]+ object at 0x[0-9a-f]+>")


def _findings(stack: StackReport) -> dict[str, object]:
    """The findings and policy violations of a stack report in the shape a document carries them."""
    return stack.model_dump(mode="json", include={"findings": True, "policy": {"violations"}, "preflight": True})


def monthly_cost(stack: StackReport) -> Decimal | None:
    """The maximum monthly cost preview priced (groups at maximum size), for the budget policy; None when nothing
    had a price."""
    cost = stack.cost
    if cost is None or not any(r.monthly_usd is not None for r in cost.resources):
        return None
    return cost.monthly_max_usd


def engine_failure(message: str) -> FindingOut:
    """The engine's failure as one finding: one line, no Python reprs, cut to a readable length."""
    text = "; ".join(line.strip() for line in _REPR.sub("a pending value", message).splitlines() if line.strip())
    return FindingOut(
        rule="pulumi-program",
        level="error",
        path="",
        message=text if len(text) <= 600 else text[:597] + "...",
        hint="the program failed under the embedded engine; run `pulumi preview` for details",
    )


__all__ = ["PreviewRun", "engine_failure", "monthly_cost", "preview_checked", "preview_run", "preview_stacks"]
