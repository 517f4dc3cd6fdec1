"""What an EC2 Fleet or a Spot Fleet request may launch at most: its instance types, the instances its target
capacity allows and how it buys them, so cost prices and quotas count it as they do an Auto Scaling group.

Both fleets state a target capacity in units (`targetCapacityUnitType`: units, the default, each override's
`weightedCapacity`, default 1; or vcpu / memory-mib), split between on-demand and spot (EC2 API reference,
CreateFleet TargetCapacitySpecificationRequest; RequestSpotFleet SpotFleetRequestConfigData). The most instances
it launches is the capacity over the smallest unit an instance it may launch brings.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gpuinfra.graph.launchers import Size
from gpuinfra.graph.tokens import EC2_FLEET, SPOT_FLEET
from gpuinfra.graph.views import as_int, mappings, text

FLEET_TYPES = (EC2_FLEET, SPOT_FLEET)


@dataclass(frozen=True)
class FleetBounds:
    instance_types: tuple[str, ...]
    most: int | None
    """The most instances its target capacity allows; None when it cannot be told (unknown types or capacity)."""
    on_demand: int
    """Of `most`, the instances it buys on-demand (the rest spot)."""


def _overrides(props: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    configs = mappings(props.get("launchTemplateConfigs") or props.get("launchTemplateConfig"))
    found = [o for c in configs for o in mappings(c.get("overrides") or c.get("override"))]
    return found + mappings(props.get("launchSpecifications") or props.get("launchSpecification"))


def fleet(
    kind: str, props: Mapping[str, Any], templates: Iterable[Mapping[str, Any]], sizes: Callable[[str], Size | None]
) -> FleetBounds:
    """A fleet's bounds from its inputs and its launch templates (for the type when no override names one)."""
    overrides = _overrides(props)
    types = [t for t in (text(o.get("instanceType")) for o in overrides) if t]
    types = types or [t for t in (text(lt.get("instanceType")) for lt in templates) if t]
    if kind == EC2_FLEET:
        spec = props.get("targetCapacitySpecification") or {}
        total = as_int(spec.get("totalTargetCapacity"), -1)
        on_demand_units = as_int(spec.get("onDemandTargetCapacity"))
        all_on_demand = spec.get("defaultTargetCapacityType") == "on-demand"
        unit_type = spec.get("targetCapacityUnitType") or "units"
    else:
        total = as_int(props.get("targetCapacity"), -1)
        on_demand_units = as_int(props.get("onDemandTargetCapacity"))
        all_on_demand = False
        unit_type = props.get("targetCapacityUnitType") or "units"
    known = [sizes(t) for t in types]
    if total < 0 or not types or any(s is None for s in known):
        return FleetBounds(tuple(types), None, 0)
    per = _smallest_unit(str(unit_type), overrides, [s for s in known if s is not None])
    if per is None:
        return FleetBounds(tuple(types), None, 0)
    most = math.ceil(total / per)
    on_demand = most if all_on_demand else min(most, math.ceil(on_demand_units / per))
    return FleetBounds(tuple(types), most, on_demand)


def _smallest_unit(unit_type: str, overrides: list[Mapping[str, Any]], sizes: list[Size]) -> float | None:
    """The least capacity one instance brings: its weight (units), vCPUs or memory (MiB)."""
    if unit_type == "vcpu":
        return min(s.vcpu for s in sizes) or None
    if unit_type == "memory-mib":
        return min(s.memory_gib * 1024 for s in sizes) or None
    weights = [float(o.get("weightedCapacity") or 1) for o in overrides] or [1.0]
    return min(weights) if min(weights) > 0 else None


__all__ = ["EC2_FLEET", "FLEET_TYPES", "SPOT_FLEET", "FleetBounds", "fleet"]
