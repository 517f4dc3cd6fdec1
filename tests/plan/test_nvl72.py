"""A GB200 NVL72 rack plan end to end: 18 compute trays of 4 GPUs a rack, one 72-GPU NVLink domain, ~120 kW of
direct liquid cooling (catalog rows and sources: instances.json gb200-nvl72.tray, power.yaml, accelerators.yaml)."""

from __future__ import annotations

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.plan import TrainingPlan
from gpuinfra.plan.flops import scaling_efficiency
from gpuinfra.plan.layout import Budget, Layout, Shape, layout_memory
from gpuinfra.plan.memory import MIB
from gpuinfra.plan.racks import rack_layout
from gpuinfra.plan.runtime import efficiency_at
from helpers import checked

CATALOG = load_catalog()
TRAYS = 36
"""Two NVL72 racks."""


def nvl72_spec() -> dict[str, object]:
    """The on-premises example moved onto two GB200 NVL72 racks: 36 trays, 4 ConnectX-7 a tray, TP 8 (two trays,
    inside the rack's NVLink domain), racks of 18 trays under the direct-liquid cap."""
    inventory = [
        {"node": f"gb-{i:03d}", "rack": f"r{i // 18:02d}", "cooling_loop": "loop-a", "power_domain": f"pdu-{i // 18}"}
        for i in range(TRAYS)
    ]
    return {
        "compute.instance_type": "gb200-nvl72.tray",
        "compute.node_count": TRAYS,
        "onprem.inventory": inventory,
        "interconnect.hcas": ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"],
        "interconnect.netdevs": ["ibp3s0", "ibp4s0", "ibp5s0", "ibp6s0"],
        "racks.power_budget_kw": 125,
        "racks.max_nodes_per_rack": 18,
    }


@pytest.fixture(scope="module")
def plan() -> TrainingPlan:
    result = checked("llm-train-onprem", nvl72_spec())
    assert isinstance(result.plan, TrainingPlan)
    return result.plan


def test_two_racks_of_18_trays_fit_the_liquid_cooling_cap(plan: TrainingPlan) -> None:
    # 18 trays x 6.67 kW (the rack's 120 kW / 18) = 120.06 kW a rack, under a 125 kW budget and the 132 kW
    # direct-liquid cap; the old 80 kW cap would have refused the rack.
    assert plan.racks is not None
    assert [r.nodes for r in plan.racks.racks] == [18, 18]
    assert plan.racks.max_rack_kw == pytest.approx(18 * 6.67)
    assert plan.racks.within_cooling
    assert not rack_layout(18, 6.67, 125, "direct_liquid", 80, 1.15, 18).within_cooling
    assert plan.gpus == 144


def test_tensor_parallel_spans_trays_inside_the_nvlink_domain(plan: TrainingPlan) -> None:
    # TP 8 over two 4-GPU trays is legal inside the 72-GPU domain; on a plain 4-GPU node it is not.
    assert plan.layout is not None and not plan.layout.problems
    shape = Shape(
        parameters=70e9, layers=80, hidden_size=8192, attention_heads=64, sequence_length=8192, micro_batch_size=1
    )
    budget = Budget(
        precision="bf16", optimizer="adamw", gpus=144, gpus_per_node=4, gpu_bytes=177383 * MIB, reserve_fraction=0.10
    )
    alone = layout_memory(Layout(tensor=8, pipeline=1, zero_stage=3, recompute="selective"), shape, budget)
    assert any("NVLink domain" in p for p in alone.problems)
    joined = budget.model_copy(update={"nvlink_gpus": 72})
    assert not layout_memory(Layout(tensor=8, pipeline=1, zero_stage=3, recompute="selective"), shape, joined).problems


def test_scaling_loses_nothing_inside_a_rack(plan: TrainingPlan) -> None:
    # 36 trays are two NVLink domains: one doubling across the fabric, 0.985; 18 trays are one domain: no loss.
    assert scaling_efficiency(18, 0.985, 18) == 1.0
    assert scaling_efficiency(36, 0.985, 18) == pytest.approx(0.985)
    # With an architecture the step model (plan/throughput.py) prices each count: one rack is its reference;
    # without it the per-doubling default (above) applies.
    run = plan.run
    assert run is not None and run.inputs.step is not None
    assert efficiency_at(run.inputs, 18) == pytest.approx(1.0)
    assert efficiency_at(run.inputs, 36) <= 1.0


def test_gb200_figures_come_from_the_catalog() -> None:
    # NVIDIA's NVL72 table: BF16 360 PF and FP8 720 PF with sparsity over 72 GPUs -> 2.5 and 5 PF dense each.
    peak = CATALOG.accelerator_peak("GB200")
    assert peak is not None and peak.dense_tflops["bf16"] == 360_000 / 72 / 2 and peak.dense_tflops["fp8"] == 5000
    tray = CATALOG.instance("gb200-nvl72.tray")
    assert tray is not None and tray.onprem and tray.nvlink_gpus == 72 and tray.nodes_per_nvlink_domain == 18
    power = CATALOG.node_power("gb200-nvl72.tray")
    assert power is not None and power.max_kw * 18 == pytest.approx(120, abs=0.1)
