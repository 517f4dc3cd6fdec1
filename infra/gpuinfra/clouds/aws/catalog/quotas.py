"""EC2's quota codes: which Service Quotas code counts a family's On-Demand, Spot and Capacity Block purchases, and,
where no cited source names one, the statement that none is known (a check must fail closed). AWS's quota model
(clouds/aws/plan/quotas.py), its reading of a graph for the pack (clouds/aws/policy/quotas.py) and `gpuinfra catalog
<type>` all look codes up here; the shared catalog's sources (sources.yaml) and families (families.yaml) are what
the file is checked against when it is read."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Literal

from gpuinfra.catalog import Catalog, CatalogError, load_catalog
from gpuinfra.catalog.load import source_problems
from gpuinfra.catalog.models import Purchase, UndatedEntry
from pydantic import ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

DATA_FILE = Path(__file__).parent / "data" / "quotas.yaml"


class QuotaCode(UndatedEntry):
    code: str
    name: str
    purchase: Purchase
    scope: Literal["account", "organization"] = "account"
    families: list[str]


class QuotaUnknown(UndatedEntry):
    """No cited source names the quota that counts this family's purchases (a check must fail closed)."""

    family: str
    purchase: Purchase
    reason: str


@dataclass(frozen=True)
class QuotaBook:
    codes: tuple[QuotaCode, ...]
    unknowns: tuple[QuotaUnknown, ...]

    @cached_property
    def _by_family(self) -> dict[tuple[str, Purchase, str], QuotaCode]:
        return {(f, q.purchase, q.scope): q for q in self.codes for f in q.families}

    def code(self, family: str, purchase: Purchase, scope: str = "account") -> QuotaCode | None:
        return self._by_family.get((family, purchase, scope))

    def unknown(self, family: str, purchase: Purchase) -> QuotaUnknown | None:
        return next((u for u in self.unknowns if u.family == family and u.purchase == purchase), None)

    def name(self, code: str) -> str | None:
        return next((q.name for q in self.codes if q.code == code), None)


def problems(book: QuotaBook, catalog: Catalog) -> Iterator[str]:
    """What makes the file disagree with the shared catalog: a source sources.yaml does not list (or a date not its
    source's), and an EC2 family (every family of a type not on premises) without a code or a statement for each way
    it is bought."""
    yield from source_problems((*book.codes, *book.unknowns), catalog.sources)
    for family in sorted({i.family for i in catalog.instance_types if not i.onprem}):
        fam = catalog.family(family)
        block: list[Purchase] = ["capacity_block"] if fam and fam.capacity_blocks else []
        needed: list[Purchase] = ["on_demand", "spot", *block]
        for purchase in needed:
            if book.code(family, purchase) is None and book.unknown(family, purchase) is None:
                yield f"family {family} has no {purchase} quota code and no statement that none is known"


def read_book(path: Path = DATA_FILE) -> QuotaBook:
    """The file's codes and statements, unchecked (quota_book checks them against the catalog)."""
    try:
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
        return QuotaBook(
            codes=tuple(QuotaCode.model_validate(row) for row in data["codes"]),
            unknowns=tuple(QuotaUnknown.model_validate(row) for row in data["unknown"]),
        )
    except (ValidationError, KeyError, TypeError, OSError, YAMLError) as exc:
        raise CatalogError(f"bundled catalog is invalid: {path.name}: {exc}") from exc


@cache
def quota_book() -> QuotaBook:
    """The bundled quota codes, read and checked once per process (the catalog never changes at run time)."""
    book = read_book()
    found = list(problems(book, load_catalog()))
    if found:
        raise CatalogError(f"bundled catalog is inconsistent: {DATA_FILE.name}:\n  " + "\n  ".join(found))
    return book


__all__ = ["DATA_FILE", "QuotaBook", "QuotaCode", "QuotaUnknown", "problems", "quota_book", "read_book"]
