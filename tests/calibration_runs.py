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


def planned(run: dict[str, Any], eff: Efficiency = EFFICIENCY) -> float:
    """The planner's tokens/s per GPU for the run's setup."""
    name, mib = MEMORY_MIB[run["accelerator"]]
    peak = CATALOG.accelerator_peak(name)
    assert peak is not None
    shape_row = dict(DATA["shapes"][run["shape"]])
    shape_row.setdefault("active_parameters", shape_row["parameters"])
    lay = dict(run["layout"])
    shape = ModelShape(sequence_length=lay.pop("seq"), **shape_row)
    layout = Parallel(**lay)
    hw = hardware(name, dict(peak.dense_tflops), _hbm(name, mib), run["node_gbps"], 8)
    return step_time(shape, layout, hw, run["precision"], eff).tokens_per_s


def ratios(eff: Efficiency = EFFICIENCY) -> dict[str, float]:
    return {r["id"]: planned(r, eff) / r["published"] for r in RUNS}
