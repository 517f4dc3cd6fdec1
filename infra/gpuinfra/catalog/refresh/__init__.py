"""`gpuinfra catalog refresh`: rebuild the catalog's data files from AWS's public files (the Price List bulk offer
files, the Spot Instance Advisor data) or from recorded excerpts of them laid out the same way."""

from gpuinfra.catalog.refresh.run import RefreshResult, refresh
from gpuinfra.catalog.refresh.source import Source

__all__ = ["RefreshResult", "Source", "refresh"]
