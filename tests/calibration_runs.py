"""The published training runs of calibration_runs.yaml, and the planner's tokens/s/GPU for each setup
(plan/throughput.py from the row's shape, layout, precision and the catalog's hardware figures)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from gpuinfra.catalog import load_catalog
from gpuinfra.plan.throughput import EFFICIENCY, Efficiency, ModelShape, Parallel, hardware, step_time

CATALOG = load_catalog()
DATA = yaml.safe_load((Path(__file__).parent / "plan" / "calibration_runs.yaml").read_text())
RUNS: list[dict[str, Any]] = DATA["runs"]
SOURCES: dict[str, dict[str, Any]] = DATA["sources"]
MEMORY_MIB = {"A100-40GB": ("A100", 40960), "A100": ("A100", 81920), "H100": ("H100", 81920)}


def _hbm(name: str, mib: int) -> float:
    return next(b.gb_s for b in CATALOG.memory_bandwidths if b.name == name and b.memory_mib == mib)


def planned_setup(
    accelerator: str,
    precision: str,
    node_gbps: float,
    shape_row: dict[str, Any],
    layout_row: dict[str, Any],
    eff: Efficiency = EFFICIENCY,
) -> float:
    """The planner's tokens/s per GPU for one published setup (8-GPU nodes; the catalog's peak and HBM figures)."""
    name, mib = MEMORY_MIB[accelerator]
    peak = CATALOG.accelerator_peak(name)
    assert peak is not None
    shape_row = dict(shape_row)
    shape_row.setdefault("active_parameters", shape_row["parameters"])
    lay = dict(layout_row)
    shape = ModelShape(sequence_length=lay.pop("seq"), **shape_row)
    hw = hardware(
        name,
        dict(peak.dense_tflops),
        _hbm(name, mib),
        node_gbps,
        8,
        nvlink_gb_s=CATALOG.nvlink_gb_s(name),
        generation=peak.generation,
    )
    return step_time(shape, Parallel(**lay), hw, precision, eff).tokens_per_s


def planned(run: dict[str, Any], eff: Efficiency = EFFICIENCY) -> float:
    """The planner's figure for the run's setup: tokens/s per GPU, or model TFLOPS per GPU (6 x parameters x
    tokens/s) where the source gives TFLOPS (`published_tflops`)."""
    shape = DATA["shapes"][run["shape"]]
    if run.get("lora"):  # a frozen base under LoRA adapters
        shape = {**shape, "frozen_base": True}
    rate = planned_setup(run["accelerator"], run["precision"], run["node_gbps"], shape, run["layout"], eff)
    if "published_tflops" in run:
        return rate * 6 * float(shape["parameters"]) / 1e12
    return rate


def published(run: dict[str, Any]) -> float:
    return float(run.get("published_tflops", run.get("published", 0)))


def ratios(eff: Efficiency = EFFICIENCY) -> dict[str, float]:
    return {r["id"]: planned(r, eff) / published(r) for r in RUNS}


GENERATION = {"H100": "Hopper (H100)", "A100": "Ampere (A100 80GB)", "A100-40GB": "Ampere (A100 40GB)"}


def residual_table(eff: Efficiency = EFFICIENCY) -> str:
    """The step model's residuals (planner / published) per hardware generation and precision, as docs/planning.md
    shows them: runs, median, worst low, worst high, share within 15%."""
    groups: dict[tuple[str, str], list[float]] = {}
    for r in RUNS:
        kind = {"moe": " MoE", "held-out": " (held out)", "finetune": " fine-tuning (held out)"}.get(r["group"], "")
        key = (GENERATION[r["accelerator"]], r["precision"] + kind)
        groups.setdefault(key, []).append(planned(r, eff) / published(r))
    lines = [
        "| generation | precision | runs | median | lowest | highest | within 15% |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for (gen, prec), values in sorted(groups.items()):
        ordered = sorted(values)
        mid = ordered[len(ordered) // 2] if len(ordered) % 2 else sum(ordered[len(ordered) // 2 - 1 :][:2]) / 2
        within = sum(abs(v - 1) <= 0.15 for v in values)
        low, high, n = ordered[0], ordered[-1], len(values)
        lines.append(f"| {gen} | {prec} | {n} | {mid:.2f} | {low:.2f} | {high:.2f} | {within}/{n} |")
    return "\n".join(lines)
