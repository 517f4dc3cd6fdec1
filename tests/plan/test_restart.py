"""The restart per interruption from its parts (plan/restart.py), computed by hand, and what it does to goodput."""

from __future__ import annotations

from decimal import Decimal
from itertools import pairwise

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.plan.checkpoint import checkpoint_plan
from gpuinfra.plan.economics import restart_parts
from gpuinfra.plan.restart import RestartParts, restart_time
from gpuinfra.plan.runtime import RunInputs, goodput, plan_run

CATALOG = load_catalog()


def parts(**over: object) -> RestartParts:
    base: dict[str, object] = dict(
        replacement_seconds=40.0,
        warmup_seconds=40.0,
        checkpoint_gb=1120.0,
        filesystem_read_gb_s=11.7,
        node_network_gb_s=400.0,
    )
    base.update(over)
    return RestartParts.model_validate(base)


def test_parts_add_up_by_hand() -> None:
    # 16 p5 nodes (128 GPUs): detection 300 s (SlurmdTimeout) + 40 s boot + 128 x 30/12,288 s start
    # + 1,120 GB / 11.7 GB/s read + 40 s warm-up.
    r = restart_time(parts(), 16, 8)
    assert r.process_start_seconds == pytest.approx(128 * 30 / 12288)
    assert r.checkpoint_read_seconds == pytest.approx(1120 / 11.7)
    assert r.total_seconds == pytest.approx(300 + 40 + 128 * 30 / 12288 + 1120 / 11.7 + 40)
    assert not r.measured


def test_megascale_start_points() -> None:
    # MegaScale: 5 s on 2,048 GPUs, ~30 s on 12,288.
    assert restart_time(parts(), 256, 8).process_start_seconds == pytest.approx(5.0)
    assert restart_time(parts(), 1536, 8).process_start_seconds == pytest.approx(30.0)


def test_few_nodes_read_at_their_network_not_the_file_system() -> None:
    # Two nodes of 12.5 GB/s (100 Gb/s) each cannot read faster than 25 GB/s from a 100 GB/s file system.
    r = restart_time(parts(filesystem_read_gb_s=100.0, node_network_gb_s=12.5), 2, 8)
    assert r.read_gb_s == 25.0
    assert r.checkpoint_read_seconds == pytest.approx(1120 / 25)
    assert restart_time(parts(filesystem_read_gb_s=100.0, node_network_gb_s=12.5), 16, 8).read_gb_s == 100.0


def test_restart_times_nodes_never_falls() -> None:
    # The run sweep stops early on the promise that R x nodes (lost node-time per unit failure rate) never falls.
    p = parts(filesystem_read_gb_s=100.0, node_network_gb_s=12.5)
    lost = [restart_time(p, n, 8).total_seconds * n for n in range(1, 300)]
    assert all(b >= a for a, b in pairwise(lost))


def run(**over: object) -> RunInputs:
    base: dict[str, object] = dict(
        tokens=1e12,
        active_parameters=70e9,
        flops=6 * 70e9 * 1e12,
        precision="bf16",
        peak_tflops=989,
        peak_source="test",
        mfu=0.48,
        mfu_source="test",
        scaling_per_doubling=0.985,
        scaling_source="test",
        gpus_per_node=8,
        write_seconds=96.0,
        interval_minutes=150.0,
        restart_parts=parts(),
        node_mtbf_hours=5000.0,
        spot_interruption_rate_monthly=0.0,
        capacity="on_demand",
        on_demand_base=0,
    )
    base.update(over)
    return RunInputs.model_validate(base)


def test_goodput_uses_the_derived_restart_at_each_node_count() -> None:
    for nodes in (16, 512):
        m = 5000 / nodes
        r_h = (300 + 40 + nodes * 8 * 30 / 12288 + 1120 / 11.7 + 40) / 3600
        assert goodput(run(), nodes) == pytest.approx(1 - (96 / 3600) / 2.5 - 2.5 / (2 * m) - r_h / m)


def test_a_measured_restart_overrides_the_parts() -> None:
    m = 5000 / 16
    assert goodput(run(restart_minutes=30.0), 16) == pytest.approx(1 - (96 / 3600) / 2.5 - 2.5 / (2 * m) - 0.5 / m)
    plan = plan_run(run(restart_minutes=30.0), 16, None, lambda n: Decimal(1) * n, lambda n: True, 32)
    assert plan.restart is not None and plan.restart.measured and plan.restart.total_seconds == 1800


def test_the_plan_shows_the_parts_at_the_spec_nodes() -> None:
    plan = plan_run(run(), 16, None, lambda n: Decimal(1) * n, lambda n: True, 32)
    assert plan.restart is not None and plan.restart.nodes == 16
    assert plan.restart.checkpoint_read_seconds == pytest.approx(1120 / 11.7)


def test_without_a_checkpoint_there_is_nothing_to_restart_from() -> None:
    info = CATALOG.instance("p5.48xlarge")
    assert info is not None
    assert restart_parts(CATALOG, info, None) is None
    assert goodput(run(restart_parts=None), 16) is None


def test_node_network_is_the_catalog_baseline() -> None:
    info = CATALOG.instance("p5.48xlarge")
    assert info is not None
    ckpt = checkpoint_plan(1120.0, 11.7, 16, 0, 5000.0, 0.0, 150.0)
    p = restart_parts(CATALOG, info, ckpt)
    assert p is not None
    assert p.node_network_gb_s == info.network_baseline_gbps / 8 == 400.0  # 3,200 Gb/s EFA
    assert p.filesystem_read_gb_s == 11.7 and p.checkpoint_gb == 1120.0
