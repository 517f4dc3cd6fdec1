"""The failover table and failover-short: what each region serves at peak with the largest other region failed
over to it, and the error (suppressible, an accepted risk) when a maximum cannot take it.

Hand figures for chat-serve with failover: none (1.5 requests/s a replica everywhere; peaks 24, 14, 12, 6 = 56):
- us-east-1 takes us-west-2 (14): 38 requests/s = 25.3 -> 26 replicas; max 18 serves 27: short 11.
- us-west-2 takes us-east-1 (24): 38 -> 26; max 12 serves 18: short 20 requests/s, 26 - 12 = 14 replicas (the
  review's "about 38 rps to us-west-2, whose maximum is 18 rps").
- eu-central-1 takes 24: 36 -> 24; max 10 serves 15: short 21.
- ap-northeast-1 takes 24: 30 -> 20; max 6 serves 9: short 21.
- us-east-1 lost: the survivors' maxima 12 + 10 + 6 = 28 replicas serve 42 of 56 requests/s (short 14).
"""

from __future__ import annotations

from gpuinfra.catalog import load_catalog
from gpuinfra.plan import InferencePlan
from gpuinfra.plan.figures import plan_figures
from gpuinfra.report.build.stack import inference_summary
from helpers import checked, rules_fired


def _plan(**spec: object) -> tuple[InferencePlan, set[str], list]:  # type: ignore[type-arg]
    result = checked("chat-serve", spec=dict(spec) or None)
    assert isinstance(result.plan, InferencePlan)
    return result.plan, rules_fired(result), result.findings


def test_without_failover_sizing_each_region_is_short_by_hand_figures() -> None:
    plan, rules, findings = _plan(failover="none")
    got = {r.region: (r.takes_from, r.load_rps, r.needed_replicas, r.max_replicas, r.short_rps) for r in plan.failover}
    assert got == {
        "us-east-1": ("us-west-2", 38, 26, 18, 11),
        "us-west-2": ("us-east-1", 38, 26, 12, 20),
        "eu-central-1": ("us-east-1", 36, 24, 10, 21),
        "ap-northeast-1": ("us-east-1", 30, 20, 6, 21),
    }
    east_lost = next(x for x in plan.fleet_losses if x.lost == "us-east-1")
    assert (east_lost.survivors_capacity_rps, east_lost.demand_rps, east_lost.short_rps) == (42, 56, 14)
    assert "failover-short" in rules
    west = next(f for f in findings if f.rule == "failover-short" and "us-west-2:" in f.message)
    assert str(west.level) == "error"
    assert west.path == ("regions", 1, "max_replicas")
    assert "short by 20 requests/s (14 replicas)" in west.message


def test_the_default_sizes_every_region_for_the_loss() -> None:
    plan, rules, _ = _plan()
    assert all(r.short_rps == 0 and r.needed_replicas <= r.max_replicas for r in plan.failover)
    assert all(x.short_rps == 0 for x in plan.fleet_losses)
    assert "failover-short" not in rules


def test_failover_short_is_an_error_a_spec_may_accept() -> None:
    _, rules, findings = _plan(failover="none", suppress=["failover-short"])
    assert "failover-short" not in rules
    assert "unknown-suppression" not in rules
    # ... while an error that is not registered suppressible stays refused as a suppression.
    _, rules, findings = _plan(failover="none", suppress=["failover-short", "quota-short"])
    refused = [f for f in findings if f.rule == "unknown-suppression"]
    assert [f.path for f in refused] == [("suppress", 1)]


def test_the_report_and_the_review_carry_the_table() -> None:
    plan, _, _ = _plan(failover="none")
    section = next(s for s in inference_summary(plan, load_catalog().engine("vllm")) if s.title.startswith("Failover"))
    rows = {row[0]: row for row in section.rows}
    assert rows["us-west-2"][2:] == ["us-east-1", "38", "26", "12", "18", "20"]
    assert "us-east-1 lost: the survivors serve 42 of the fleet's 56 requests/s at their maxima (short by 14)" in (
        section.notes
    )
    figures = plan_figures(plan)
    headroom = figures["failover us-west-2: headroom with us-east-1 lost"]
    assert headroom.unit == "rps" and float(headroom.value) == -20.0  # type: ignore[arg-type]
