"""`gpuinfra advise` as text (a terminal's table), Markdown (tables and a Mermaid xychart of the lifetime cost)
and JSON. The sections are built once, as plain rows, and each format lays them out; every figure names its
source or the planner step that derived it, and unknown prints '-'."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal

from gpuinfra.cost.money import UNKNOWN, money
from gpuinfra.plan.advise.model import Advice, ManagedRung, ServingRung, TrainRung
from gpuinfra.report.format import markdown_text, number, percent

FORMATS = ("table", "markdown", "json")


@dataclass
class Section:
    title: str
    lines: list[str] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)


def _num(value: float | None, places: int = 1, unit: str = "") -> str:
    return UNKNOWN if value is None else number(value, places) + unit


def ladder_section(advice: Advice) -> Section:
    rows = []
    for rung in advice.rungs:
        mark = "STOP" if rung.number == advice.stopped_at else ("no" if rung.applies else "n/a")
        if rung.number == 3 and rung.applies and advice.stopped_at in (2, 4):
            mark = "then"  # the adapted or trained model is served by this fleet
        rows.append([f"{'>' if mark == 'STOP' else ' '} {rung.number}", rung.title, mark, rung.why])
    rows.append(["  5", "separate accounts", "rule", _accounts_line(advice)])
    return Section("The ladder (stop at the first honest answer)", header=["rung", "", "", "why"], rows=rows)


def _accounts_line(advice: Advice) -> str:
    acc = advice.accounts
    line = _training_serving(advice)
    return f"{line}; the corpus prepared in {acc.dataprep}" if acc.dataprep else line


def _training_serving(advice: Advice) -> str:
    acc = advice.accounts
    if acc.training and acc.serving:
        return f"training in {acc.training}, serving in {acc.serving}: never one account (the policy pack refuses it)"
    if acc.serving:
        return f"serving in {acc.serving}; training, if it ever comes, in an account of its own"
    if acc.training:
        return f"training in {acc.training}; serving, when it comes, in an account of its own"
    return "nothing to deploy: no account"


def managed_section(managed: ManagedRung) -> Section:
    rows = [
        [
            o.provider,
            o.model,
            money(o.input_usd_per_mtok, 3),
            money(o.output_usd_per_mtok, 3),
            money(o.blended_usd_per_mtok, 3),
            money(o.monthly_usd),
            "yes" if o.eligible else f"no: {o.why_not}",
        ]
        for o in managed.options
    ]
    sources = sorted(
        {
            (o.source, o.source_url, f"as of {o.as_of}" if o.as_of else "undated", str(o.read_on))
            for o in managed.options
        }
    )
    lines = [f"source {s}: {url} ({d}, read {r})" for s, url, d, r in sources]
    if not rows:
        lines.append("no hosted model of this size is priced in the catalog: the managed API's cost is unknown")
    header = ["provider", "model", "in $/1M", "out $/1M", "blended $/1M", "a month", "eligible"]
    return Section("Rung 1: managed APIs at this traffic", lines=lines, header=header, rows=rows)


def serving_section(s: ServingRung) -> Section:
    if s.instance_type is None or s.throughput_rps_per_replica is None:
        return Section("Rung 3: self-hosted serving", lines=[f"not planned: {s.note}"])
    hourly = ", ".join(f"{r} {money(h, 4)}/h" for r, h in s.hourly_usd.items())
    lines = [
        f"replica: {s.instance_type} ({s.gpus_per_replica} x {s.accelerator}), {s.max_sequences} sequences batched; "
        f"decoding an answer takes {_num(s.generation_seconds)} s at that batch",
        f"throughput: {_num(s.throughput_rps_per_replica, 2)} requests/s a replica ({s.throughput_source})",
        f"replicas over {', '.join(s.regions)}: floor {s.replicas_floor}, mean load {s.replicas_mean}, "
        f"peak {s.replicas_peak} (a region's mean: max(floor, ceil(mean rps / rps a replica)))",
        f"on-demand: {hourly} ({', '.join(s.price_sources)})",
        f"cost per 1M output tokens at the planned rate: {money(s.usd_per_mtok_output, 3)}; "
        f"per 1M tokens of this traffic (in + out): {money(s.usd_per_mtok_blended, 3)}",
        f"cold start: {_num(s.cold_start_seconds, 0)} s fresh, {_num(s.warm_resume_seconds, 0)} s from the warm "
        "pool (plan/coldstart.py)",
        f"a month: {money(s.monthly_usd)}",
        *([s.note] if s.note else []),
    ]
    if s.break_even_tokens_per_day is not None:
        even = number(s.break_even_tokens_per_day / 1e6, 0)
        lines.append(
            f"break-even against the cheapest eligible API: {even}M tokens/day (floor x F / (p x D), docs/advise.md)"
        )
    return Section("Rung 3: self-hosted serving", lines=lines)


def adapt_section(advice: Advice) -> Section | None:
    a = advice.adapt
    if a is None:
        return None
    if a.refusal:
        return Section("Rung 2: adapt on one GPU", lines=[f"refused: {a.refusal}"])
    return Section(
        "Rung 2: adapt on one GPU",
        lines=[
            f"{a.method} on {a.instance_type} ({a.gpus} GPU): {_num(a.hours_per_run)} h a run at MFU "
            f"{a.mfu:.2f} ({a.mfu_source})",
            f"{money(a.cost_per_run_usd)} a run x {a.iterations} runs = {money(a.cost_usd)} "
            f"({', '.join(a.price_sources)})",
        ],
    )


def train_section(t: TrainRung) -> Section:
    met = (
        "" if t.meets_deadline is None else (" (meets the deadline)" if t.meets_deadline else " (MISSES the deadline)")
    )
    lines = [
        f"{t.nodes} x {t.instance_type} ({t.gpus} GPUs), {t.interconnect} with {t.efa_interfaces_per_node} "
        f"interfaces a node: {_num(t.days)} days{met}, {_num(t.gpu_hours, 0)} GPU-hours, {money(t.cost_usd, 0)} "
        f"on demand ({', '.join(t.price_sources)})",
        f"layout: {t.layout or UNKNOWN}, {_num(t.layout_gb)} of {_num(t.gpu_gb)} GB a GPU (plan/layout.py; "
        f"{t.layout_why})",
        f"MFU {t.mfu:.2f} ({t.mfu_source}); goodput {percent(t.goodput) if t.goodput is not None else UNKNOWN}",
        f"FSx for Lustre: {_num(t.lustre_capacity_gib, 0)} GiB at {_num(t.lustre_throughput_mb_s, 0)} MB/s",
        f"checkpoints: {_num(t.checkpoint_gb, 0)} GB every {_num(t.checkpoint_interval_minutes, 0)} minutes "
        "(Young/Daly, plan/checkpoint.py)",
        *t.notes,
    ]
    own = t.ownership
    if own is None:
        lines.append(f"owning versus renting: {t.ownership_note}")
    else:
        saving = percent(own.saving_fraction) if own.saving_fraction is not None else UNKNOWN
        lines.append(
            f"owning versus renting over {number(own.months, 1)} months: own {money(own.own_usd, 0)}, rent "
            f"{money(own.rent_usd, 0)} on demand ({saving} saved); break-even month {own.break_even_month or UNKNOWN}"
        )
    return Section("Rung 4: distributed training", lines=lines)


def bill_section(advice: Advice) -> Section:
    b = advice.bill
    rows = [[line.what, line.kind, money(line.usd), line.basis] for line in b.lines]
    total = ("at least " if not b.complete else "") + money(b.total_usd)
    share = percent(b.recurring_share) if b.recurring_share is not None else UNKNOWN
    lines = [
        f"one-off {money(b.one_off_usd)} + {money(b.recurring_monthly_usd)} a month x {b.horizon_months} months "
        f"= {total}; the recurring part is {share} of it",
        *(f"unknown, not zero: {u}" for u in b.unknown),
    ]
    return Section(
        f"Lifetime bill over {b.horizon_months} months", lines=lines, header=["", "kind", "USD", "basis"], rows=rows
    )


def sections(advice: Advice) -> list[Section]:
    out = [ladder_section(advice)]
    if advice.managed is not None:
        out.append(managed_section(advice.managed))
    adapt = adapt_section(advice)
    if adapt is not None:
        out.append(adapt)
    if advice.serving is not None:
        out.append(serving_section(advice.serving))
    if advice.train is not None:
        out.append(train_section(advice.train))
    if advice.dataprep is not None:
        out.append(
            Section("Data preparation", lines=[f"{number(advice.dataprep.raw_tb, 1)} TB raw: {advice.dataprep.note}"])
        )
    out.append(bill_section(advice))
    if advice.movers:
        out.append(Section("What would move the answer", lines=advice.movers))
    return out


def render_table(advice: Advice) -> str:
    out = [f"gpuinfra advise: {advice.intent}", f"answer: {advice.answer}", ""]
    for section in sections(advice):
        out.append(section.title)
        out += [f"  {line}" for line in section.lines]
        if section.rows:
            out += _aligned(section.header, section.rows)
        out.append("")
    return "\n".join(out)


def _aligned(header: list[str], rows: list[list[str]]) -> list[str]:
    """Columns padded to their widest cell; the last column runs on."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    return [
        "  " + "  ".join([*(c.ljust(w) for c, w in zip(r, widths, strict=False)), r[-1]]).rstrip()
        for r in [header, *rows]
    ]


