"""Google's catalog: G2 machine types, their zones, prices and quota metrics (clouds/gcp/catalog/data/), read once."""

from gpuinfra.clouds.gcp.catalog.book import HOURS_PER_MONTH, GcpBook, Price, QuotaMetric, gcp_book, gcp_catalog

__all__ = ["HOURS_PER_MONTH", "GcpBook", "Price", "QuotaMetric", "gcp_book", "gcp_catalog"]
