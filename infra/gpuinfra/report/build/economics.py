"""Report sections for the plan's money questions: the parallel layout's per-GPU memory, the run's days,
GPU-hours and cost, owning versus renting, and a serving fleet's tokens/s and cost per million tokens. Each
figure's row says which inputs it came from."""

from __future__ import annotations

from gpuinfra.catalog.engines import Engine
from gpuinfra.plan import TrainingPlan
from gpuinfra.plan.layout import LayoutMemory
from gpuinfra.plan.ownership import OwnershipPlan
from gpuinfra.plan.restart import RestartTime
from gpuinfra.plan.runtime import RunPlan, RunPoint
from gpuinfra.plan.tokens import ServingEconomics
from gpuinfra.report.format import UNKNOWN, check, gigabytes, money, number, percent
from gpuinfra.report.model import Section


def economics_sections(plan: TrainingPlan) -> list[Section]:
    out = []
    if plan.layout is not None:
        out.append(layout_section(plan.layout))
    if plan.run is not None:
        out.append(run_section(plan.run))
    elif plan.run_note:
        out.append(Section(title="Training run", notes=[plan.run_note]))
    if plan.ownership is not None:
        out.append(ownership_section(plan.ownership))
    elif plan.ownership_note:
        out.append(Section(title="Owning versus renting", notes=[plan.ownership_note]))
    return out


def layout_section(mem: LayoutMemory) -> Section:
    notes = [
        f"DP={mem.data_parallel}; states per Rajbhandari et al. 2020 (ZeRO), activations per Korthikanti et al. "
        "2022 table 2 (first pipeline stage)"
    ]
    notes += mem.problems
    if not mem.fits:
        notes.append(
            f"proposed: {mem.proposal.describe()} ({gigabytes(mem.proposal_bytes or 0)} per GPU)"
            if mem.proposal
            else "no layout of this cluster fits: add nodes or use a larger-memory type"
        )
    return Section(
        title=f"Parallel layout: {mem.layout.describe()}",
        rows=[
            ["weights", gigabytes(mem.weights_bytes)],
            ["gradients", gigabytes(mem.gradients_bytes)],
            ["optimizer states", gigabytes(mem.optimizer_bytes)],
            ["activations", gigabytes(mem.activations_bytes)],
            ["unshard buffers", gigabytes(mem.buffers_bytes)],
            ["reserve", gigabytes(mem.reserve_bytes)],
            ["per GPU", f"{gigabytes(mem.total_bytes)} of {gigabytes(mem.gpu_bytes)}"],
            ["fits", check(mem.fits)],
        ],
        notes=notes,
    )


def _point_row(label: str, p: RunPoint) -> list[str]:
    return [
        label,
        str(p.nodes),
        str(p.gpus),
        percent(p.scaling_efficiency),
        number(p.days, 1) if p.days is not None else UNKNOWN,
        number(p.gpu_hours, 0) if p.gpu_hours is not None else UNKNOWN,
        money(p.hourly_usd),
        money(p.cost_usd, 0),
    ]


def run_section(run: RunPlan) -> Section:
    i = run.inputs
    rows = [_point_row("spec", run.at_spec)]
    if run.half is not None:
        rows.append(_point_row("half", run.half))
    rows.append(_point_row("doubled", run.doubled))
    if run.cheapest is not None:
        rows.append(_point_row("cheapest", run.cheapest))
    if run.meets_target is not None:
        rows.append(_point_row(f"meets {number(run.target_days or 0)} days", run.meets_target))
    speed = run.at_spec.days / run.doubled.days if run.at_spec.days and run.doubled.days else None
    notes = [
        f"compute 6 x {i.active_parameters / 1e9:g}B active parameters x {i.tokens / 1e9:,.0f}B tokens = "
        f"{i.flops:.3g} FLOPs (Kaplan et al. 2020)",
        f"dense {i.precision} peak {number(i.peak_tflops, 0)} TFLOPS per GPU ({i.peak_source}); MFU "
        f"{percent(i.mfu, 0)} ({i.mfu_source}); scaling {percent(i.scaling_per_doubling, 1)} kept per doubling "
        f"({i.scaling_source})",
        "goodput = 1 - C/T - T/2M - R/M: "
        + (
            f"C {number(i.write_seconds, 0)} s, T {number(i.interval_minutes or 0, 0)} min, "
            f"R {number(run.restart.total_seconds / 60, 1)} min; at spec {percent(run.at_spec.goodput)}"
            if i.write_seconds is not None and run.at_spec.goodput is not None and run.restart is not None
            else "unknown"
        ),
        f"priced at capacity {i.capacity} ({', '.join(i.price_sources) or 'no price source'})",
    ]
    if speed is not None:
        notes.append(f"doubling the nodes is {speed:.2f}x as fast, not 2x")
    if run.restart is not None:
        notes.append(restart_note(run.restart))
    moved = [p for p in run.restart_sensitivity if p.goodput is not None and p.days is not None]
    if moved:
        notes.append(
            "goodput by restart time R at the spec's nodes: "
            + ", ".join(
                f"{number(p.restart_minutes, 0)} min {percent(p.goodput or 0)} ({p.days or 0:.1f} days)" for p in moved
            )
        )
    notes += run.notes
    return Section(
        title="Training run",
        columns=["case", "nodes", "GPUs", "scaling", "days", "GPU-hours", "$/h", "cost per run"],
        rows=rows,
        notes=notes,
    )


