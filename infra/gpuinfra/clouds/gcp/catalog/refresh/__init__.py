"""`gpuinfra catalog refresh --cloud gcp`: Google's machine-type zones and G2 prices from the Compute Engine API and
the Cloud Billing Catalog, or from recorded responses laid out by their URLs (client.py)."""

from gpuinfra.clouds.gcp.catalog.refresh.run import GcpRefreshResult, refresh, run, summary

__all__ = ["GcpRefreshResult", "refresh", "run", "summary"]
