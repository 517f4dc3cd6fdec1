"""Wall-clock days, GPU-hours and cost per run, computed by hand."""

from __future__ import annotations

import random
from collections.abc import Callable
from decimal import Decimal

import pytest
from gpuinfra.plan.restart import RestartParts
from gpuinfra.plan.runtime import RunInputs, plan_run, run_point

DERIVED = RestartParts(
    replacement_seconds=40.0,
    warmup_seconds=40.0,
    checkpoint_gb=1120.0,
    filesystem_read_gb_s=100.0,
    node_network_gb_s=12.5,
)


def inputs(**over: object) -> RunInputs:
    base: dict[str, object] = dict(
        tokens=1e12,
        active_parameters=70e9,
        flops=6 * 70e9 * 1e12,
        precision="bf16",
        peak_tflops=989,
        peak_source="nvidia-h100-datasheet",
        mfu=0.45,
        mfu_source="test",
        scaling_per_doubling=0.93,
        scaling_source="test",
        gpus_per_node=8,
        write_seconds=96.0,
        interval_minutes=150.0,
        restart_minutes=30.0,
        node_mtbf_hours=5000.0,
        spot_interruption_rate_monthly=0.2,
        capacity="spot",
        on_demand_base=4,
    )
    base.update(over)
    return RunInputs.model_validate(base)


def test_llama70b_1t_tokens_on_16_p5_by_hand() -> None:
    # Compute: 6 x 70e9 x 1e12 = 4.2e23 FLOPs (Kaplan et al. 2020) at 128 x 989e12 x 0.45 x 0.93^4 FLOP/s.
    rate = 128 * 989e12 * 0.45 * 0.93**4
    compute_h = 4.2e23 / rate / 3600
    # Goodput (plan/checkpoint.py's first-order loss plus R/M): M = 1 / (16/5000 + 12 x 0.2/730) hours.
    m = 1 / (16 / 5000 + 12 * 0.2 / 730)
    share = 1 - (96 / 3600) / 2.5 - 2.5 / (2 * m) - 0.5 / m
    point = run_point(inputs(), 16, lambda n: Decimal(10) * n)
    assert point.compute_days == pytest.approx(compute_h / 24)
    assert point.goodput == pytest.approx(share)
    assert point.days == pytest.approx(compute_h / share / 24)
    assert point.days == pytest.approx(116.6, abs=0.1)
    assert point.gpu_hours == pytest.approx(128 * compute_h / share)
    assert point.cost_usd == pytest.approx(Decimal(160 * compute_h / share), abs=1)


def test_doubling_the_nodes_is_less_than_twice_as_fast() -> None:
    plan = plan_run(inputs(), 16, None, lambda n: Decimal(10) * n, lambda n: True, 64)
    assert plan.at_spec.days and plan.doubled.days
    speed = plan.at_spec.days / plan.doubled.days
    # 2 x 0.93 = 1.86 from scaling; the larger cluster is also interrupted more often, so a little less.
    assert 1.8 < speed < 1.86


def test_fewest_nodes_that_meet_the_target() -> None:
    # Perfect scaling, no failures, no checkpoint cost: one node needs 10 days, so 3 days needs ceil(10/3) = 4.
    flops = 8 * 1000e12 * 0.5 * 86400 * 10
    run = inputs(
        flops=flops,
        peak_tflops=1000,
        mfu=0.5,
        scaling_per_doubling=1.0,
        write_seconds=0.0,
        interval_minutes=60.0,
        restart_minutes=0.0,
        node_mtbf_hours=1e15,
        capacity="on_demand",
    )
    plan = plan_run(run, 2, 3.0, lambda n: Decimal(1) * n, lambda n: True, 16)
    assert plan.meets_target is not None and plan.meets_target.nodes == 4
    assert plan.meets_target.days == pytest.approx(2.5)
    assert plan.at_spec.days == pytest.approx(5.0)


def test_nodes_where_the_model_does_not_fit_are_never_proposed() -> None:
    plan = plan_run(inputs(), 16, 60.0, lambda n: Decimal(10) * n, lambda n: n >= 12, 64)
    assert plan.cheapest is not None and plan.cheapest.nodes >= 12
    assert plan.half is None  # 8 nodes do not fit


