"""Where a scheduled floor's clock runs: the region's own local time, so a "morning" floor rises in the morning
of the users that region serves (Tokyo's 06:00, not 06:00 UTC, which is 15:00 there).

Each region's zone is catalog data (catalog/data/time_zones.yaml, `Catalog.time_zones()`), handed in: the planner
reads no file. EC2 Auto Scaling takes an IANA name as a scheduled action's TimeZone (PutScheduledUpdateGroupAction)
and follows its daylight-saving changes.
"""

from __future__ import annotations

from collections.abc import Mapping

REGION = "region"
"""A schedule's time_zone that means the region's own (the default)."""


def schedule_time_zone(setting: str, region: str, zones: Mapping[str, str]) -> str | None:
    """The IANA zone a schedule runs in for `region` (None: `region` asked for, and `zones`, region -> local zone,
    has no entry)."""
    if setting != REGION:
        return setting
    return zones.get(region)


__all__ = ["REGION", "schedule_time_zone"]
