"""The Spot Instance Advisor's data (spot-advisor-data.json, the file behind aws.amazon.com/ec2/spot/instance-advisor/):
per Region and type, the band of the frequency of interruption over the last month and the savings over on-demand.

Format: `ranges` is a list of `{index, label, dots, max}` (label "<5%", "5-10%", ..., ">20%"; max the band's upper
bound in percent), and `spot_advisor.<region>.<Linux|Windows>.<type>` is `{s: savings percent, r: index into
ranges}`. The file carries no date of its own: the S3 object's Last-Modified header is the date kept."""

from __future__ import annotations

import datetime
import email.utils
from dataclasses import dataclass
from typing import Any

from gpuinfra.errors import InputError


@dataclass(frozen=True)
class Band:
    index: int
    label: str
    max_percent: int


@dataclass(frozen=True)
class Advice:
    instance_type: str
    region: str
    band: Band
    savings_percent: int


def last_modified_date(header: str | None, where: str) -> datetime.date:
    """An HTTP date (RFC 9110 IMF-fixdate, e.g. "Tue, 01 Dec 2026 06:12:09 GMT") as a UTC date."""
    if not header:
        raise InputError.single(
            f"{where}: no Last-Modified date",
            hint="the advisor data has no date of its own: record the S3 object's Last-Modified header beside it",
        )
    try:
        return email.utils.parsedate_to_datetime(header).astimezone(datetime.UTC).date()
    except (TypeError, ValueError) as exc:
        raise InputError.single(f"{where}: Last-Modified {header!r} is not an HTTP date") from exc


def parse(data: Any, types: set[str], regions: set[str], where: str) -> list[Advice]:
    """Linux advice for the given types in the given Regions, sorted by type then Region."""
    if not isinstance(data, dict) or not isinstance(data.get("ranges"), list) or "spot_advisor" not in data:
        raise InputError.single(f"{where}: not Spot Instance Advisor data (no `ranges` and `spot_advisor`)")
    bands = {int(r["index"]): Band(int(r["index"]), str(r["label"]), int(r["max"])) for r in data["ranges"]}
    out = []
    for region, by_os in sorted(data["spot_advisor"].items()):
        if region not in regions:
            continue
        for name, advice in sorted(by_os.get("Linux", {}).items()):
            if name not in types:
                continue
            band = bands.get(int(advice["r"]))
            if band is None:
                raise InputError.single(f"{where}: {region} {name}: range index {advice['r']} is not in `ranges`")
            out.append(Advice(name, region, band, int(advice["s"])))
    return sorted(out, key=lambda a: (a.instance_type, a.region))


__all__ = ["Advice", "Band", "last_modified_date", "parse"]
