"""Replica floors (validators/floors.py): an always-on floor below the zone count, and a scheduled floor that is
raised and never lowered. chat-serve's regions span two zones (a and b); its schedules are a pair: morning-floor
sets every base group's minimum to 3 and evening-floor back to 2, every region's min_replicas."""

from __future__ import annotations

import pytest
from helpers import Case, run_case

ONE_WAY = {"autoscaling.schedules": [{"name": "morning-floor", "recurrence": "0 6 * * 1-5", "min_replicas": 3}]}

CASES = [
    # ap-northeast-1 at 1 replica over its 2 default zones: one zone holds none at the floor
    Case(
        "replicas-below-zones",
        "chat-serve",
        {"regions[3].min_replicas": 1},
        message=r"^ap-northeast-1: min_replicas 1 across 2 zones: .* so at the floor 1 zone\(s\) hold no replica",
    ),
    # three zones need three replicas: 2 < 3
    Case(
        "replicas-below-zones",
        "chat-serve",
        {"regions[0].availability_zones": ["us-east-1a", "us-east-1b", "us-east-1c"]},
        message=r"^us-east-1: min_replicas 2 across 3 zones",
    ),
    Case("replicas-below-zones", "chat-serve", fires=False),
    # a Kubernetes fleet's zones are its cluster's: not judged from the spec
    Case("replicas-below-zones", "chat-serve-k8s", {"regions[0].min_replicas": 1}, fires=False),
    # morning-floor alone: 3 in every region (each region's on-demand maximum is at least 3) and nothing sets 2
    Case(
        "schedule-floor-never-lowered",
        "chat-serve",
        ONE_WAY,
        message=r"^schedule morning-floor raises us-east-1's floor from 2 to 3 and no schedule lowers it back",
    ),
    Case("schedule-floor-never-lowered", "chat-serve", fires=False),
    # a lowering action that stops at 3 restores no region's floor of 2
    Case(
        "schedule-floor-never-lowered",
        "chat-serve",
        {
            "autoscaling.schedules": [
                {"name": "morning-floor", "recurrence": "0 6 * * 1-5", "min_replicas": 4},
                {"name": "evening-floor", "recurrence": "0 18 * * 1-5", "min_replicas": 3},
            ]
        },
        message=r"^schedule morning-floor raises us-east-1's floor from 2 to 4",
    ),
    # a schedule at the floor itself raises nothing
    Case(
        "schedule-floor-never-lowered",
        "chat-serve",
        {"autoscaling.schedules": [{"name": "floor", "recurrence": "0 6 * * 1-5", "min_replicas": 2}]},
        fires=False,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)
