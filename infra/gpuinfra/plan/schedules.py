"""Where a scheduled floor's clock runs: the region's own local time, so a "morning" floor rises in the morning
of the users that region serves (Tokyo's 06:00, not 06:00 UTC, which is 15:00 there).

The table maps each region to the IANA time zone of the city AWS names as its location (AWS General Reference,
"Regions and Zones": us-east-1 N. Virginia, us-west-2 Oregon, eu-central-1 Frankfurt, ap-northeast-1 Tokyo, ...;
zone names from the IANA time zone database's zone1970.tab). EC2 Auto Scaling takes an IANA name as a scheduled
action's TimeZone (PutScheduledUpdateGroupAction) and follows its daylight-saving changes.
"""

from __future__ import annotations

REGION_TIME_ZONES = {
    "us-east-1": "America/New_York",
    "us-east-2": "America/New_York",
    "us-west-1": "America/Los_Angeles",
    "us-west-2": "America/Los_Angeles",
    "ca-central-1": "America/Toronto",
    "sa-east-1": "America/Sao_Paulo",
    "eu-central-1": "Europe/Berlin",
    "eu-central-2": "Europe/Zurich",
    "eu-west-1": "Europe/Dublin",
    "eu-west-2": "Europe/London",
    "eu-west-3": "Europe/Paris",
    "eu-north-1": "Europe/Stockholm",
    "eu-south-1": "Europe/Rome",
    "eu-south-2": "Europe/Madrid",
    "ap-northeast-1": "Asia/Tokyo",
    "ap-northeast-2": "Asia/Seoul",
    "ap-northeast-3": "Asia/Tokyo",
    "ap-southeast-1": "Asia/Singapore",
    "ap-southeast-2": "Australia/Sydney",
    "ap-south-1": "Asia/Kolkata",
    "ap-south-2": "Asia/Kolkata",
    "ap-east-1": "Asia/Hong_Kong",
    "ap-east-2": "Asia/Taipei",
    "ap-southeast-3": "Asia/Jakarta",
    "ap-southeast-4": "Australia/Melbourne",
    "ap-southeast-5": "Asia/Kuala_Lumpur",
    "ap-southeast-6": "Pacific/Auckland",
    "ap-southeast-7": "Asia/Bangkok",
    "af-south-1": "Africa/Johannesburg",
    "ca-west-1": "America/Edmonton",
    "il-central-1": "Asia/Jerusalem",
    "me-central-1": "Asia/Dubai",
    "me-south-1": "Asia/Bahrain",
    "mx-central-1": "America/Mexico_City",
}
REGION = "region"
"""A schedule's time_zone that means the region's own (the default)."""


def schedule_time_zone(setting: str, region: str) -> str | None:
    """The IANA zone a schedule runs in for `region` (None: `region` asked for, and the table has no entry)."""
    if setting != REGION:
        return setting
    return REGION_TIME_ZONES.get(region)


__all__ = ["REGION", "REGION_TIME_ZONES", "schedule_time_zone"]
