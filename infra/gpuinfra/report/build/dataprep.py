"""The data preparation plan for people: workers, hours and cost per stage, the serial floor, the cluster step's
node, scratch and requests, and the calibration the figures come from."""

from __future__ import annotations

from decimal import Decimal

from gpuinfra.plan.dataprep import CALIBRATION, DataprepPlan, StagePlan
from gpuinfra.report.format import UNKNOWN, check, number
from gpuinfra.report.model import Section


def _usd(value: Decimal | None) -> str:
    return f"${value:,.0f}" if value is not None else UNKNOWN


def _hourly(value: Decimal | None) -> str:
    return f"${value:,.2f}/h" if value is not None else UNKNOWN


def _run(plan: DataprepPlan) -> Section:
    capacity = "spot" if plan.spot else "on-demand"
    return Section(
        title="Run",
        rows=[
            ["engine", plan.engine],
            ["workers", f"{plan.nodes} x {plan.instance_type} ({plan.nodes * plan.vcpus_per_node} vCPUs, {capacity})"],
            *_gpu(plan),
            ["documents in", f"{plan.documents:,}"],
            ["tokens out", f"{plan.tokens:,}"],
            ["wall time", f"{number(plan.hours, 1)} h ({number(plan.hours / 24, 1)} days)"],
            ["serial floor (more nodes cannot lower it)", f"{number(plan.serial_hours, 1)} h"],
            ["compute", _usd(plan.compute_usd)],
            ["cost per run (compute, scratch, requests)", _usd(plan.cost_usd)],
            ["meets the deadline", check(plan.meets_deadline) if plan.meets_deadline is not None else "no deadline"],
            ["within the budget", check(plan.within_budget) if plan.within_budget is not None else "no budget"],
            ["spot reclaims", f"{plan.interruption_monthly:.0%} a month: {plan.retry_overhead:.3%} of work redone"],
        ],
    )


def _gpu(plan: DataprepPlan) -> list[list[str]]:
    """The GPU dedup stage's nodes, when the plan has one (NeMo Curator, on-demand)."""
    if not plan.gpu_nodes:
        return []
    rate = _hourly(plan.gpu_usd_per_node_hour)
    return [
        [
            "GPU dedup nodes",
            f"{plan.gpu_nodes} x {plan.gpu_instance_type} (on-demand, {rate}) for {number(plan.gpu_hours, 1)} h",
        ]
    ]


def _stage_row(s: StagePlan) -> list[str]:
    work = (
        f"{number(s.core_hours, 1)} GPU node-h, {s.tasks:,} GPU nodes"
        if s.node_hours
        else f"{number(s.core_hours, 0)} core-h on the {s.tasks:,} GPU nodes"
        if s.accelerated
        else f"{number(s.core_hours, 0)} core-h, {s.tasks:,} tasks{' (serial)' if s.serial else ''}"
    )
    figure = f"[{s.figure}, {CALIBRATION[s.figure].kind}]"
    return [s.stage, f"{number(s.hours, 1)} h: {number(s.input_tb, 2)} TB in, {work} {figure}"]


def _stages(plan: DataprepPlan) -> Section:
    figures = sorted({s.figure for s in plan.stages})
    return Section(
        title="Stages",
        rows=[_stage_row(s) for s in plan.stages],
        notes=[f"{k}: {CALIBRATION[k].source}" for k in figures]
        + ["'limit' figures are the FineWeb recipe's Slurm time limits, an upper bound (docs/dataprep.md)"],
    )


def _storage(plan: DataprepPlan) -> Section:
    c, s = plan.cluster, plan.scratch
    node = c.instance_type or f"none ({c.why})"
    return Section(
        title="Cluster step and scratch",
        rows=[
            ["MinHash cluster step", f"{number(c.memory_gb, 0)} GB on {node}, {_hourly(c.usd_per_hour)}"],
            ["signatures", f"{s.signature_bytes_per_document} B a document, {number(s.signatures_gb, 0)} GB"],
            ["intermediates held", f"{number(s.intermediate_gb, 0)} GB, {_usd(s.storage_usd)}"],
            ["S3 requests", f"{s.get_requests:,} GET, {s.put_requests:,} PUT: {_usd(s.requests_usd)}"],
        ],
    )


def dataprep_summary(plan: DataprepPlan) -> list[Section]:
    return [_run(plan), _stages(plan), _storage(plan)]


__all__ = ["dataprep_summary"]
