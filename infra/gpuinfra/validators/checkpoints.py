"""Checkpoint interval against the planner's Young/Daly optimum, and whether it can be computed."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.plan import TrainingPlan
from gpuinfra.plan.checkpoint import interval_within_bound
from gpuinfra.spec import TrainingSpec
from gpuinfra.validators.base import Failure, Level, rule


@rule(Level.WARNING)
def checkpoint_interval_off_optimum(spec: TrainingSpec, plan: TrainingPlan) -> Iterator[Failure]:
    """The interval is less than half or more than twice the Young/Daly optimum."""
    ck = plan.checkpoint
    if ck is None:
        return
    if not 0.5 * ck.young_interval_minutes <= ck.interval_minutes <= 2 * ck.young_interval_minutes:
        yield Failure(
            f"checkpoint every {ck.interval_minutes:g} min, but the optimum is {ck.young_interval_minutes:.0f} min "
            f"(write {ck.write_seconds:.0f} s, cluster MTBI {ck.mtbi_hours:.1f} h); expected waste "
            f"{ck.expected_waste_fraction:.1%} vs {ck.optimal_waste_fraction:.1%} at the optimum",
            ("checkpointing", "interval_minutes"),
            f"write `interval_minutes: {ck.young_interval_minutes:.0f}` (the optimum) under checkpointing",
        )


@rule(Level.ERROR)
def spot_checkpoint_interval_too_long(spec: TrainingSpec, plan: TrainingPlan) -> Iterator[Failure]:
    """With spot nodes, the interval must stay under twice the optimum."""
    ck = plan.checkpoint
    if ck is not None and plan.spot_nodes > 0 and not interval_within_bound(ck.interval_minutes, ck):
        yield Failure(
            f"with {plan.spot_nodes} spot nodes, checkpoint every {ck.interval_minutes:g} min exceeds the bound "
            f"of {ck.max_interval_minutes:.0f} min",
            ("checkpointing", "interval_minutes"),
            f"write `interval_minutes: {ck.max_interval_minutes:.0f}` (the most it may be) under checkpointing",
        )


@rule(Level.ERROR)
def checkpoint_target_missing(spec: TrainingSpec, plan: TrainingPlan) -> Iterator[Failure]:
    """Checkpoints go to Lustre but the cluster has none, or their write bandwidth is unknown."""
    ck = spec.checkpointing
    if ck is None:
        return
    if ck.target == "lustre" and spec.lustre is None and spec.site_lustre is None:
        yield Failure(
            "checkpointing.target is lustre but no Lustre file system is configured",
            ("checkpointing", "target"),
            "add a `lustre` section (aws) or `site_lustre` (onprem), or write `target: s3` under checkpointing",
        )
    elif plan.checkpoint is None:
        yield Failure(
            plan.checkpoint_note or "checkpoint plan unavailable",
            ("checkpointing",),
            "write `write_bandwidth_gb_s: <measured GB/s>` under checkpointing",
        )


__all__ = [
    "checkpoint_interval_off_optimum",
    "checkpoint_target_missing",
    "interval_within_bound",
    "spot_checkpoint_interval_too_long",
]
