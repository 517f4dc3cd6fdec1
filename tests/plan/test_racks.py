"""Rack layout: nodes under the power budget, cooling limits, facility power with PUE."""

from __future__ import annotations

from gpuinfra.plan.racks import rack_layout


def test_dgx_h100_racks_at_44_kw() -> None:
    layout = rack_layout(16, 10.2, 44, "direct_liquid", 80, 1.2)
    assert layout.nodes_per_rack == 4
    assert [r.nodes for r in layout.racks] == [4, 4, 4, 4]
    assert layout.max_rack_kw == 40.8
    assert layout.it_kw == 163.2
    assert layout.facility_kw == 195.84
    assert layout.within_cooling


def test_air_cooling_cannot_carry_40_kw() -> None:
    layout = rack_layout(16, 10.2, 44, "air", 30, 1.5)
    assert layout.max_rack_kw == 40.8
    assert not layout.within_cooling


def test_nodes_spread_evenly() -> None:
    layout = rack_layout(10, 10.2, 44, "direct_liquid", 80, 1.2)
    assert [r.nodes for r in layout.racks] == [4, 3, 3]


def test_max_nodes_per_rack_caps_the_budget() -> None:
    assert rack_layout(8, 6.5, 100, "direct_liquid", 80, 1.2, max_nodes_per_rack=2).nodes_per_rack == 2


def test_node_over_budget_gives_no_racks() -> None:
    layout = rack_layout(4, 14.3, 10, "air", 30, 1.2)
    assert layout.nodes_per_rack == 0 and layout.racks == []
