"""Google Cloud's validators (gpuinfra.clouds.gcp.validators) as CASES, like every other rule's: each fires on a
mutation of the chat-serve-gcp example that Google (or the planner) would refuse, and stays quiet on the example.
The limits are Google's (compute v1 and Cloud Quotas references, cited in each rule's docstring)."""

from __future__ import annotations

import pytest
from helpers import Case, run_case

STACK = "chat-serve-gcp"
PEAK = [{"name": "peak", "recurrence": "0 8 * * *", "min_replicas": 2}]

CASES = [
    Case("gcp-project-purpose", STACK, {"account": "ml-inference"}, message="not a Google Cloud project"),
    Case("gcp-project-purpose", STACK, fires=False),
    # compute v1 InstanceGroupManagerUpdatePolicy: a regional group's maxSurge is 0 or at least its zone count (3)
    Case("gcp-rollout-surge", STACK, {"rollout.max_surge": 2}, message="below us-central1's 3 zones"),
    Case("gcp-rollout-surge", STACK, fires=False),
    Case("gcp-predictive-scaling", STACK, {"autoscaling.predictive": True}, message="not available on Google"),
    Case("gcp-predictive-scaling", STACK, fires=False),
    # europe-west1 has no zone with G2 machine types in the catalog's zone list
    Case("gcp-machine-type-not-in-zone", STACK, {"regions[1].region": "europe-west1"}, message="offers G2 in no zone"),
    Case("gcp-machine-type-not-in-zone", STACK, fires=False),
    Case("gcp-throughput-above-bound", STACK, {"throughput_rps_per_replica": 9.0}, message="above what g2-standard-4"),
    Case("gcp-throughput-above-bound", STACK, fires=False),
    # us-central1 granted 4 on-demand L4 GPUs where the fleet needs 10 at full size
    Case("gcp-quota-short", STACK, org={"accounts.gcp-chat.quotas.us-central1.NVIDIA_L4_GPUS": 4}),
    Case("gcp-quota-short", STACK, fires=False),
    # a 30B model at fp8 is 30 GB of weights: more than one L4's 24 GB (g2-standard-4 has one)
    Case("gcp-no-machine-type", STACK, {"instance.type": "g2-standard-4", "model.parameters_billion": 30}),
    Case("gcp-no-machine-type", STACK, fires=False),
    # a schedule on each region's clock, in a region the catalog has no time zone for
    Case(
        "gcp-schedule-clock",
        STACK,
        {"regions[1].region": "europe-west1", "autoscaling.schedules": PEAK},
        message="no time zone for europe-west1",
    ),
    Case("gcp-schedule-clock", STACK, {"autoscaling.schedules": PEAK}, fires=False),
    # autohealing's initial delay stops at 3600 s (compute v1): a cold start plus a 60-minute wait for the weights
    # passes it
    Case(
        "gcp-weights-wait-past-autoheal",
        STACK,
        {"weights.replication_wait_minutes": 60},
        message=r"past autohealing's longest initial delay \(3600 s\)",
    ),
    Case("gcp-weights-wait-past-autoheal", STACK, fires=False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)
