"""Racks: every rack under its power budget, and its cooling able to carry what it draws."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.plan import TrainingPlan
from gpuinfra.spec import TrainingSpec
from gpuinfra.validators.base import Failure, Level, rule


@rule(Level.ERROR)
def rack_exceeds_cooling(spec: TrainingSpec, plan: TrainingPlan) -> Iterator[Failure]:
    """Racks draw more than their cooling carries (air tops out around 30 kW per rack)."""
    layout = plan.racks
    if layout is None or not layout.racks or layout.within_cooling:
        return
    fitting = int(layout.cooling_limit_kw // layout.node_kw)
    yield Failure(
        f"racks draw {layout.max_rack_kw:g} kW ({layout.nodes_per_rack} x {layout.node_kw:g} kW nodes) but "
        f"{layout.cooling} cooling carries about {layout.cooling_limit_kw:g} kW per rack",
        ("racks", "cooling"),
        f"write `cooling: direct_liquid` (or immersion) under racks, or `power_budget_kw: {layout.cooling_limit_kw:g}` "
        f"({fitting} node(s) per rack)",
    )


@rule(Level.ERROR)
def node_exceeds_rack_budget(spec: TrainingSpec, plan: TrainingPlan) -> Iterator[Failure]:
    """One node draws more than a rack's whole power budget."""
    layout = plan.racks
    if layout is not None and layout.nodes_per_rack == 0:
        yield Failure(
            f"one {plan.instance_type} draws {layout.node_kw:g} kW, "
            f"more than power_budget_kw {layout.power_budget_kw:g}",
            ("racks", "power_budget_kw"),
            f"write `power_budget_kw: {layout.node_kw:g}` (at least) under racks",
        )


@rule(Level.WARNING)
def rack_power_unknown(spec: TrainingSpec, plan: TrainingPlan) -> Iterator[Failure]:
    """The catalog has no power figure for the node type, so racks cannot be laid out."""
    if plan.racks is None and plan.racks_note:
        yield Failure(
            plan.racks_note,
            ("compute", "instance_type"),
            f"add {spec.compute.instance_type}'s power figure with its source to the catalog's power.yaml "
            "(`gpuinfra catalog` lists what it knows), or lay the racks out by hand and remove `racks`: gpuinfra "
            "will not guess a power figure",
        )


__all__ = ["node_exceeds_rack_budget", "rack_exceeds_cooling", "rack_power_unknown"]
