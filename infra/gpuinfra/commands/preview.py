"""`gpuinfra preview`: validate and plan each stack, run its program in the embedded engine, judge every
resource by the providers' own definitions (preflight), then price the graph and run the policy pack over it.
The report is what people and `diff` read; the snapshots (graph, priced breakdown, findings) are what an
in-process review compares, with nothing re-read or re-priced."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from gpuinfra.catalog import load_catalog
from gpuinfra.commands import progress, stack_cache
from gpuinfra.commands.groups import account_groups
from gpuinfra.commands.heap import between_stacks, one_shot
from gpuinfra.commands.options import NO_OPTIONS, PreviewOptions, policies, with_trusted_revision
from gpuinfra.commands.options import usage as usage_of
from gpuinfra.commands.validate import to_report
from gpuinfra.cost import Breakdown, Usage, assumed_usage, price_graph
from gpuinfra.cost.model import USAGE_BASED, MaxCost
from gpuinfra.findings import Finding, Level, ordered
from gpuinfra.graph import Graph
from gpuinfra.plan.figures import plan_figures
from gpuinfra.policy.config import PolicyConfig
from gpuinfra.preflight import preflight
from gpuinfra.preflight.access.judge import flow_findings
from gpuinfra.report.build.cost import cost_findings, cost_total, finding_out, with_cost
from gpuinfra.report.build.stack import graph_report, policy_report, preflight_report
from gpuinfra.report.model import InputProblem, Report, StackReport
from gpuinfra.review.diff import Snapshot
from gpuinfra.review.items import review_items
from gpuinfra.validators.checked import Checked, check_suppress_ids
from gpuinfra.workspace import workspace_of

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


@dataclass(frozen=True)
class PreviewRun:
    report: Report
    snapshots: dict[str, Snapshot] = field(default_factory=dict)
    """Per stack: the graph, its priced breakdown and its findings, as a review's head side."""


def preview_run(
    stacks: Iterable[str],
    options: PreviewOptions = NO_OPTIONS,
    jobs: int = 1,
    cache_dir: Path | None = None,
    snapshots: bool = True,
) -> PreviewRun:
    """Validate, plan and (when no error stands) run each stack's program in the embedded engine, then price
    its graph (usage from `usage_file` and from the plan) and run the policy pack over it. With `jobs` > 1 the
    stacks are previewed in that many worker processes (each stack's preview depends only on its files); with
    `cache_dir`, a stack whose inputs have a sound entry there is read from it (gpuinfra.commands.stack_cache) and
    the others are stored. The report is assembled in the order given, exactly as a serial, uncached run
    assembles it. `snapshots=False`: the report alone (a stack read from the cache is not made a review's
    snapshot: its graph rebuilt and priced), for a caller that reads the report as a document."""
    with preview_started(stacks, options, jobs, cache_dir, snapshots) as finish:
        return finish()


@contextmanager
def preview_started(
    stacks: Iterable[str],
    options: PreviewOptions = NO_OPTIONS,
    jobs: int = 1,
    cache_dir: Path | None = None,
    snapshots: bool = True,
    later: Collection[str] = (),
) -> Iterator[Callable[[], PreviewRun]]:
    """`preview_run` begun, so the caller works while worker processes preview: with `jobs` > 1, the stacks
    the cache has no entry for start in workers at once (but not those whose key is in `later`: entries the
    caller is about to store, as a review's base stores the head's unchanged stacks). The callable reads the
    cache, previews what is still missing and returns what `preview_run` returns, byte for byte."""
    stacks = list(stacks)
    check_suppress_ids(options.suppress)
    usage = usage_of(options)
    if options.policy_config is not None:
        policies(options)  # a bad config file is refused whether or not any stack is previewed
    options = with_trusted_revision(options)
    keys = _keys(stacks, options) if cache_dir is not None else {}
    early = [i for i in range(len(stacks)) if not _may_find(cache_dir, keys.get(i), later)]
    with _started([stacks[i] for i in early], options, usage, jobs) as started:

        def finish() -> PreviewRun:
            kept = _kept(keys, set(early), cache_dir, usage, snapshots) if cache_dir is not None else {}
            progress.done(len(kept))
            made = dict(zip(early, started(), strict=True))
            rest = [i for i in range(len(stacks)) if i not in kept and i not in made]
            made |= zip(rest, _outcomes([stacks[i] for i in rest], options, usage, jobs), strict=True)
            if cache_dir is not None:
                _keep(cache_dir, made, keys)
            return _assembled(len(stacks), kept, made, snapshots)

        yield finish


