"""The serving roofline and the cold-start model, against figures computed by hand."""

from __future__ import annotations

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.plan import InferencePlan
from gpuinfra.plan.coldstart import cold_start
from gpuinfra.plan.roofline import (
    decode_step_bytes,
    decode_tokens_per_s_bound,
    in_flight,
    kv_cache_concurrency,
    replica_bound,
)
from helpers import checked


def test_decode_bound_of_the_issue() -> None:
    # One L4 (300 GB/s), 16 GB of weights, 4 sequences of 1,125 tokens at 131,072 B/token:
    # 16e9 + 4 * 131072 * 1125 = 16,589,824,000 B per step; 300e9 / that * 4 = 72.33 tokens/s.
    assert decode_step_bytes(16e9, 4, 131072, 1125) == 16_589_824_000
    assert decode_tokens_per_s_bound(300e9, 16e9, 4, 131072, 1125) == pytest.approx(72.334, abs=1e-3)
    bound = replica_bound(300, 16e9, 131072, 4, 5.6e9, 1000, 250)
    assert bound.batch == 4
    assert bound.requests_per_s == pytest.approx(72.334 / 250, abs=1e-4)
    assert bound.requests_per_s < 2.5 / 8  # the claimed 2.5 is more than 8x the bound


def test_kv_memory_caps_the_batch() -> None:
    # 1 GB of KV cache at 131,072 B/token holds 7,629 tokens: 6 sequences of 1,125 tokens.
    assert kv_cache_concurrency(1e9, 131072, 1125) == 6
    assert replica_bound(300, 16e9, 131072, 64, 1e9, 1000, 250).batch == 6
    assert kv_cache_concurrency(0, 131072, 1125) == 0


def test_littles_law() -> None:
    assert in_flight(2.0, 8.0) == 16.0


def test_cold_start_at_baseline_bandwidth() -> None:
    catalog = load_catalog()
    info = catalog.instance("g6.xlarge")
    assert info is not None and info.network_baseline_gbps == 2.5
    cold = cold_start(info, 16_000_000_000, catalog)
    # 2.5 Gb/s = 0.3125 GB/s (below gp3's 500 MiB/s = 0.524 GB/s): image 12.64 GB -> 40.4 s, weights
    # 16 GB -> 51.2 s; reading 16 GB back from gp3 at 0.524 GB/s -> 30.5 s; boot 40 s, engine start 40 s.
    assert cold.image_pull_seconds == pytest.approx(12.64 / 0.3125)
    assert cold.weights_download_seconds == pytest.approx(51.2)
    assert cold.weights_read_seconds == pytest.approx(16e9 / (500 * 2**20))
    assert cold.total_seconds == pytest.approx(40 + 40.448 + 51.2 + 30.518 + 40, abs=0.01)
    assert cold.resume_seconds == pytest.approx(40 + 30.518 + 40, abs=0.01)
    measured = cold_start(info, 16_000_000_000, catalog, measured_seconds=420)
    assert measured.total_seconds == 420 and measured.measured


def test_the_example_is_realistic_by_its_own_bound() -> None:
    plan = checked("chat-serve").plan
    assert isinstance(plan, InferencePlan)
    for region in plan.regions:
        assert region.bound is not None
        assert region.bound.requests_per_s >= 1.5
        assert region.cold_start_seconds > 150  # minutes-scale, not the old 106 s
