"""How long a training run takes and what it costs, at the spec's node count and at the counts around it.

wall-clock = compute / goodput, where compute = 6 N D / (GPUs x dense peak x MFU x scaling efficiency) and
goodput = 1 - C/T - T/2M - R/M: the first-order checkpoint loss of plan/checkpoint.py (writing C every T,
redoing T/2 on average per interruption) plus the restart time R lost per interruption (Daly 2006, "A higher
order estimate of the optimum checkpoint interval for restart dumps", counts R the same way), with M the
cluster's mean time between interruptions at that node count. R comes from its parts at that node count
(plan/restart.py: detection, replacement, process start, checkpoint read, warm-up) unless the spec measured it.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from gpuinfra.plan.checkpoint import mean_time_between_interruptions
from gpuinfra.plan.flops import cluster_flops_per_second, scaling_efficiency
from gpuinfra.plan.memory import Plain
from gpuinfra.plan.restart import RestartParts, RestartTime, measured_restart, restart_time
from gpuinfra.plan.throughput import StepInputs

HOURS_PER_DAY = 24.0


class RunInputs(Plain):
    """Everything a run estimate is computed from, each with where it came from."""

    tokens: float
    active_parameters: float
    flops: float
    precision: str
    peak_tflops: float
    peak_source: str
    mfu: float
    mfu_source: str
    scaling_per_doubling: float
    scaling_source: str
    gpus_per_node: int
    nodes_per_domain: int = 1
    """Nodes of one NVLink domain (18 for GB200 NVL72 trays): scaling loses nothing inside it."""
    write_seconds: float | None
    """C: blocking time of one checkpoint write; None without checkpointing."""
    interval_minutes: float | None
    restart_minutes: float | None = None
    """R measured by the user (run.restart_minutes); None derives it from `restart_parts` at each node count."""
    restart_parts: RestartParts | None = None
    node_mtbf_hours: float
    spot_interruption_rate_monthly: float
    capacity: str
    on_demand_base: int
    price_sources: list[str] = []
    step: StepInputs | None = None
    """The step model (plan/throughput.py) from the spec's architecture and layout: when set, each node count's
    rate comes from it (the global batch fixed) instead of `mfu` and `scaling_per_doubling`."""


class RunPoint(Plain):
    """The run on one node count."""

    nodes: int
    gpus: int
    scaling_efficiency: float
    compute_days: float
    """Days of pure compute, before checkpoints and restarts."""
    goodput: float | None
    """Share of wall-clock time that advances training; None without checkpointing (an interruption loses the
    run), or when interruptions come faster than the interval lets work survive."""
    days: float | None
    gpu_hours: float | None
    hourly_usd: Decimal | None
    cost_usd: Decimal | None


RESTART_SENSITIVITY_MINUTES = (5.0, 15.0, 30.0, 60.0)
"""Restart times the plan shows the spec's goodput and days at besides the derived one: at thousands of GPUs the
restart time decides the goodput, so the plan shows how far it moves."""


class RestartPoint(Plain):
    """The run at the spec's node count with another restart time per interruption."""

    restart_minutes: float
    goodput: float | None
    days: float | None


class RunPlan(Plain):
    inputs: RunInputs
    target_days: float | None
    at_spec: RunPoint
    half: RunPoint | None
    """Half the nodes (when that fits), to show what the other half buys."""
    doubled: RunPoint
    cheapest: RunPoint | None
    """The node count with the lowest cost per run (None when no price is known)."""
    meets_target: RunPoint | None
    """The fewest nodes that finish within target_days (None when none do, or no target)."""
    notes: list[str] = []
    restart_sensitivity: list[RestartPoint] = []
    """Goodput and days at the spec's node count for each of RESTART_SENSITIVITY_MINUTES."""
    restart: RestartTime | None = None
    """The restart per interruption at the spec's node count, part by part (None: no checkpointing to restart from)."""


def spot_nodes(inputs: RunInputs, nodes: int) -> int:
    return nodes - min(inputs.on_demand_base, nodes) if inputs.capacity == "spot" else 0


def restart_at(inputs: RunInputs, nodes: int) -> RestartTime | None:
    """R on `nodes`: the measured figure, else the derived one; None when neither is known."""
    if inputs.restart_minutes is not None:
        return measured_restart(inputs.restart_minutes, nodes)
    if inputs.restart_parts is None:
        return None
    return restart_time(inputs.restart_parts, nodes, inputs.gpus_per_node)