def _may_find(cache_dir: Path | None, key: str | None, later: Collection[str]) -> bool:
    """Whether a stack's preview may be read rather than made: its entry is there, or about to be."""
    return cache_dir is not None and key is not None and (key in later or stack_cache.present(cache_dir, key))


def _assembled(count: int, kept: dict[int, Outcome], made: dict[int, Outcome], snapshots: bool) -> PreviewRun:
    """The report in the order given (an unreadable stack a problem of it), and each stack's snapshot."""
    report = Report(command="preview")
    made_snapshots: dict[str, Snapshot] = {}
    for i in range(count):
        outcome = kept[i] if i in kept else made[i]
        if isinstance(outcome, InputProblem):
            report.problems.append(outcome)
            continue
        name, stack, snapshot = outcome
        report.stacks.append(stack)
        if snapshots:
            made_snapshots[name] = snapshot
    report.cost = cost_total(s.cost for s in report.stacks if s.cost is not None)
    return PreviewRun(report, made_snapshots)


Outcome = tuple[str, StackReport, Snapshot] | InputProblem


def cache_keys(stacks: Iterable[str], options: PreviewOptions = NO_OPTIONS) -> set[str]:
    """The cache keys `preview_run` gives these stacks with these options (in the working directory)."""
    return set(_keys(list(stacks), options).values())


def _keys(stacks: list[str], options: PreviewOptions) -> dict[int, str]:
    """Every stack's key (by position), computed before anything is previewed: an entry is stored under the
    content its preview read. A stack whose files cannot be found has none (it is previewed, never kept)."""
    keyer = stack_cache.Keys(options.org, options.suppress, options.usage_file, options.policy_config)
    keys = {i: keyer.of(arg) for i, arg in enumerate(stacks)}
    return {i: key for i, key in keys.items() if key is not None}


def _kept(
    keys: dict[int, str], skip: set[int], cache_dir: Path, usage: Usage, snapshots: bool = True
) -> dict[int, Outcome]:
    """The stacks (by position, but not those in `skip`) whose previews `cache_dir` holds for exactly their
    inputs."""
    found: dict[int, Outcome] = {}
    for i, key in keys.items():
        entry = stack_cache.read(cache_dir, key) if i not in skip else None
        if entry is not None:
            snapshot = entry.snapshot(usage) if snapshots else Snapshot(entry.report.stack, None)
            found[i] = (entry.report.stack, entry.report, snapshot)
    return found


def _keep(cache_dir: Path, made: dict[int, Outcome], keys: dict[int, str]) -> None:
    """Store each stack previewed in this run (a stack that could not be read is not kept: it costs nothing)."""
    for i, outcome in made.items():
        if not isinstance(outcome, InputProblem) and i in keys:
            stack_cache.write(cache_dir, keys[i], stack_cache.entry_of(outcome[1], outcome[2]))


def _outcomes(stacks: list[str], options: PreviewOptions, usage: Usage, jobs: int) -> list[Outcome]:
    """Each stack previewed, an account's stacks together (commands/groups.py), serially or in `jobs` worker
    processes; outcomes in the order of `stacks`."""
    with _started(stacks, options, usage, jobs) as started:
        return started()


@contextmanager
def _started(
    stacks: list[str], options: PreviewOptions, usage: Usage, jobs: int
) -> Iterator[Callable[[], list[Outcome]]]:
    """`_outcomes` begun: with `jobs` > 1 and more than one group, the groups already previewing in worker
    processes when this yields; the callable waits for them (serially, it previews them itself)."""
    groups = account_groups(stacks, jobs)
    named = [[stacks[i] for i in group] for group in groups]

    def in_order(made: list[list[Outcome]]) -> list[Outcome]:
        at = {i: o for group, outcomes in zip(groups, made, strict=True) for i, o in zip(group, outcomes, strict=True)}
        return [at[i] for i in range(len(stacks))]

    if jobs > 1 and len(groups) > 1:
        with _in_workers(named, options, jobs) as waited:
            yield lambda: in_order(waited())
        return

    def serially() -> list[Outcome]:
        made: list[list[Outcome]] = []
        for group in named:
            if made:
                between_stacks()
            made.append(_group(group, options, usage))
        return in_order(made)

    yield serially


