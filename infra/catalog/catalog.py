"""The loaded catalog and its lookups. Unknown is `None`, never zero."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property

from infra.catalog.models import (
    AcceleratorPower,
    CoolingLimit,
    Entry,
    FsxCapacity,
    InstanceType,
    NodePower,
    OnDemandPrice,
    Purchase,
    QuotaCode,
    RegionList,
    ServicePrice,
    Source,
    SpotDefault,
    SpotObserved,
    SpotRange,
)


@dataclass(frozen=True)
class SpotDiscount:
    """A spot discount and the catalog entry it came from."""

    discount: Decimal
    entry: Entry


@dataclass(frozen=True)
class Catalog:
    sources: dict[str, Source]
    instance_types: tuple[InstanceType, ...]
    on_demand_prices: tuple[OnDemandPrice, ...]
    spot_default: SpotDefault
    spot_observed: tuple[SpotObserved, ...]
    spot_ranges: tuple[SpotRange, ...]
    quota_codes: tuple[QuotaCode, ...]
    node_powers: tuple[NodePower, ...]
    accelerators: tuple[AcceleratorPower, ...]
    cooling_limits: tuple[CoolingLimit, ...]
    service_prices: tuple[ServicePrice, ...]
    fsx_capacity: FsxCapacity
    region_list: RegionList

    # ---- indexes (built once, on first use)
    @cached_property
    def _instances(self) -> dict[str, InstanceType]:
        return {i.name: i for i in self.instance_types}

    @cached_property
    def _prices(self) -> dict[tuple[str, str], OnDemandPrice]:
        return {(p.instance_type, p.region): p for p in self.on_demand_prices}

    @cached_property
    def _services(self) -> dict[str, ServicePrice]:
        return {s.key: s for s in self.service_prices}

    @cached_property
    def regions(self) -> frozenset[str]:
        return frozenset(self.region_list.codes)

    # ---- lookups
    def instance(self, name: str) -> InstanceType | None:
        return self._instances.get(name)

    def instance_names(self) -> list[str]:
        return sorted(self._instances)

    def on_demand(self, instance_type: str, region: str) -> OnDemandPrice | None:
        return self._prices.get((instance_type, region))

    def spot_discount(self, instance_type: str, region: str) -> SpotDiscount:
        """Most specific known discount: type+region, family+region, family (lowest), default."""
        for obs in self.spot_observed:
            if obs.instance_type == instance_type and obs.region == region:
                return SpotDiscount(obs.discount, obs)
        info = self.instance(instance_type)
        family = info.family if info else instance_type.split(".")[0]
        ranges = [r for r in self.spot_ranges if r.family == family]
        for rng in ranges:
            if rng.region == region:
                return SpotDiscount(rng.discount, rng)
        if ranges:
            low = min(ranges, key=lambda r: r.discount)
            return SpotDiscount(low.discount, low)
        return SpotDiscount(self.spot_default.discount, self.spot_default)

    def quota_code(self, family: str, purchase: Purchase) -> QuotaCode | None:
        for code in self.quota_codes:
            if code.purchase == purchase and family in code.families:
                return code
        return None

    def quota_name(self, code: str) -> str | None:
        return next((q.name for q in self.quota_codes if q.code == code), None)

    def node_power(self, instance_type: str) -> NodePower | None:
        return next((p for p in self.node_powers if p.instance_type == instance_type), None)

    def accelerator_power(self, name: str) -> AcceleratorPower | None:
        return next((a for a in self.accelerators if a.name == name), None)

    def cooling_limit(self, cooling: str) -> CoolingLimit:
        return next(c for c in self.cooling_limits if c.cooling == cooling)

    def service(self, key: str) -> ServicePrice | None:
        return self._services.get(key)

    def fsx_capacity_gib(self, requested_gib: int) -> int:
        """The smallest valid FSx for Lustre SSD capacity at or above `requested_gib`."""
        for step in self.fsx_capacity.first_steps_gib:
            if requested_gib <= step:
                return step
        inc = self.fsx_capacity.increment_gib
        return max(self.fsx_capacity.first_steps_gib[-1], math.ceil(requested_gib / inc) * inc)


__all__ = ["Catalog", "SpotDiscount"]
