"""A training run's efficiency claims against the published runs the planner is calibrated on."""

from __future__ import annotations

import math
from collections.abc import Iterator

from gpuinfra.plan.flops import PUBLISHED_MFU_CEILING
from gpuinfra.spec import TrainingSpec
from gpuinfra.validators.base import Failure, Level, rule


@rule(Level.WARNING)
def mfu_above_published(spec: TrainingSpec) -> Iterator[Failure]:
    """run.mfu above the highest MFU any published run of the calibration set reached at that precision: the plan
    then promises a run nobody has shown (plan/flops.py PUBLISHED_MFU_CEILING, docs/planning.md)."""
    run = spec.run
    ceiling = PUBLISHED_MFU_CEILING.get(spec.model.precision)
    if run is None or run.mfu is None or ceiling is None or run.mfu <= ceiling:
        return
    yield Failure(
        f"run.mfu {run.mfu:.0%} at {spec.model.precision} is above the {ceiling:.1%} the best published run of "
        "the planner's calibration set reached (docs/planning.md)",
        ("run", "mfu"),
        f"write a figure measured on this model and hardware, at or below it (`mfu: "
        f"{math.floor(ceiling * 100) / 100:g}` under run), or remove `run.mfu` for the calibrated default",
    )