def restart_note(r: RestartTime) -> str:
    """R part by part at the spec's nodes (plan/restart.py), or the measured figure the spec gives."""
    if r.measured:
        return f"restart R {number(r.total_seconds / 60, 1)} min per interruption (run.restart_minutes, measured)"
    return (
        f"restart R {number(r.total_seconds / 60, 1)} min per interruption at {r.nodes} nodes = detection "
        f"{number(r.detection_seconds, 0)} s + replacement {number(r.replacement_seconds, 0)} s + process start "
        f"{number(r.process_start_seconds, 1)} s + checkpoint read {number(r.checkpoint_read_seconds, 0)} s (at "
        f"{number(r.read_gb_s, 1)} GB/s) + warm-up {number(r.warmup_seconds, 0)} s (plan/restart.py; set "
        "run.restart_minutes to a measured figure)"
    )


def ownership_section(own: OwnershipPlan) -> Section:
    rows = [
        ["capital", f"{money(own.capex_usd, 0)} over {number(own.life_years)} years"],
        ["amortization", money(own.amortization_monthly_usd, 0)],
        [
            "power",
            f"{money(own.power_monthly_usd, 0)} ({number(own.facility_kw)} kW facility, IT {number(own.it_kw)} kW)",
        ],
        ["colocation", money(own.colocation_monthly_usd, 0)],
        ["support", money(own.support_monthly_usd, 0)],
        ["cost of ownership a month", money(own.total_monthly_usd, 0)],
    ]
    for r in own.rentals:
        rows.append(
            [
                f"AWS {r.purchase} a month",
                f"{money(r.monthly_usd, 0)}; break-even month "
                + (str(r.break_even_month) if r.break_even_month is not None else UNKNOWN),
            ]
        )
    return Section(
        title=f"Owning versus renting ({own.nodes} nodes; AWS as {own.aws_instance_type or '-'} in {own.aws_region})",
        rows=rows,
        notes=[
            "break-even: first month by whose end capital + running costs <= rent (running = power + colocation + "
            "support)",
            f"sources: organization file (ownership), {', '.join(own.sources) or '-'}",
        ],
    )


def _rate(value: float | None) -> str:
    return UNKNOWN if value is None else number(value, 0)


def serving_sections(econ: ServingEconomics, engine: Engine) -> list[Section]:
    """Per region: the planned token rate, the roofline, concurrency and cost per million output tokens; then
    what each weight precision changes on one region's instance."""
    out = [
        Section(
            title="Serving economics (per replica, on-demand)",
            columns=["region", "instance", "tokens/s", "ceiling tokens/s", "concurrency", "$/h", "$ per 1M tokens"],
            rows=[
                [
                    r.region,
                    r.instance_type,
                    _rate(r.tokens_per_s),
                    _rate(r.bound_tokens_per_s),
                    UNKNOWN if r.concurrency is None else str(r.concurrency),
                    money(r.usd_per_hour, 4),
                    money(r.usd_per_million_tokens, 3),
                ]
                for r in econ.regions
            ],
            notes=[
                f"tokens/s = throughput_rps_per_replica (the region's own where given) x {econ.output_tokens} output "
                "tokens (the measured capacity the region is sized at); ceiling = decode at 60% of the memory "
                "bandwidth time-shared with prefill at the precision's matmul efficiency, fitted to published runs "
                "(plan/roofline.py, docs/planning.md); concurrency at the mean context; $ per 1M output "
                "tokens = $/h / (tokens/s x 3600) x 1e6 at the region's on-demand price"
            ],
        )
    ]
    if econ.quantization:
        out.append(
            Section(
                title=f"Quantization on {econ.quantization_instance} in {econ.quantization_region}",
                columns=[
                    "weights",
                    "size",
                    "needed",
                    "fits",
                    "concurrency",
                    "ceiling tokens/s",
                    "tokens/s",
                    "$ per 1M",
                ],
                rows=[
                    [
                        p.precision,
                        gigabytes(p.weights_bytes),
                        gigabytes(p.needed_bytes),
                        check(p.fits),
                        UNKNOWN if p.concurrency is None else str(p.concurrency),
                        _rate(p.bound_tokens_per_s),
                        _rate(p.tokens_per_s),
                        money(p.usd_per_million_tokens, 3),
                    ]
                    for p in econ.quantization
                ],
                notes=[
                    f"needed = weights + one context-length sequence's KV cache ({engine.admission}); "
                    "fits also needs the weights within 75% of host "
                    "RAM (loading); tokens/s = the planned rate x this precision's "
                    "ceiling / the spec's ceiling (fewer bytes a decode step, fp8 matmuls at the fp8 peak): an "
                    "estimate a benchmark at that precision replaces"
                ],
            )
        )
    return out


__all__ = ["economics_sections", "layout_section", "ownership_section", "run_section", "serving_sections"]
