"""Scheduled floors on each region's clock: chat-serve's morning floor (06:00, weekdays) in each region's own time,
so Tokyo's rises at 06:00 in Tokyo, not at 06:00 UTC (15:00 there)."""

from __future__ import annotations

import datetime
import zoneinfo

from helpers import example_graph, graph_for

EXPECTED = {
    # AWS region locations (N. Virginia, Oregon, Frankfurt, Tokyo) and their IANA zones.
    "us-east-1": "America/New_York",
    "us-west-2": "America/Los_Angeles",
    "eu-central-1": "Europe/Berlin",
    "ap-northeast-1": "Asia/Tokyo",
}


def test_each_region_s_schedules_run_on_its_own_clock() -> None:
    graph = example_graph("chat-serve")
    schedules = graph.of_type("aws:autoscaling/schedule:Schedule")
    assert len(schedules) == 8  # morning and evening, four regions
    for schedule in schedules:
        region = graph.provider_of(schedule).inputs["region"]  # type: ignore[union-attr]
        assert schedule.inputs["timeZone"] == EXPECTED[region], schedule.name
    # What that means for Tokyo: 06:00 local on a weekday is 21:00 UTC the day before (UTC+9, no DST).
    tokyo = datetime.datetime(2026, 12, 7, 6, 0, tzinfo=zoneinfo.ZoneInfo("Asia/Tokyo"))
    assert tokyo.astimezone(datetime.UTC) == datetime.datetime(2026, 12, 6, 21, 0, tzinfo=datetime.UTC)


def test_one_clock_for_every_region_is_a_choice() -> None:
    graph = graph_for(
        "chat-serve",
        {"autoscaling.schedules[0].time_zone": "Etc/UTC", "autoscaling.schedules[1].time_zone": "Etc/UTC"},
    )
    assert {s.inputs["timeZone"] for s in graph.of_type("aws:autoscaling/schedule:Schedule")} == {"Etc/UTC"}
