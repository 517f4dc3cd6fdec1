"""What a Karpenter NodePool may launch at most: its instance types, ways of buying, region and the instance count
its `limits` allow, so cost prices it and quotas count it at maximum, as they do an Auto Scaling group.

A NodePool launches nodes on demand, from none up to its `spec.limits` (resource quantities summed over its
nodes: Karpenter docs, concepts/nodepools.md "spec.limits"). Which nodes is set by `spec.template.spec.requirements`
on the well-known labels `node.kubernetes.io/instance-type`, `karpenter.sh/capacity-type` and
`topology.kubernetes.io/region` (kubernetes-sigs/karpenter pkg/apis/v1/labels.go, WellKnownLabels). Without limits,
or without the instance types, nothing bounds what it launches: `bound_problem` says so and the pack refuses it.
An AWS Batch managed compute environment launches at most its `maxVcpus` over the smallest type's vCPUs
(`batch_bounds`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gpuinfra.catalog import load_catalog
from gpuinfra.graph.tokens import KARPENTER_NODE_POOL as NODE_POOL
from gpuinfra.graph.views import mappings, text

INSTANCE_TYPE = "node.kubernetes.io/instance-type"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
REGION = "topology.kubernetes.io/region"
CAPACITY_TYPES = ("on-demand", "spot", "reserved")
"""Karpenter's capacity types on AWS (nodepools.md)."""
ACCELERATOR_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "aws.amazon.com/neuron", "aws.amazon.com/neurondevice")


@dataclass(frozen=True)
class Size:
    """What one instance of a type adds to a NodePool's usage (node capacity, as Karpenter counts it)."""

    vcpu: int
    memory_gib: int
    accelerators: int


@dataclass(frozen=True)
class NodePoolBounds:
    """A NodePool read: what it may launch, where, and how many of each type its limits allow."""

    instance_types: tuple[str, ...]
    capacity_types: tuple[str, ...]
    """Its ways of buying; every one Karpenter offers when no requirement narrows them."""
    region: str | None
    limits: dict[str, Decimal]
    """Each limit as a number (cpu in cores, memory in GiB, devices in units)."""

    def most(self, size: Size | None) -> int | None:
        """Instances of one type the limits allow (the tightest limit binds); None when none binds it."""
        if size is None:
            return None
        per = {"cpu": size.vcpu, "memory": size.memory_gib}
        per |= {name: size.accelerators for name in ACCELERATOR_RESOURCES}
        counts = [int(limit // per[key]) for key, limit in self.limits.items() if per.get(key)]
        return min(counts) if counts else None

    @property
    def on_demand(self) -> bool:
        """It may buy on-demand (or reserved) capacity: priced and counted as on-demand at most."""
        return any(kind != "spot" for kind in self.capacity_types)


def node_pool(props: Mapping[str, Any]) -> NodePoolBounds:
    """A NodePool's bounds from its object (the graph's inputs: apiVersion, kind, metadata, spec)."""
    spec = props.get("spec") or {}
    template = (spec.get("template") or {}) if isinstance(spec, Mapping) else {}
    requirements = mappings(((template.get("spec") or {}) if isinstance(template, Mapping) else {}).get("requirements"))
    limits = spec.get("limits") if isinstance(spec, Mapping) else None
    capacity = _values(requirements, CAPACITY_TYPE)
    regions = _values(requirements, REGION)
    return NodePoolBounds(
        instance_types=_values(requirements, INSTANCE_TYPE),
        capacity_types=capacity or CAPACITY_TYPES,
        region=regions[0] if len(regions) == 1 else None,
        limits={str(k): q for k, v in (limits.items() if isinstance(limits, Mapping) else ()) if (q := quantity(k, v))},
    )


def _values(requirements: list[Mapping[str, Any]], key: str) -> tuple[str, ...]:
    """The values an `In` requirement on `key` allows ((): not narrowed, or narrowed another way)."""
    for r in requirements:
        if r.get("key") == key and r.get("operator") == "In":
            return tuple(v for v in (text(x) for x in r.get("values") or []) if v)
    return ()


_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?\Z")
_GIB = {None: Decimal(1) / 2**30, "k": Decimal(1000) / 2**30, "M": Decimal(10**6) / 2**30, "G": Decimal(10**9) / 2**30}
_GIB |= {"T": Decimal(10**12) / 2**30, "Ki": Decimal(1) / 2**20, "Mi": Decimal(1) / 2**10, "Gi": Decimal(1)}
_GIB |= {"Ti": Decimal(1024)}


def quantity(resource: Any, value: Any) -> Decimal | None:
    """A Kubernetes resource quantity as a number: cpu in cores ("500m" is 0.5), memory in GiB, others as counts;
    None when it cannot be read (then it bounds nothing)."""
    found = _QUANTITY.match(str(value).strip()) if isinstance(value, str | int | float) else None
    if found is None:
        return None
    number, suffix = Decimal(found.group(1)), found.group(2)
    if resource == "memory":
        return number * _GIB[suffix] if suffix in _GIB else None
    if suffix == "m":
        return number / 1000
    return number if suffix is None else None


def bound_problem(bounds: NodePoolBounds, sizes: Callable[[str], Size | None]) -> str | None:
    """Why nothing bounds what the NodePool launches; None when its limits bound every type it may launch."""
    if not bounds.instance_types:
        return (
            f"it names no instance types (a `{INSTANCE_TYPE}` requirement with operator In), so it may launch any "
            "type, which no quota or budget can count"
        )
    unbounded = [t for t in bounds.instance_types if bounds.most(sizes(t)) is None]
    if unbounded:
        return (
            f"its limits ({', '.join(bounds.limits) or 'none'}) bound no count of {', '.join(unbounded)}: set "
            "`spec.limits.cpu` (or the accelerator's resource), which Karpenter stops launching at"
        )
    return None


def size_of(instance_type: str) -> Size | None:
    """An instance type's node capacity from the catalog (None when the catalog does not list it)."""
    info = load_catalog().instance(instance_type)
    return None if info is None else Size(info.vcpu, info.memory_gib, info.accelerator_count)


SPOT = "SPOT"
EC2 = "EC2"
"""An AWS Batch compute environment's EC2 types (computeResources.type)."""


def batch_bounds(props: Mapping[str, Any]) -> tuple[list[str], int | None, str | None]:
    """(instance types the catalog knows, the most instances `maxVcpus` allows, 'spot' or None for on-demand);
    the count is None when it cannot be bounded (no known type, no maxVcpus, Fargate)."""
    resources = props.get("computeResources") or {}
    kind = str(resources.get("type") or "")
    market = "spot" if kind == SPOT else None
    catalog = load_catalog()
    types = [t for t in (text(x) for x in resources.get("instanceTypes") or []) if t and catalog.instance(t)]
    most = resources.get("maxVcpus")
    if kind not in (SPOT, EC2) or not types or not isinstance(most, int | float) or isinstance(most, bool):
        return types, None, market
    smallest = min(catalog.instance(t).vcpu for t in types)  # type: ignore[union-attr]
    return types, math.ceil(int(most) / smallest), market


__all__ = [
    "CAPACITY_TYPE",
    "INSTANCE_TYPE",
    "NODE_POOL",
    "REGION",
    "NodePoolBounds",
    "Size",
    "batch_bounds",
    "bound_problem",
    "node_pool",
    "quantity",
    "size_of",
]