@contextmanager
def _in_workers(
    groups: list[list[str]], options: PreviewOptions, jobs: int
) -> Iterator[Callable[[], list[list[Outcome]]]]:
    """Each group submitted to a worker process; the callable waits for their outcomes, in the order of
    `groups`. Workers are spawned, never forked: a fork of a process whose Pulumi runtime has run (gRPC and
    asyncio threads) can deadlock in the child (seen here: a forked worker hung after a serial preview in the
    same process). They collect garbage as this process does (gpuinfra.commands.heap). When the caller fails
    before waiting (an error in the base beside them, SIGTERM), the workers are stopped, not waited for: a
    worker left running when this process ends (`gpuinfra.cli.run` ends with `os._exit`) would wait for work
    forever (`_stopped`)."""
    import gc
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    workers = min(jobs, len(groups))
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_worker, initargs=(gc.isenabled(),))
    try:
        futures = [pool.submit(_group_in_worker, g, options) for g in groups]
        for future, group in zip(futures, groups, strict=True):  # announced here: no one listens in a worker
            future.add_done_callback(_announcer(len(group)))
        yield lambda: [future.result() for future in futures]
    except BaseException:
        _stopped(pool)
        raise
    pool.shutdown()


def _announcer(stacks: int) -> Callable[[object], None]:
    """A future's done-callback announcing its group's stacks (gpuinfra.commands.progress)."""
    return lambda _: progress.done(stacks)


def _stopped(pool: ProcessPoolExecutor) -> None:
    """The pool's workers terminated, then the pool shut down (joined: quick, nothing runs). The executor has
    no public way to do this before Python 3.14's `terminate_workers`; its `_processes` map is what that
    method terminates."""
    processes = getattr(pool, "_processes", None) or {}
    for process in list(processes.values()):
        process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


def _worker(collecting: bool) -> None:
    """A worker's start: the cyclic collector as in the process that started it, and a quick end."""
    import atexit

    if not collecting:
        one_shot()
    atexit.register(_quick_exit)


def _quick_exit() -> None:
    """A worker's end once the pool lets it go: its results are sent and whatever it stored is written, so it
    leaves as the installed script does (gpuinfra.cli.run), streams flushed (multiprocessing flushed them
    already; again, in case anything wrote since) and no interpreter teardown. The
    teardown of a worker that ran the engine (its modules, the frozen heap) took about a second, and the pool's
    shutdown waits for it. Registered last, so it runs first of the exit functions."""
    import os
    import sys
    from contextlib import suppress

    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):
            stream.flush()
    os._exit(0)


def _group_in_worker(group: list[str], options: PreviewOptions) -> list[Outcome]:
    """One group, in a worker: what one turn of the serial loop does."""
    between_stacks()  # what the last group left in this worker
    return _group(group, options, usage_of(options))


def _group(group: list[str], options: PreviewOptions, usage: Usage) -> list[Outcome]:
    """An account's stacks: each built first (engine, preflight, cost), then each policed, so every budget
    finds its account's other stacks already built by this run (recorded in their workspace), not built again."""
    built: list[Built | InputProblem] = []
    for arg in group:
        if built:
            between_stacks()
        built.append(_built(arg, options, usage))
        progress.done()
    return [b if isinstance(b, InputProblem) else (b.name, *policed(b, policies(options))) for b in built]


def _built(arg: str, options: PreviewOptions, usage: Usage) -> Built | InputProblem:
    """One stack checked and built; one that cannot be read is a problem of the report (exit 2)."""
    from gpuinfra.errors import InputError
    from gpuinfra.workspace.check import check_stack

    try:
        checked = check_stack(arg, options.org, options.suppress)
    except InputError as exc:
        return InputProblem(stack=str(arg), messages=[p.render() for p in exc.problems])
    return built_stack(checked, usage)


@dataclass(frozen=True)
class Built:
    """A checked stack through the engine, preflight and cost: what its policies wait for."""

    checked: Checked
    report: StackReport
    graph: Graph | None
    breakdown: Breakdown | None
    findings: tuple[Finding, ...] = ()
    """The stages' findings so far, as the review lists them: the validators' (and the engine's failure), then
    preflight's; the pack's go between them once it has run."""

    @property
    def name(self) -> str:
        return self.checked.inputs.stack.name


def preview_checked(
    checked: Checked, usage: Usage, policies: Mapping[str, PolicyConfig]
) -> tuple[StackReport, Snapshot]:
    """One checked stack through the engine (unless an error finding stands), cost and the policy pack."""
    return policed(built_stack(checked, usage), policies)