def test_without_checkpointing_no_days_are_planned() -> None:
    point = run_point(inputs(write_seconds=None, interval_minutes=None), 16, lambda n: None)
    assert point.days is None and point.cost_usd is None


def _swept(
    run: RunInputs, target: float | None, price: Callable[[int], Decimal | None], fits: Callable[[int], bool], most: int
) -> tuple[int | None, int | None]:
    """The cheapest and the first-to-meet node counts by brute force: every count, fitting ones only."""
    points = [run_point(run, n, price) for n in range(1, most + 1) if fits(n)]
    priced = [(p.cost_usd, p.nodes) for p in points if p.cost_usd is not None]
    meets = next((p.nodes for p in points if target is not None and p.days and p.days <= target), None)
    return (min(priced)[1] if priced else None), meets


def test_the_bounded_sweep_finds_what_sweeping_every_count_finds() -> None:
    # plan_run stops early when given the lowest per-node rate; its answers must be those of a full sweep
    # (a floor three times too high fails this: it stops before the cheapest count).
    rng = random.Random(20261203)
    stopped_early = 0
    for _ in range(60):
        capacity = rng.choice(["spot", "on_demand", "capacity_block"])
        od, spot, base = Decimal(rng.choice([40, 55, 98])), Decimal(rng.choice([12, 30, 39])), rng.choice([0, 2, 8])
        run = inputs(
            capacity=capacity,
            on_demand_base=base,
            scaling_per_doubling=rng.choice([0.6, 0.9, 0.93, 1.0]),
            node_mtbf_hours=rng.choice([200.0, 5000.0, 50000.0]),
            spot_interruption_rate_monthly=rng.choice([0.05, 0.2, 2.0]),
            interval_minutes=rng.choice([30.0, 150.0]),
            flops=rng.choice([4.2e22, 4.2e23, 4.2e24]),
            # a derived restart (plan/restart.py) must keep the early stop safe too: its read time falls with the
            # nodes while their network is the cap
            **rng.choice([{}, {"restart_minutes": None, "restart_parts": DERIVED}]),
        )
        asked: list[int] = []

        def price(
            n: int,
            capacity: str = capacity,
            od: Decimal = od,
            spot: Decimal = spot,
            base: int = base,
            asked: list[int] = asked,
        ) -> Decimal:
            asked.append(n)
            return od * n if capacity != "spot" else od * min(base, n) + spot * max(0, n - base)

        least = rng.choice([1, 3, 12])

        def fits(n: int, least: int = least) -> bool:
            return n >= least

        target, most = rng.choice([None, 5.0, 60.0, 400.0]), rng.choice([64, 256])
        plan = plan_run(run, 16, target, price, fits, most, min(od, spot) if capacity == "spot" else od)
        found = (plan.cheapest.nodes if plan.cheapest else None, plan.meets_target.nodes if plan.meets_target else None)
        stopped_early += max(asked, default=0) < most
        assert found == _swept(run, target, price, fits, most)
    assert stopped_early >= 20  # the bound does cut the sweep short, not only agree with it


def test_the_plan_shows_goodput_by_restart_time() -> None:
    # At 16 nodes, M = 1 / (16/5000 + 12 x 0.2/730) hours; goodput = 1 - C/T - T/2M - R/M for R of 5 to 60 min.
    m = 1 / (16 / 5000 + 12 * 0.2 / 730)
    plan = plan_run(inputs(), 16, None, lambda n: Decimal(10) * n, lambda n: True, 64)
    by_r = {p.restart_minutes: p for p in plan.restart_sensitivity}
    assert sorted(by_r) == [5.0, 15.0, 30.0, 60.0]
    for minutes, point in by_r.items():
        assert point.goodput == pytest.approx(1 - (96 / 3600) / 2.5 - 2.5 / (2 * m) - minutes / 60 / m)
    assert by_r[30.0].days == pytest.approx(plan.at_spec.days)  # the spec's own restart time
    assert by_r[60.0].days is not None and by_r[5.0].days is not None and by_r[60.0].days > by_r[5.0].days
