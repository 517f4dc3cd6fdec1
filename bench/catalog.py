"""`python -m bench.catalog`: the catalog's cold load (parse every data file, validate, cross-check) against
its target. Exits 1 when the median misses it. Separate from `make bench`'s preview series so it can run in
a second; it measures in-process, the cache cleared before each sample."""

from __future__ import annotations

import gc
import statistics
import sys
import time

from gpuinfra.catalog import load_catalog

CATALOG_LOAD_SECONDS = 0.100
"""Issue 18: the catalog loads in under 100 ms (2-core machine)."""


def samples(runs: int = 15) -> list[float]:
    """Cold loads, seconds: the cache cleared and garbage collected before each (`make bench` reports them too)."""
    out = []
    for _ in range(runs):
        load_catalog.cache_clear()
        gc.collect()
        start = time.perf_counter()
        load_catalog()
        out.append(time.perf_counter() - start)
    load_catalog.cache_clear()
    return out


def main(runs: int = 15) -> int:
    samples_ = samples(runs)
    median = statistics.median(samples_)
    ok = median < CATALOG_LOAD_SECONDS
    print(
        f"catalog load: median {median * 1000:.1f} ms ({min(samples_) * 1000:.1f}-{max(samples_) * 1000:.1f}) "
        f"over {runs} runs; target < {CATALOG_LOAD_SECONDS * 1000:.0f} ms: {'met' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