def goodput(inputs: RunInputs, nodes: int) -> float | None:
    restart = restart_at(inputs, nodes)
    if inputs.write_seconds is None or inputs.interval_minutes is None or restart is None:
        return None
    mtbi_h = mean_time_between_interruptions(
        nodes, spot_nodes(inputs, nodes), inputs.node_mtbf_hours, inputs.spot_interruption_rate_monthly
    )
    c_h = inputs.write_seconds / 3600.0
    t_h = inputs.interval_minutes / 60.0
    r_h = restart.total_seconds / 3600.0
    share = 1.0 - c_h / t_h - t_h / (2.0 * mtbi_h) - r_h / mtbi_h
    return share if share > 0 else None


def cluster_rate(inputs: RunInputs, nodes: int) -> float:
    """Model FLOPs per second of the cluster on `nodes`: the step model's when known, else GPUs x peak x MFU x
    the scaling kept per doubling."""
    if inputs.step is not None:
        gpus = nodes * inputs.gpus_per_node
        return gpus * inputs.step.tflops_per_gpu(gpus) * 1e12
    return cluster_flops_per_second(
        nodes,
        inputs.gpus_per_node,
        inputs.peak_tflops,
        inputs.mfu,
        inputs.scaling_per_doubling,
        inputs.nodes_per_domain,
    )


def efficiency_at(inputs: RunInputs, nodes: int) -> float:
    """Per-GPU throughput on `nodes` relative to one NVLink domain."""
    if inputs.step is None:
        return scaling_efficiency(nodes, inputs.scaling_per_doubling, inputs.nodes_per_domain)
    domain = inputs.nodes_per_domain * inputs.gpus_per_node
    return inputs.step.tflops_per_gpu(nodes * inputs.gpus_per_node) / inputs.step.tflops_per_gpu(domain)


def _hours(inputs: RunInputs, nodes: int) -> tuple[float, float | None, float | None]:
    """Compute hours, goodput and wall-clock hours of the run on `nodes` (wall None when goodput is unknown)."""
    rate = cluster_rate(inputs, nodes)
    compute_h = inputs.flops / rate / 3600.0
    share = goodput(inputs, nodes)
    return compute_h, share, compute_h / share if share else None


def _cost(hourly: Decimal | None, wall_h: float | None) -> Decimal | None:
    return (hourly * Decimal(repr(wall_h))).quantize(Decimal("1")) if hourly is not None and wall_h else None


def run_point(inputs: RunInputs, nodes: int, price: Callable[[int], Decimal | None]) -> RunPoint:
    compute_h, share, wall_h = _hours(inputs, nodes)
    hourly = price(nodes)
    gpus = nodes * inputs.gpus_per_node
    return RunPoint(
        nodes=nodes,
        gpus=gpus,
        scaling_efficiency=efficiency_at(inputs, nodes),
        compute_days=compute_h / HOURS_PER_DAY,
        goodput=share,
        days=wall_h / HOURS_PER_DAY if wall_h else None,
        gpu_hours=wall_h * gpus if wall_h else None,
        hourly_usd=hourly,
        cost_usd=_cost(hourly, wall_h),
    )


def plan_run(
    inputs: RunInputs,
    nodes: int,
    target_days: float | None,
    price: Callable[[int], Decimal | None],
    fits: Callable[[int], bool],
    max_nodes: int,
    floor_per_node: Decimal | None = None,
) -> RunPlan:
    """The run at `nodes`, half and double that, the cheapest node count and the fewest that meet the target.
    Node counts where the model does not fit (`fits`) are never proposed.

    `floor_per_node`, when given, is a rate no count's price per node falls below (the lowest rate `price`
    mixes); with it the sweep stops where no larger count can be cheaper or meet the target, with the same
    answer as sweeping to `max_nodes` (tests/plan/test_runtime.py compares the two)."""
    cheapest_n, meets_n = _sweep(inputs, target_days, price, fits, max_nodes, floor_per_node)
    meets = run_point(inputs, meets_n, price) if meets_n is not None else None
    half = nodes // 2
    return RunPlan(
        inputs=inputs,
        target_days=target_days,
        at_spec=run_point(inputs, nodes, price),
        half=run_point(inputs, half, price) if half >= 1 and nodes % 2 == 0 and fits(half) else None,
        doubled=run_point(inputs, nodes * 2, price),
        cheapest=run_point(inputs, cheapest_n, price) if cheapest_n is not None else None,
        meets_target=meets,
        notes=_notes(inputs, target_days, meets is not None, max_nodes),
        restart_sensitivity=_restart_sensitivity(inputs, nodes),
        restart=restart_at(inputs, nodes),
    )


