"""Per-token prices of hosted (managed-API) models: the first rung of `gpuinfra advise` compares them with the
fleet it would build. One data file (data/managed_apis.yaml) with its own sources, read once per process."""

from __future__ import annotations

import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from gpuinfra.catalog.load import DATA_DIR, CatalogError
from gpuinfra.catalog.models import Entry

FILE = "managed_apis.yaml"
MILLION = Decimal(1_000_000)


class PriceSource(BaseModel):
    """Where a price table came from; `read_on` is the day it was read (the table itself may give no date)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str
    url: str
    date: datetime.date | None = None
    date_basis: str
    read_on: datetime.date


class ManagedPrice(Entry):
    """One hosted model's on-demand price per million tokens."""

    provider: str
    model: str
    family: str
    parameters_billion: float
    input_usd_per_mtok: Decimal
    output_usd_per_mtok: Decimal
    regions: tuple[str, ...] | None
    """Where the provider serves it, when the source says; None: unknown."""
    in_account: bool
    """The provider runs inside the customer's own cloud account (data does not leave it)."""

    @field_validator("input_usd_per_mtok", "output_usd_per_mtok", mode="before")
    @classmethod
    def _exact(cls, value: Any) -> Any:
        """0.22 read from YAML is a float: keep its decimal digits, not its binary expansion."""
        return Decimal(repr(value)) if isinstance(value, float) else value

    def cost_usd(self, input_tokens: float, output_tokens: float) -> Decimal:
        """What `input_tokens` in and `output_tokens` out cost at this price."""
        return (
            Decimal(repr(float(input_tokens))) * self.input_usd_per_mtok
            + Decimal(repr(float(output_tokens))) * self.output_usd_per_mtok
        ) / MILLION


class ManagedPrices(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    sources: dict[str, PriceSource]
    prices: tuple[ManagedPrice, ...]

    def comparable(self, parameters_billion: float, tolerance: float = 0.15) -> list[ManagedPrice]:
        """Rows of a model within `tolerance` of the size (an 8B against 8B rows, 70.6B against 70B)."""
        return [
            p for p in self.prices if abs(p.parameters_billion - parameters_billion) <= tolerance * parameters_billion
        ]


def table_problems(table: ManagedPrices) -> list[str]:
    """Rows citing a source the file does not list, or dated otherwise than their source (catalog/models.py
    Entry: as_of is the date the source gives, None when it gives none)."""
    problems = []
    unknown = sorted({p.source for p in table.prices} - set(table.sources))
    if unknown:
        problems.append(f"rows cite unknown sources {unknown}")
    misdated = [p.model for p in table.prices if p.source in table.sources and p.as_of != table.sources[p.source].date]
    if misdated:
        problems.append(f"as_of is not the source's date for {misdated}")
    return problems


@lru_cache(maxsize=1)
def load_managed_prices() -> ManagedPrices:
    """Parse data/managed_apis.yaml; refuse it when a row cites a source the file does not list."""
    try:
        raw = YAML(typ="safe").load((DATA_DIR / FILE).read_text(encoding="utf-8"))
        table = ManagedPrices.model_validate(raw)
    except (ValidationError, OSError, YAMLError, TypeError) as exc:
        raise CatalogError(f"bundled {FILE} is invalid: {exc}") from exc
    problems = table_problems(table)
    if problems:
        raise CatalogError(f"bundled {FILE}: " + "; ".join(problems))
    return table


__all__ = ["ManagedPrice", "ManagedPrices", "PriceSource", "load_managed_prices", "table_problems"]
