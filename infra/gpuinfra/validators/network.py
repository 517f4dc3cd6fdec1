"""Network placement: inference spans two or more zones, regions appear once (a zone outside its region is a
spec error: spec.base.zone_problem)."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.spec import InferenceSpec
from gpuinfra.validators.base import Failure, Level, rule


@rule(Level.ERROR)
def duplicate_region(spec: InferenceSpec) -> Iterator[Failure]:
    """A region listed twice would build two fleets fighting over one name and quota."""
    seen: dict[str, int] = {}
    for i, region in enumerate(spec.regions):
        if region.region in seen:
            yield Failure(
                f"region {region.region} is listed twice (also at regions[{seen[region.region]}])",
                ("regions", i, "region"),
                "merge the two entries (sum their demand, widen min/max)",
            )
        else:
            seen[region.region] = i


@rule(Level.ERROR)
def single_zone_region(spec: InferenceSpec) -> Iterator[Failure]:
    """A region on one zone loses every replica with that zone; replicas need two or more."""
    for i, region in enumerate(spec.regions):
        zones = region.availability_zones
        if zones and len(set(zones)) < 2:
            yield Failure(
                f"region {region.region} uses {len(set(zones))} zone",
                ("regions", i, "availability_zones"),
                f"list two or more zones, e.g. {region.region}a and {region.region}b",
            )


__all__ = ["duplicate_region", "single_zone_region"]