def _sweep(
    inputs: RunInputs,
    target_days: float | None,
    price: Callable[[int], Decimal | None],
    fits: Callable[[int], bool],
    max_nodes: int,
    floor_per_node: Decimal | None,
) -> tuple[int | None, int | None]:
    """The cheapest node count that fits and the fewest that fit and meet the target, by sweeping up from one.

    Why stopping is safe: node-hours n x wall(n) = flops / (GPU rate x efficiency(n) x goodput(n)) never fall as
    n grows (efficiency falls each doubling, scaling_per_doubling <= 1; goodput falls as interruptions come more
    often, and R x nodes never falls: plan/restart.py), so every larger count costs at least floor x
    node-hours(n). Goodput at or below zero stays there for every larger count. Compute hours go as
    n^-(1 + log2 per_doubling), monotone in n, so no larger count up to max_nodes runs faster than
    min(compute(n), compute(max_nodes)) / goodput(n). The sweep asks `fits` (the costly memory model) only of a
    count that would become the cheapest or the first to meet the target: the same answer as filtering first."""
    cheapest_n, cheapest_cost, meets_n = None, None, None
    compute_at_max = _hours(inputs, max_nodes)[0]
    cheapest_open, meets_open = True, target_days is not None
    fitting: dict[int, bool] = {}

    def fit(n: int) -> bool:  # one memory-model answer per count, though both searches may ask
        if n not in fitting:
            fitting[n] = fits(n)
        return fitting[n]

    for n in range(1, max_nodes + 1):
        compute_h, share, wall_h = _hours(inputs, n)
        if share is None or wall_h is None:
            break  # no checkpointing, or goodput gone: the same for every larger count
        if cheapest_open:
            cost = _cost(price(n), wall_h)
            if cost is not None and (cheapest_cost is None or cost < cheapest_cost) and fit(n):
                cheapest_n, cheapest_cost = n, cost
            if (
                floor_per_node is not None
                and cheapest_cost is not None
                and floor_per_node * Decimal(repr(wall_h * n)) >= cheapest_cost + 1
            ):
                cheapest_open = False
        if meets_open:
            assert target_days is not None
            if wall_h / HOURS_PER_DAY <= target_days and fit(n):
                meets_n, meets_open = n, False
            elif min(compute_h, compute_at_max) / share / HOURS_PER_DAY > target_days:
                meets_open = False  # no count up to max_nodes can finish in time any more
        if not cheapest_open and not meets_open:
            break
    return cheapest_n, meets_n


def _notes(inputs: RunInputs, target_days: float | None, meets: bool, max_nodes: int) -> list[str]:
    notes = []
    if inputs.write_seconds is None:
        notes.append("no checkpointing: an interruption loses the run, so no wall-clock time is planned")
    if target_days is not None and not meets:
        notes.append(f"no node count up to {max_nodes} finishes within {target_days:g} days")
    return notes


def _restart_sensitivity(inputs: RunInputs, nodes: int) -> list[RestartPoint]:
    """Goodput and days at `nodes` for each of RESTART_SENSITIVITY_MINUTES."""
    points = []
    for minutes in RESTART_SENSITIVITY_MINUTES:
        _, share, wall_h = _hours(inputs.model_copy(update={"restart_minutes": minutes}), nodes)
        points.append(
            RestartPoint(restart_minutes=minutes, goodput=share, days=wall_h / HOURS_PER_DAY if wall_h else None)
        )
    return points


__all__ = [
    "RESTART_SENSITIVITY_MINUTES",
    "RestartPoint",
    "RunInputs",
    "RunPlan",
    "RunPoint",
    "cluster_rate",
    "efficiency_at",
    "goodput",
    "plan_run",
    "restart_at",
    "run_point",
    "spot_nodes",
]
