"""The fine-tuning plan for people: memory of the run, the instance, hours and cost per run."""

from __future__ import annotations

from decimal import Decimal

from gpuinfra.plan import FinetunePlan
from gpuinfra.plan.finetune import Candidate
from gpuinfra.report.format import UNKNOWN, check, gigabytes, number
from gpuinfra.report.model import Section


def _usd(value: Decimal | None) -> str:
    return f"${value:,.2f}" if value is not None else UNKNOWN


def _hours(value: float | None) -> str:
    return f"{number(value)} h" if value is not None else UNKNOWN


def _candidate(c: Candidate | None) -> str:
    if c is None:
        return "none fits"
    return f"{c.instance_type} ({c.gpus} x {c.accelerator}): {_hours(c.hours)}, {_usd(c.cost_usd)} a run"


def finetune_summary(plan: FinetunePlan) -> list[Section]:
    sections = []
    mem = plan.memory
    if mem is not None:
        sections.append(
            Section(
                title="Memory per GPU",
                rows=[
                    ["frozen base", f"{gigabytes(mem.base_bytes)} ({plan.method}), over {mem.gpus} GPU(s)"],
                    ["adapter", f"{mem.adapter_parameters:,} parameters, {gigabytes(mem.adapter_state_bytes)} state"],
                    ["activations", gigabytes(mem.activation_bytes)],
                    [
                        "per GPU + reserve",
                        f"{gigabytes(mem.per_gpu_bytes + mem.reserve_bytes)} of {gigabytes(mem.gpu_bytes)}",
                    ],
                    ["fits", check(mem.fits)],
                ],
                notes=[
                    "LoRA (Hu et al. 2021), QLoRA NF4 + double quantization (Dettmers et al. 2023), "
                    "activations Korthikanti et al. 2022; see docs/finetune.md"
                ],
            )
        )
    chosen = plan.chosen
    sections.append(
        Section(
            title="Run",
            rows=[
                ["instance", _candidate(chosen)],
                ["capacity", plan.capacity],
                ["tokens", f"{plan.tokens:,.0f}"],
                ["FLOPs (frozen base: 4N a token, 6N with checkpointing)", f"{plan.flops:.3g}"],
                ["MFU", f"{plan.mfu:g} ({plan.mfu_source})"],
                ["time", _hours(chosen.hours if chosen else None)],
                ["cost per run", _usd(chosen.cost_usd if chosen else None)],
                ["smallest that fits", _candidate(plan.smallest)],
                ["cheapest that fits", _candidate(plan.cheapest)],
            ],
            notes=[plan.refusal] if plan.refusal else [],
        )
    )
    return sections


__all__ = ["finetune_summary"]
