"""A region on another accelerator gives its own measured throughput (regions[].throughput_rps_per_replica): the
planner sizes, prices and checks that region with it, and every other region keeps the fleet's figure.

chat-serve serves on L4 (g6.xlarge, 1.5 requests/s measured) and on L40S in ap-northeast-1 (g6e.xlarge). Hand
figures: 250 output tokens a request; g6e.xlarge ap-northeast-1 on-demand $2.699/h (catalog source `van-od`, as
in test_serving_economics.py). The L40S ceilings at the example's shape (36 sequences, fp8 weights 8 GB and KV
65,536 B a token over a mean context of 1,125 tokens, 864 GB/s, 733 fp8 TFLOPS): calibrated (60% bandwidth, the
fp8 matmul efficiency 0.560) read 20.55 ms + prefill 5.61 ms -> 36 / 26.17 ms = 1,376 tokens/s = 5.50 requests/s;
physical (100%) read
12.33 ms + prefill 3.14 ms -> 36 / 15.47 ms = 2,326 tokens/s = 9.31 requests/s.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from gpuinfra.plan import InferencePlan
from helpers import checked

APNE1 = 3  # index of ap-northeast-1 in the example's regions
L40S_RPS = 4.0


def _plan(rps: float | None) -> InferencePlan:
    plan = checked("chat-serve", spec={f"regions[{APNE1}].throughput_rps_per_replica": rps}).plan
    assert isinstance(plan, InferencePlan) and plan.economics is not None
    return plan


@pytest.fixture(scope="module")
def own() -> InferencePlan:
    return _plan(L40S_RPS)


def test_the_region_is_sized_at_its_own_figure(own: InferencePlan) -> None:
    east, apne1 = own.regions[0], own.regions[APNE1]
    assert apne1.region == "ap-northeast-1" and apne1.instance_type == "g6e.xlarge"
    # peak 6 requests/s at 4.0 a replica: ceil(1.5) = 2 replicas (at the L4's 1.5 it was ceil(4.0) = 4)
    assert apne1.demand_replicas == 2 and apne1.planned_replicas == 2
    assert _plan(None).regions[APNE1].demand_replicas == 4
    # us-east-1 keeps the fleet's 1.5: peak 24 / 1.5 = 16
    assert east.demand_replicas == 16


def test_the_regions_tokens_and_cost_per_million_use_its_own_figure(own: InferencePlan) -> None:
    assert own.economics is not None
    rows = {r.region: r for r in own.economics.regions}
    l40s = rows["ap-northeast-1"]
    assert l40s.tokens_per_s == 4.0 * 250  # 1,000 tokens/s, not the L4's 375
    # $2.699 / (1,000 x 3,600 tokens) x 1e6 = $0.7497 per million (it was $1.999 at 375 tokens/s)
    assert l40s.usd_per_million_tokens == Decimal("2.699") / Decimal(1000 * 3600) * 1_000_000
    assert float(l40s.usd_per_million_tokens or 0) == pytest.approx(0.7497, abs=1e-4)
    assert rows["us-east-1"].tokens_per_s == 1.5 * 250
    # the quantization table is for us-east-1's L4 and keeps its measured rate
    points = {p.precision: p for p in own.economics.quantization}
    assert own.economics.quantization_region == "us-east-1" and points["fp8"].tokens_per_s == 1.5 * 250


def _findings(rps: float, rule: str) -> list[tuple[str, str]]:
    result = checked("chat-serve", spec={f"regions[{APNE1}].throughput_rps_per_replica": rps})
    return [(".".join(map(str, f.path)), f.message) for f in result.findings if f.rule == rule]


def test_a_region_figure_near_its_ceiling_is_warned_about_at_its_own_path() -> None:
    # 5.0 of the L40S's calibrated 5.50 requests/s (1,376 tokens/s / 250) is 91%: above 80%, below the physical 9.31
    ((path, message),) = _findings(5.0, "throughput-near-ceiling")
    assert path == "regions.3.throughput_rps_per_replica"
    assert "5 is 91% of the calibrated ceiling of g6e.xlarge in ap-northeast-1 (5.50 requests/s" in message
    assert not _findings(L40S_RPS, "throughput-near-ceiling")  # 4.0 is 73%


def test_a_region_figure_above_its_physical_bound_is_an_error_at_its_own_path() -> None:
    # 10 requests/s is above the L40S's physical 9.31; the L4 regions' 1.5 stays below theirs
    ((path, message),) = _findings(10.0, "throughput-above-bound")
    assert path == "regions.3.throughput_rps_per_replica"
    assert "10 is above what g6e.xlarge in ap-northeast-1 can do at all" in message
    assert "at most 9.31 requests/s" in message
