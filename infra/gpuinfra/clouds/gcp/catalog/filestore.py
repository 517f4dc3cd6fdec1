"""Filestore's service tiers, read from clouds/gcp/catalog/data/filestore.yaml: the capacities each tier takes (ranges,
each in its own steps), whether an instance of the tier is zonal or regional, and how long its share's name may
be. A training cluster's /home is one instance; its capacity is refused by name off its tier's steps rather than
sent to Google to refuse. No price: the file names why."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from gpuinfra.catalog.models import Source
from gpuinfra.clouds.gcp.catalog.book import check_sources, read_data

FILESTORE_FILE = Path(__file__).parent / "data" / "filestore.yaml"


@dataclass(frozen=True)
class CapacityRange:
    """Capacities from `min_gib` to `max_gib` in `step_gib` steps (multiples of the step: each minimum is one)."""

    min_gib: int
    max_gib: int
    step_gib: int

    def allows(self, gib: int) -> bool:
        return self.min_gib <= gib <= self.max_gib and gib % self.step_gib == 0

    def nearest(self, gib: int) -> int | None:
        """The smallest capacity of the range that holds `gib`; None when `gib` is past the range."""
        if gib > self.max_gib:
            return None
        return max(self.min_gib, -(-gib // self.step_gib) * self.step_gib)


@dataclass(frozen=True)
class FilestoreTier:
    tier: str
    location: Literal["zone", "region"]
    share_name_max: int
    ranges: tuple[CapacityRange, ...]
    source: str

    def allows(self, gib: int) -> bool:
        """Whether Filestore takes `gib` at this tier: within one of its ranges, on that range's steps."""
        return any(r.allows(gib) for r in self.ranges)

    def nearest(self, gib: int) -> int:
        """The smallest capacity this tier takes that holds `gib` (the tier's largest past its top)."""
        found = [n for n in (r.nearest(gib) for r in self.ranges) if n is not None]
        return min(found) if found else self.ranges[-1].max_gib

    def describe(self) -> str:
        """The tier's capacities in words (a finding's message)."""
        return ", then ".join(f"{r.min_gib:,} to {r.max_gib:,} GiB in {r.step_gib:,} GiB steps" for r in self.ranges)


@dataclass(frozen=True)
class FilestoreBook:
    sources: dict[str, Source]
    tiers: dict[str, FilestoreTier]


def _tier(row: dict[str, Any]) -> FilestoreTier:
    ranges = tuple(CapacityRange(int(a), int(b), int(c)) for a, b, c in row["ranges"])
    return FilestoreTier(row["tier"], row["location"], int(row["share_name_max"]), ranges, row["source"])


@cache
def filestore_book(path: Path = FILESTORE_FILE) -> FilestoreBook:
    """Filestore's tiers (read once per process); a malformed file is gpuinfra's bug, named with the file."""
    book = read_data(
        path,
        "Filestore's tiers",
        lambda data: FilestoreBook(
            sources={k: Source.model_validate(v) for k, v in data["sources"].items()},
            tiers={t["tier"]: _tier(t) for t in data["tiers"]},
        ),
    )
    check_sources(path, {t.source for t in book.tiers.values()}, book.sources)
    return book


__all__ = ["FILESTORE_FILE", "CapacityRange", "FilestoreBook", "FilestoreTier", "filestore_book"]
