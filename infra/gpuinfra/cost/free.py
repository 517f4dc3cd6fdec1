"""Resource types with no charge of their own (catalog/data/free.yaml, each row with a source): asked by every
cloud's price book for its own types, and by the cost stage for types no cloud owns (Kubernetes objects)."""

from __future__ import annotations

from functools import cached_property, lru_cache

from gpuinfra.catalog import Catalog
from gpuinfra.catalog.load import DATA_DIR, CatalogError
from gpuinfra.catalog.models import Entry


class FreeType(Entry):
    """A resource type with no charge of its own (free.yaml)."""

    type: str


@lru_cache(maxsize=1)
def free_types() -> tuple[FreeType, ...]:
    from ruamel.yaml import YAML

    rows = YAML(typ="safe").load((DATA_DIR / "free.yaml").read_text(encoding="utf-8"))["free"]
    return tuple(FreeType.model_validate(row) for row in rows)


class FreeTypes:
    """free.yaml against the catalog's sources: a row citing an unknown source is refused."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        unknown = sorted({f.source for f in free_types()} - set(catalog.sources))
        if unknown:
            raise CatalogError(f"free.yaml cites unknown sources: {', '.join(unknown)}")

    @cached_property
    def _free_exact(self) -> dict[str, FreeType]:
        return {f.type: f for f in free_types() if not f.type.endswith("/*")}

    @cached_property
    def _free_modules(self) -> dict[str, FreeType]:
        return {f.type[:-1]: f for f in free_types() if f.type.endswith("/*")}

    def free(self, type_: str) -> FreeType | None:
        found = self._free_exact.get(type_)
        if found is None and "/" in type_:
            found = self._free_modules.get(type_.split("/", 1)[0] + "/")
        return found


__all__ = ["FreeType", "FreeTypes", "free_types"]