def render_markdown(advice: Advice) -> str:
    out = [f"## gpuinfra advise: {markdown_text(advice.intent)}", "", f"**Answer:** {markdown_text(advice.answer)}", ""]
    for section in sections(advice):
        out += [f"### {markdown_text(section.title)}", ""]
        out += [f"- {markdown_text(line)}" for line in section.lines]
        if section.lines:
            out.append("")
        if section.rows:
            out.append("| " + " | ".join(markdown_text(h) for h in section.header) + " |")
            out.append("|" + "---|" * len(section.header))
            out += ["| " + " | ".join(markdown_text(c.strip(" >")) for c in row) + " |" for row in section.rows]
            out.append("")
    return "\n".join([*out, *chart(advice)]) + "\n"


def chart(advice: Advice) -> list[str]:
    """The options' cumulative cost over the horizon, as a Mermaid xychart (one line per option, in the order
    the legend lists them)."""
    curves = advice.curves
    top = max((c.cumulative_usd[-1] for c in curves), default=Decimal(0))
    legend = [
        f"{i + 1}. {markdown_text(c.option)}: {money(c.one_off_usd)} once, then {money(c.monthly_usd)} a month"
        for i, c in enumerate(curves)
    ]
    lines = [f"    line [{', '.join(str(round(v)) for v in c.cumulative_usd)}]" for c in curves]
    return [
        f"### Lifetime cost over {advice.horizon_months} months",
        "",
        *legend,
        "",
        "```mermaid",
        "xychart-beta",
        '    title "Cumulative cost (USD)"',
        f'    x-axis "month" 0 --> {advice.horizon_months}',
        f'    y-axis "USD" 0 --> {max(1, round(top * Decimal("1.05")))}',
        *lines,
        "```",
    ]


def render_json(advice: Advice) -> str:
    return json.dumps(advice.model_dump(mode="json"), indent=2) + "\n"


RENDERERS = {"table": render_table, "markdown": render_markdown, "json": render_json}


def render(advice: Advice, fmt: str) -> str:
    return RENDERERS[fmt](advice)


__all__ = ["FORMATS", "render", "render_json", "render_markdown", "render_table", "sections"]
