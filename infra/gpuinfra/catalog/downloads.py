"""What nodes download at boot and run as root, each pinned to a SHA-256 (catalog/data/downloads.yaml, every row
cited and dated): the boot scripts refuse a download whose digest differs (review finding T7: AWS publishes no
versioned copy of the FSx EFA client package, so the content is pinned instead of the version)."""

from __future__ import annotations

import datetime
from functools import cache
from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints

from gpuinfra.catalog.load import DATA_DIR, CatalogError

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
FSX_EFA_CLIENT = "fsx-efa-lustre-client"
"""The FSx for Lustre User Guide's configure-efa-fsx-lustre-client package ("Configuring EFA clients")."""


class PinnedDownload(BaseModel):
    """A URL and the SHA-256 its content must have."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    url: Annotated[str, StringConstraints(pattern=r"^https?://\S+$")]
    sha256: Sha256
    source: str
    as_of: datetime.date


@cache
def pinned_downloads() -> dict[str, PinnedDownload]:
    from ruamel.yaml import YAML

    from gpuinfra.catalog import load_catalog

    data = YAML(typ="safe").load((DATA_DIR / "downloads.yaml").read_text(encoding="utf-8"))
    rows = [PinnedDownload.model_validate(row) for row in data["downloads"]]
    sources = load_catalog().sources
    for row in rows:
        if row.source not in sources:
            raise CatalogError(f"downloads.yaml: {row.key} cites unknown source {row.source}")
        if row.as_of != sources[row.source].date:
            raise CatalogError(f"downloads.yaml: {row.key} must be as of its source's date {sources[row.source].date}")
    return {row.key: row for row in rows}


def pinned_download(key: str) -> PinnedDownload:
    """The catalog's pinned download `key` (a CatalogError when the catalog has none: nothing is fetched unpinned)."""
    found = pinned_downloads().get(key)
    if found is None:
        raise CatalogError(f"downloads.yaml has no pinned download {key}")
    return found


__all__ = ["FSX_EFA_CLIENT", "PinnedDownload", "Sha256", "pinned_download", "pinned_downloads"]
