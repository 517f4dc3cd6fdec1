"""failover: n_plus_one sizes each region to take its own peak plus the largest other region's, raising
max_replicas where it is short; the spot split, the quota plan and the report's region section follow.

Hand figures for chat-serve (1.5 requests/s a replica in every region, spot_burst_share 0.5 so half the burst
above min_replicas 2 is on-demand, rounded up):
- us-east-1: peak 24 + largest other (us-west-2) 14 = 38 / 1.5 = 25.3 -> 26 replicas; spec max 18 -> 26.
  Split: base 2, 24 above, 12 on-demand -> 14 on-demand, 12 spot.
- us-west-2: 14 + 24 = 38 -> 26; spec max 12 -> 26 (14 on-demand, 12 spot).
- eu-central-1: 12 + 24 = 36 / 1.5 = 24; spec max 10 -> 24 (base 2, 22 above: 11 + 11 -> 13 on-demand, 11 spot).
- ap-northeast-1: 6 + 24 = 30 / 1.5 = 20; spec max 6 -> 20 (base 2, 18 above: 9 + 9 -> 11 on-demand, 9 spot).
Quota (on-demand G and VT, L-DB2E81BA): every replica may run on-demand (the base group plus the overflow group
that takes the spot share when spot is short), g6.xlarge has 4 vCPUs: us-east-1 18 x 4 = 72 vCPUs without
failover, 26 x 4 = 104 with; plus chat-serve-k8s's nodes at its own failover maximum, (30 + 14) / 2 = 22
g6e.xlarge, and one more for a rolling update's surge pod, x 4 vCPUs = 92, held in the account (org.yaml): 196,
within the 216 granted.
"""

from __future__ import annotations

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.plan import InferencePlan
from gpuinfra.plan.serving import failover_replicas
from gpuinfra.report.build.stack import inference_summary
from helpers import checked, rules_fired

G_ON_DEMAND = "L-DB2E81BA"


@pytest.fixture(scope="module")
def both() -> tuple[InferencePlan, InferencePlan, set[str], set[str]]:
    # n_plus_one is the default (the example writes neither); "none" keeps the spec's maxima.
    plain, sized = checked("chat-serve", spec={"failover": "none"}), checked("chat-serve")
    assert isinstance(plain.plan, InferencePlan) and isinstance(sized.plan, InferencePlan)
    return plain.plan, sized.plan, rules_fired(plain), rules_fired(sized)


def test_each_region_can_take_the_largest_other_regions_peak(both: tuple) -> None:
    _, plan, _, _ = both
    got = {r.region: (r.failover_replicas, r.max_replicas, r.requested_max_replicas) for r in plan.regions}
    assert got == {
        "us-east-1": (26, 26, 18),
        "us-west-2": (26, 26, 12),
        "eu-central-1": (24, 24, 10),
        "ap-northeast-1": (20, 20, 6),
    }
    split = {r.region: (r.max_on_demand, r.max_spot) for r in plan.regions}
    assert split == {"us-east-1": (14, 12), "us-west-2": (14, 12), "eu-central-1": (13, 11), "ap-northeast-1": (11, 9)}


def test_without_failover_the_spec_maximum_stands(both: tuple) -> None:
    plain, _, _, _ = both
    assert [(r.max_replicas, r.failover_replicas, r.requested_max_replicas) for r in plain.regions] == [
        (18, None, None),
        (12, None, None),
        (10, None, None),
        (6, None, None),
    ]


def test_the_quota_plan_counts_the_failover_capacity(both: tuple) -> None:
    plain, plan, _, sized_rules = both

    def own_vcpus(p: InferencePlan) -> int:
        need = next(q for q in p.quotas if q.region == "us-east-1" and q.code == G_ON_DEMAND)
        return need.vcpus - sum(v for _, v in need.held)

    assert own_vcpus(plain) == 72 and own_vcpus(plan) == 104
    need = next(q for q in plan.quotas if q.region == "us-east-1" and q.code == G_ON_DEMAND)
    assert need.vcpus == 196 and need.granted == 216
    assert "quota-short" not in sized_rules
    # Below the failover need (196 held), the same plan is refused.
    short = checked("chat-serve", org={"accounts.ml-inference.quotas.us-east-1.L-DB2E81BA": 195})
    assert "quota-short" in rules_fired(short)


def test_a_maximum_already_large_enough_is_kept() -> None:
    result = checked("chat-serve", spec={"failover": "n_plus_one", "regions[0].max_replicas": 30})
    east = result.plan.regions[0]
    assert (east.failover_replicas, east.max_replicas, east.requested_max_replicas) == (26, 30, None)


def test_the_formula() -> None:
    assert failover_replicas(24, [14, 12, 6], 1.5) == 26
    assert failover_replicas(3, [3], 1.5) == 4  # exactly 4.0: no rounding up past it
    assert failover_replicas(10, [], 1.5) is None  # one region: nowhere to fail over to


def test_the_region_section_shows_the_raised_maximum_and_why(both: tuple) -> None:
    _, plan, _, _ = both
    regions = next(s for s in inference_summary(plan, load_catalog().engine("vllm")) if s.title == "Regions")
    column = regions.columns.index("max")
    assert [row[column] for row in regions.rows] == ["26 (spec 18)", "26 (spec 12)", "24 (spec 10)", "20 (spec 6)"]
    assert regions.notes[0] == (
        "us-east-1: failover needs 26 replicas (its peak plus the largest other region's); max raised from 18"
    )
