"""Typed catalog entries. Every entry carries the source it came from and the date it was true."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict

Purchase = Literal["on_demand", "spot"]


class Entry(BaseModel):
    """A catalog fact: its source id (see sources.yaml) and as-of date."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    as_of: datetime.date
    note: str | None = None


class Source(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str
    url: str


class InstanceType(Entry):
    name: str
    family: str
    vcpu: int
    memory_gib: int
    accelerator: str | None
    accelerator_count: int
    accelerator_memory_mib: int
    """Per device, as EC2 reports it."""
    efa_interfaces: int
    network_cards: int
    network_gbps: float
    onprem: bool = False
    """A system bought for one's own racks (no EC2 price, quota or EFA)."""
    ib_hcas: int = 0
    """InfiniBand adapters for the GPU fabric (on-premises systems)."""

    @property
    def accelerator_memory_bytes(self) -> int:
        """Memory of all accelerators of one instance, in bytes."""
        return self.accelerator_count * self.accelerator_memory_mib * 1024 * 1024

    @property
    def is_accelerated(self) -> bool:
        return self.accelerator_count > 0


class OnDemandPrice(Entry):
    instance_type: str
    region: str
    usd_per_hour: Decimal


class SpotObserved(Entry):
    instance_type: str
    region: str
    discount: Decimal


class SpotRange(Entry):
    family: str
    region: str
    discount: Decimal


class SpotDefault(Entry):
    discount: Decimal


class QuotaCode(Entry):
    code: str
    name: str
    purchase: Purchase
    families: list[str]


class NodePower(Entry):
    instance_type: str
    max_kw: float


class AcceleratorPower(Entry):
    name: str
    tdp_w: float


class CoolingLimit(Entry):
    cooling: str
    max_kw_per_rack: float


class ServicePrice(Entry):
    key: str
    unit: str
    usd: Decimal
    confirmed: bool


class FsxCapacity(Entry):
    first_steps_gib: list[int]
    increment_gib: int


class RegionList(Entry):
    codes: list[str]


__all__ = [
    "AcceleratorPower",
    "CoolingLimit",
    "Entry",
    "FsxCapacity",
    "InstanceType",
    "NodePower",
    "OnDemandPrice",
    "Purchase",
    "QuotaCode",
    "RegionList",
    "ServicePrice",
    "Source",
    "SpotDefault",
    "SpotObserved",
    "SpotRange",
]
