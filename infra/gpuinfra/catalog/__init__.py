"""The hardware and price catalog: cited data files under data/, loaded once into a `Catalog`."""

from gpuinfra.catalog.catalog import Catalog, SpotDiscount
from gpuinfra.catalog.load import CatalogError, load_catalog
from gpuinfra.catalog.models import InstanceType, Purchase

__all__ = ["Catalog", "CatalogError", "InstanceType", "Purchase", "SpotDiscount", "load_catalog"]
