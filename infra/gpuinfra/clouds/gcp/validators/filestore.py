"""Google's validator rules for a training cluster's /home on Filestore: a capacity on its tier's steps, and a share
name the tier takes (file v1 FileShareConfig.name: "1-16 characters for the basic service tier and 1-63 characters
for all other service tiers"). Each is refused here, by name, rather than sent to Google to refuse."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.clouds.gcp.catalog.filestore import filestore_book
from gpuinfra.clouds.gcp.spec.training import GcpTrainingSpec
from gpuinfra.validators.base import Failure, Level, rule

CATALOG = "clouds/gcp/catalog/data/filestore.yaml"


@rule(Level.ERROR)
def gcp_filestore_capacity_off_tier(spec: GcpTrainingSpec) -> Iterator[Failure]:
    """Filestore takes capacities within its tier's ranges, on each range's steps."""
    home = spec.filestore
    if home is None:
        return
    tier = filestore_book().tiers[home.tier]
    if not tier.allows(home.capacity_gib):
        yield Failure(
            f"capacity_gib {home.capacity_gib:,} is not a capacity Filestore takes at tier {home.tier} "
            f"({tier.describe()}: {CATALOG})",
            ("filestore", "capacity_gib"),
            f"write `capacity_gib: {tier.nearest(home.capacity_gib)}` under filestore (the nearest step of its tier)",
        )


@rule(Level.ERROR)
def gcp_filestore_share_name(spec: GcpTrainingSpec) -> Iterator[Failure]:
    """A basic tier's share name is at most 16 characters."""
    home = spec.filestore
    if home is None:
        return
    limit = filestore_book().tiers[home.tier].share_name_max
    if len(home.share) > limit:
        yield Failure(
            f"share {home.share!r} has {len(home.share)} characters: tier {home.tier} takes at most {limit} "
            "(file v1 FileShareConfig.name)",
            ("filestore", "share"),
            f"write a `share:` of at most {limit} characters under filestore (default: home)",
        )


__all__ = ["gcp_filestore_capacity_off_tier", "gcp_filestore_share_name"]