def built_stack(checked: Checked, usage: Usage) -> Built:
    """The checked stack's graph (unless an error finding stands) judged by preflight (its flows with the
    registry's graphs the workspace built) and priced; its total recorded in its workspace, so the budgets of its
    account's other stacks read the run's own build."""
    from gpuinfra.pulumi.engine import EngineError
    from gpuinfra.pulumi.preview import preview_graph

    stack = to_report(checked)
    if checked.blocked:
        return Built(checked, stack, None, None, tuple(checked.findings))
    try:
        graph = preview_graph(checked.inputs, checked.plan)
    except EngineError as exc:
        failure = engine_failure(str(exc))
        stack.findings.append(finding_out(failure))
        return Built(checked, stack, None, None, (*checked.findings, failure))
    catalog = load_catalog()
    workspace = workspace_of(checked.inputs.stack.path, checked.inputs.org.path)
    workspace.record(checked.inputs, checked.plan, graph)
    judged = preflight(graph, catalog) + flows_judged(checked, graph)
    stack = preflight_report(graph_report(stack, graph), judged)
    breakdown = price_graph(graph, catalog, usage.with_assumed(assumed_usage(checked.plan, graph)))
    stack = with_cost(stack, breakdown)
    found = (*checked.findings, *cost_findings(stack.cost), *judged)
    return Built(checked, stack, graph, breakdown, found)


def policed(built: Built, policies: Mapping[str, PolicyConfig]) -> tuple[StackReport, Snapshot]:
    """The policy pack over a built stack (none when nothing was built), and its snapshot for a review."""
    from gpuinfra.policy.pack import police_stack

    stack, graph, checked = built.report, built.graph, built.checked
    found = list(built.findings)
    if graph is not None:
        held = workspace_of(checked.inputs.stack.path, checked.inputs.org.path).facts(checked.inputs)
        run = police_stack(checked.inputs, checked.plan, graph, policies, monthly_cost(stack), held)
        stack = policy_report(stack, run, graph)
        own = len(found) - len(stack.preflight or [])  # the report's order: the stack's own, the pack's, preflight's
        found[own:own] = ordered(run.violations)
    figures = plan_figures(checked.plan)
    return stack, Snapshot(stack.stack, graph, built.breakdown, review_items(stack.stack, found), figures=figures)


def flows_judged(checked: Checked, graph: Graph) -> list[Finding]:
    """The stack's declared data flows judged by its own graph's policies and its peers' (the registry's)."""
    from gpuinfra.pulumi.components.flows import declared_flows

    flows = declared_flows(checked.inputs, checked.plan)
    if not flows:
        return []
    inputs = checked.inputs
    workspace = workspace_of(inputs.stack.path, inputs.org.path)
    registries = workspace.registries(inputs.stack.name, inputs.spec, inputs.org.org.registry)
    return flow_findings(flows, graph, list(registries))


def preview_stacks(
    stacks: Iterable[str], options: PreviewOptions = NO_OPTIONS, jobs: int = 1, cache_dir: Path | None = None
) -> Report:
    return preview_run(stacks, options, jobs, cache_dir).report


_REPR = re.compile(r"<[\w.]+ object at 0x[0-9a-f]+>")


def monthly_cost(stack: StackReport) -> Decimal | None:
    """The maximum monthly cost preview priced (groups at maximum size), for the budget policy, with the lines it
    leaves out for want of a price (MaxCost.unknown, as cost.Breakdown.unknown_keys names them); None when nothing
    had a price."""
    cost = stack.cost
    if cost is None or not any(r.monthly_usd is not None for r in cost.resources):
        return None
    unknown = tuple(
        f"{r.type}: {line.name} ({r.name})"
        for r in cost.resources
        for line in r.lines
        if line.monthly_usd is None and USAGE_BASED not in line.flags
    )
    return MaxCost.of(cost.monthly_max_usd, unknown)


def engine_failure(message: str) -> Finding:
    """The engine's failure as one finding: one line, no Python reprs, cut to a readable length."""
    text = "; ".join(line.strip() for line in _REPR.sub("a pending value", message).splitlines() if line.strip())
    return Finding(
        "pulumi-program",
        Level.ERROR,
        (),
        text if len(text) <= 600 else text[:597] + "...",
        "the program failed under the embedded engine; run `pulumi preview` for details",
    )


__all__ = [
    "PreviewOptions",
    "PreviewRun",
    "engine_failure",
    "monthly_cost",
    "preview_checked",
    "preview_run",
    "preview_stacks",
]
