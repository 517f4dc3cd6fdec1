"""The regions AWS PCS serves, from clouds/aws/catalog/data/pcs.yaml (each list with its source and as-of date)."""

from __future__ import annotations

import datetime
from functools import cache
from pathlib import Path

from gpuinfra.catalog.load import CatalogError
from pydantic import BaseModel, ConfigDict

DATA_DIR = Path(__file__).parent / "data"


class PcsRegions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    as_of: datetime.date
    codes: frozenset[str]


@cache
def pcs_regions() -> PcsRegions:
    from gpuinfra.catalog import load_catalog
    from ruamel.yaml import YAML

    data = YAML(typ="safe", pure=True).load((DATA_DIR / "pcs.yaml").read_text(encoding="utf-8"))
    regions = PcsRegions.model_validate(data["regions"])
    if regions.source not in load_catalog().sources:
        raise CatalogError(f"pcs.yaml cites unknown source {regions.source}")
    return regions


__all__ = ["PcsRegions", "pcs_regions"]
