"""How often to checkpoint: Young's optimum √(2·C·M), with Daly's refinement √(2·C·M) − C.

C is the time to write one checkpoint (size / write bandwidth); M the cluster's mean time between
interruptions, from node failures and spot reclaims over every node.
"""

from __future__ import annotations

import math
from typing import Protocol

from gpuinfra.plan.memory import Plain

HOURS_PER_MONTH = 730.0
SUPERSEDED_TAG = "gpuinfra-superseded"
"""The S3 tag the checkpoint pruner sets (value "true") on the copies of a checkpoint it removed: the checkpoint
bucket's lifecycle expires only those, and the cost model finds the checkpoint bucket by that rule."""


class CheckpointPlan(Plain):
    size_gb: float
    write_bandwidth_gb_s: float
    write_seconds: float
    """C: time to write one checkpoint."""
    interruptions_per_hour: float
    mtbi_hours: float
    """M: mean time between interruptions of the whole cluster."""
    young_interval_minutes: float
    daly_interval_minutes: float
    max_interval_minutes: float
    """Longest interval allowed with spot: twice the optimum (25% more expected waste)."""
    interval_minutes: float
    """The interval the spec asks for."""
    expected_waste_fraction: float
    """Share of cluster time lost to writing checkpoints and redoing work, at the spec's interval."""
    optimal_waste_fraction: float


def mean_time_between_interruptions(
    node_count: int, spot_nodes: int, node_mtbf_hours: float, spot_interruption_rate_monthly: float
) -> float:
    rate = node_count / node_mtbf_hours + spot_nodes * spot_interruption_rate_monthly / HOURS_PER_MONTH
    return math.inf if rate == 0 else 1.0 / rate


def young_interval_seconds(write_seconds: float, mtbi_seconds: float) -> float:
    return math.sqrt(2.0 * write_seconds * mtbi_seconds)


def waste_fraction(interval_seconds: float, write_seconds: float, mtbi_seconds: float) -> float:
    """First-order expected loss: C/T for writing plus T/(2M) of rework per interruption."""
    return write_seconds / interval_seconds + interval_seconds / (2.0 * mtbi_seconds)


def interval_within_bound(interval_minutes: float, checkpoint: CheckpointPlan) -> bool:
    """Spot is safe only while the interval stays under the planner's bound (the validator and the
    training policy both ask this)."""
    return interval_minutes <= checkpoint.max_interval_minutes + 1e-9


class CheckpointContract(Protocol):
    """The checkpoint fields every cloud's training spec carries (each cloud's own checkpointing model)."""

    @property
    def target(self) -> str: ...
    @property
    def interval_minutes(self) -> float: ...
    @property
    def size_gib(self) -> float | None: ...
    @property
    def write_bandwidth_gb_s(self) -> float | None: ...


def planned_checkpoint(
    ckpt: CheckpointContract | None,
    state_bytes: float,
    lustre_mb_s: float | None,
    node_count: int,
    spot_nodes: int,
    node_mtbf_hours: float,
    spot_rate: float,
) -> tuple[CheckpointPlan | None, str | None]:
    """The checkpoint interval and its cost, from the write bandwidth (given, else Lustre's) and the failure
    rates; a note saying what is missing otherwise. One step for every cloud's training planner: the size defaults
    to the training state (`state_bytes`), the bandwidth to Lustre's aggregate throughput."""
    if ckpt is None:
        return None, "no checkpointing configured"
    size_gb = ckpt.size_gib * 1024**3 / 1e9 if ckpt.size_gib else state_bytes / 1e9
    bandwidth = ckpt.write_bandwidth_gb_s
    if bandwidth is None and ckpt.target == "lustre" and lustre_mb_s:
        bandwidth = lustre_mb_s / 1000
    if bandwidth is None:
        return None, "checkpoint write bandwidth unknown: set checkpointing.write_bandwidth_gb_s"
    return checkpoint_plan(
        size_gb, bandwidth, node_count, spot_nodes, node_mtbf_hours, spot_rate, ckpt.interval_minutes
    ), None


def checkpoint_plan(
    size_gb: float,
    write_bandwidth_gb_s: float,
    node_count: int,
    spot_nodes: int,
    node_mtbf_hours: float,
    spot_interruption_rate_monthly: float,
    interval_minutes: float,
) -> CheckpointPlan:
    write_s = size_gb / write_bandwidth_gb_s
    mtbi_h = mean_time_between_interruptions(node_count, spot_nodes, node_mtbf_hours, spot_interruption_rate_monthly)
    mtbi_s = mtbi_h * 3600.0
    young_s = young_interval_seconds(write_s, mtbi_s)
    return CheckpointPlan(
        size_gb=size_gb,
        write_bandwidth_gb_s=write_bandwidth_gb_s,
        write_seconds=write_s,
        interruptions_per_hour=1.0 / mtbi_h,
        mtbi_hours=mtbi_h,
        young_interval_minutes=young_s / 60.0,
        daly_interval_minutes=max(young_s - write_s, write_s) / 60.0,
        max_interval_minutes=2.0 * young_s / 60.0,
        interval_minutes=interval_minutes,
        expected_waste_fraction=waste_fraction(interval_minutes * 60.0, write_s, mtbi_s),
        optimal_waste_fraction=waste_fraction(young_s, write_s, mtbi_s),
    )


__all__ = [
    "HOURS_PER_MONTH",
    "CheckpointContract",
    "CheckpointPlan",
    "checkpoint_plan",
    "interval_within_bound",
    "mean_time_between_interruptions",
    "planned_checkpoint",
    "waste_fraction",
    "young_interval_seconds",
]
