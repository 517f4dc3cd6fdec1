"""Checkpoint interval rules."""

from __future__ import annotations

import pytest
from helpers import Case, run_case

BEFORE_T15 = {"compute.capacity": {"type": "spot", "on_demand_base": 4}, "compute.elastic": None}
"""llm-train before the review's finding T15: 4 on-demand nodes and 12 spot (the figures below are for it)."""

# llm-train's checkpoint: 1,120 GB written at 57,600 GiB x 250 MB/s/TiB = 14.0625 GB/s -> C = 79.6 s; with 12 of the
# 16 nodes on spot, the cluster's MTBI M = 154.1 h. Young's optimum sqrt(2 C M) = sqrt(2 x 79.6 x 554,760) s
# = 157 min. The spot bound scales with sqrt(C): 343 min at the 96 s of the former 48,000 GiB file system
# x sqrt(79.6 / 95.6) = 313 min.
CASES = [
    Case(
        "checkpoint-interval-off-optimum",
        "llm-train",
        {"checkpointing.interval_minutes": 20, **BEFORE_T15},
        message=r"checkpoint every 20 min, but the optimum is 157 min",
    ),
    Case("checkpoint-interval-off-optimum", "llm-train", {"checkpointing.interval_minutes": 360, **BEFORE_T15}),
    Case("checkpoint-interval-off-optimum", "llm-train", BEFORE_T15, fires=False),
    Case("checkpoint-interval-off-optimum", "llm-train", fires=False),  # the reservation's nodes fail less often
    Case(
        "spot-checkpoint-interval-too-long",
        "llm-train",
        {"checkpointing.interval_minutes": 400, **BEFORE_T15},
        message="with 12 spot nodes, checkpoint every 400 min exceeds the bound of 313 min",
    ),
    Case(
        "spot-checkpoint-interval-too-long",
        "llm-train",
        {"checkpointing.interval_minutes": 400, "compute.capacity": {"type": "on_demand"}},
        fires=False,
    ),
    Case(
        "checkpoint-target-missing", "llm-train", {"lustre": None}, message="target is lustre but no Lustre file system"
    ),
    Case("checkpoint-target-missing", "llm-train", {"checkpointing.target": "s3"}, message="write bandwidth unknown"),
    Case(
        "checkpoint-target-missing",
        "llm-train",
        {"checkpointing.target": "s3", "checkpointing.write_bandwidth_gb_s": 20},
        fires=False,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)
