"""AWS's catalog refresh as the cloud registry's `catalog_refresh` part: refresh the bundled data files from the
AWS Price List (or a recorded copy), then say what was read, how old it is and what is missing."""

from __future__ import annotations

from pathlib import Path

from gpuinfra.catalog import load_catalog
from gpuinfra.catalog.load import DATA_DIR
from gpuinfra.catalog.refresh.run import RefreshResult, refresh
from gpuinfra.catalog.refresh.source import Source


def run(recorded: Path | None, out: Path | None, account: str | None = None) -> str:
    """Refresh into `out` (None: the bundled catalog's data directory; an AWS refresh reads public price lists: no
    account is needed, `account` is unused)."""
    return summary(refresh(Source(recorded), out or DATA_DIR, load_catalog()), recorded)


def summary(result: RefreshResult, recorded: Path | None) -> str:
    """What the command prints."""
    lines = [
        f"read {len(result.regions_read)} Region price lists ({'recorded: ' + str(recorded) if recorded else 'AWS'})",
        f"oldest publication date: {result.oldest or 'none'}",
        f"wrote {result.rows} on-demand rows: {', '.join(str(p) for p in result.files)}",
    ]
    lines.append(
        f"spot advice: {result.advice_rows} rows as of {result.advice_as_of}"
        if result.advice_as_of
        else "spot advice: no Spot Instance Advisor data read (spot_advice.json unchanged)"
    )
    if result.regions_missing:
        lines.append(f"catalog Regions the Region index does not list: {', '.join(result.regions_missing)}")
    if result.unpriced_types:
        few = result.unpriced_types[:8]
        more = f" and {len(result.unpriced_types) - len(few)} more" if len(result.unpriced_types) > len(few) else ""
        lines.append(f"catalog types with no price in any Region read: {', '.join(few)}{more}")
    for name, where in result.new_types.items():
        lines.append(f"accelerated type not in the catalog: {name} ({len(where)} Regions); add it to instances.json")
    return "\n".join(lines) + "\n"


__all__ = ["run", "summary"]
