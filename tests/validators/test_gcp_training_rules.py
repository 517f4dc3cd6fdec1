"""Google training's validators (gpuinfra.clouds.gcp.validators.training) as CASES, like every other rule's: each
fires on a mutation of the llm-train-gcp example that Google (or the planner) would refuse, and stays quiet on the
example. The limits are Google's, cited in each rule's docstring: flex-start runs at most 7 days and takes neither
a reservation nor Spot; a reservation's own placement applies; Managed Lustre's capacity comes in its tier's steps;
A3 Ultra / A4 need the zone's RoCE network profile."""

from __future__ import annotations

import pytest
from helpers import Case, run_case

STACK = "llm-train-gcp"
FLEX = {"compute.capacity": {"flex_start": True, "max_run_hours": 168}, "compute.node_count": 4}
SPOT = {"compute.capacity": {"spot": True}, "compute.node_count": 4}

CASES = [
    Case("gcp-training-project-purpose", STACK, {"account": "gcp-chat"}),
    Case("gcp-training-project-purpose", STACK, fires=False),
    Case(
        "gcp-spot-with-flex-start", STACK, {"compute.capacity": {"spot": True, "flex_start": True, "max_run_hours": 24}}
    ),
    Case("gcp-spot-with-flex-start", STACK, FLEX, fires=False),
    Case(
        "gcp-flex-start-with-reservation",
        STACK,
        {"compute.capacity": {"reservation": "acme-h200-train", "flex_start": True, "max_run_hours": 24}},
    ),
    Case("gcp-flex-start-with-reservation", STACK, FLEX, fires=False),
    Case("gcp-spot-with-reservation", STACK, {"compute.capacity": {"reservation": "acme-h200-train", "spot": True}}),
    Case("gcp-spot-with-reservation", STACK, SPOT, fires=False),
    # flex-start: at most 7 days (168 h) a run
    Case("gcp-flex-start-duration", STACK, {"compute.capacity": {"flex_start": True, "max_run_hours": 200}}),
    Case("gcp-flex-start-duration", STACK, FLEX, fires=False),
    Case("gcp-rdma-without-roce", STACK, {"network.roce_vpc": False}),
    Case("gcp-rdma-without-roce", STACK, fires=False),
    Case("gcp-zone-lacks-machine-type", STACK, {"compute.zone": "us-central1-a"}),
    Case("gcp-zone-lacks-machine-type", STACK, fires=False),
    # 500 MB/s/TiB comes in 18,000 GiB steps: 20,000 GiB is off them
    Case("gcp-lustre-capacity-off-steps", STACK, {"lustre.capacity_gib": 20000}),
    Case("gcp-lustre-capacity-off-steps", STACK, fires=False),
    # the example's project grants no preemptible H200s: Spot draws on them
    Case("gcp-training-quota-short", STACK, {"compute.capacity": {"spot": True}}),
    Case("gcp-training-quota-short", STACK, fires=False),
    # a reservation keeps its own placement (the example asks compact with one)
    Case("gcp-placement-from-reservation", STACK),
    Case("gcp-placement-from-reservation", STACK, FLEX, fires=False),
    # queued provisioning (flex-start) takes no compact policy; on Spot compact placement is made
    Case("gcp-placement-with-flex-start", STACK, FLEX),
    Case("gcp-placement-with-flex-start", STACK, SPOT, fires=False),
    Case("gcp-placement-with-flex-start", STACK, {**FLEX, "compute.placement": "none"}, fires=False),
    # a 1,120 GB checkpoint takes 64 s at 17.6 GB/s: past Spot's 30 s notice
    Case("gcp-checkpoint-past-spot-notice", STACK, SPOT),
    Case("gcp-checkpoint-past-spot-notice", STACK, fires=False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)
