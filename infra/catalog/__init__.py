"""The hardware and price catalog: cited data files under data/, loaded once into a `Catalog`."""

from infra.catalog.catalog import Catalog, SpotDiscount
from infra.catalog.load import CatalogError, load_catalog
from infra.catalog.models import InstanceType, Purchase

__all__ = ["Catalog", "CatalogError", "InstanceType", "Purchase", "SpotDiscount", "load_catalog"]
