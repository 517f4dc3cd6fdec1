"""Racks: how many nodes fit under a rack's power budget, whether its cooling carries them, and
what the facility draws once PUE is counted."""

from __future__ import annotations

import math

from gpuinfra.plan.memory import Plain


class Rack(Plain):
    index: int
    nodes: int
    it_kw: float


class RackLayout(Plain):
    node_kw: float
    nodes_per_rack: int
    """Most nodes a rack holds under its power budget (0: one node exceeds it)."""
    racks: list[Rack]
    max_rack_kw: float
    power_budget_kw: float
    cooling: str
    cooling_limit_kw: float
    it_kw: float
    pue: float
    facility_kw: float
    """IT power x PUE: what the site must supply, cooling included."""

    @property
    def within_cooling(self) -> bool:
        return self.max_rack_kw <= self.cooling_limit_kw + 1e-9


def rack_layout(
    node_count: int,
    node_kw: float,
    power_budget_kw: float,
    cooling: str,
    cooling_limit_kw: float,
    pue: float,
    max_nodes_per_rack: int | None = None,
) -> RackLayout:
    """Spread nodes evenly over the fewest racks that keep each under its power budget."""
    per_rack = math.floor(power_budget_kw / node_kw + 1e-9)
    if max_nodes_per_rack is not None:
        per_rack = min(per_rack, max_nodes_per_rack)
    racks: list[Rack] = []
    if per_rack > 0:
        count = math.ceil(node_count / per_rack)
        base, extra = divmod(node_count, count)
        for i in range(count):
            nodes = base + (1 if i < extra else 0)
            # Built from numbers already checked: skip validation (a 1,024-node cluster has 256 racks).
            racks.append(Rack.model_construct(index=i, nodes=nodes, it_kw=round(nodes * node_kw, 3)))
    it_kw = round(node_count * node_kw, 3)
    return RackLayout(
        node_kw=node_kw,
        nodes_per_rack=per_rack,
        racks=racks,
        max_rack_kw=max((r.it_kw for r in racks), default=node_kw),
        power_budget_kw=power_budget_kw,
        cooling=cooling,
        cooling_limit_kw=cooling_limit_kw,
        it_kw=it_kw,
        pue=pue,
        facility_kw=round(it_kw * pue, 3),
    )


class NodePlacement(Plain):
    """Where one node sits: the labels its Kubernetes node gets."""

    node: str
    rack: int
    cooling_loop: int
    power_domain: int


def place_nodes(
    names: list[str], racks: list[Rack], racks_per_cooling_loop: int, racks_per_power_domain: int
) -> list[NodePlacement]:
    """Nodes fill racks in order (the same order as the Slurm topology's hostlists)."""
    placements, names_left = [], iter(names)
    for rack in racks:
        for _ in range(rack.nodes):
            placements.append(
                NodePlacement(
                    node=next(names_left),
                    rack=rack.index,
                    cooling_loop=rack.index // racks_per_cooling_loop,
                    power_domain=rack.index // racks_per_power_domain,
                )
            )
    return placements


__all__ = ["NodePlacement", "Rack", "RackLayout", "place_nodes", "rack_layout"]
