"""The hardware and price catalog: cited data files under data/, loaded once into a `Catalog`."""

from .catalog import Catalog, SpotDiscount
from .load import CatalogError, load_catalog
from .models import InstanceType, Purchase

__all__ = ["Catalog", "CatalogError", "InstanceType", "Purchase", "SpotDiscount", "load_catalog"]
