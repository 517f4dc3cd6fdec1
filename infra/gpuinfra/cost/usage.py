"""Usage: the quantities a price depends on that the graph does not say (stored GB, data processed, ...).

Three sources, most specific first (Infracost's usage file plus what the spec already implies):
1. the usage file's `resource_usage`, keyed by logical name (or `type::name`);
2. usage assumed from the stack's plan, e.g. a checkpoint bucket stores checkpoint size x checkpoints kept;
3. the usage file's `resource_type_default_usage`, keyed by Pulumi type token.
Without any of them a usage-priced line is unknown (None), never zero.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpuinfra.errors import InputError
from gpuinfra.graph import Graph, Resource, tokens
from gpuinfra.plan import AnyPlan, TrainingPlan
from gpuinfra.plan.checkpoint import SUPERSEDED_TAG
from gpuinfra.spec.problems import validation_problems
from gpuinfra.spec.yamlfile import read_yaml

BUCKET_V2 = tokens.BUCKET_V2
LIFECYCLE_TYPES = (
    tokens.BUCKET_LIFECYCLE,
    tokens.BUCKET_LIFECYCLE_V2,
)
FILE = "usage file"
SPEC = "spec"


USAGE_MAX = Decimal(10**12)
"""The most of any usage quantity (a trillion GB is a zettabyte): a bound before money is computed with it, which
Decimal's 28 digits hold for any price (1e308 GB once made the quantize fail, exit 3)."""
INSTANCES_MAX = 10**7
"""More instances than any GPU quota grants."""


class ResourceUsage(BaseModel):
    """Usage of one resource (or a default for every resource of a type). Units are in the names."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instances: Annotated[int, Field(ge=0, le=INSTANCES_MAX)] | None = None
    """Expected running instances of an Auto Scaling group or node group (default: desired, else min)."""
    monthly_hours: Annotated[Decimal, Field(ge=0, le=744)] | None = None
    """Hours a month the instances run or a capacity block is reserved (default 730)."""
    storage_gb: Annotated[Decimal, Field(ge=0, le=USAGE_MAX)] | None = None
    """GB stored (S3 bucket, CloudWatch Logs group)."""
    monthly_data_processed_gb: Annotated[Decimal, Field(ge=0, le=USAGE_MAX)] | None = None
    """GB a NAT gateway or an interface VPC endpoint processes a month."""
    monthly_ingested_gb: Annotated[Decimal, Field(ge=0, le=USAGE_MAX)] | None = None
    """GB of logs delivered a month: what a CloudWatch Logs group ingests, or what a VPC flow log delivers to S3."""
    capacity_units: Annotated[Decimal, Field(ge=0, le=USAGE_MAX)] | None = None
    """Average load balancer capacity units (LCU / NLCU) per hour."""
    monthly_requests_millions: Annotated[Decimal, Field(ge=0, le=USAGE_MAX)] | None = None
    """Millions of requests a WAF web ACL inspects a month."""
    monthly_api_calls_10k: Annotated[Decimal, Field(ge=0, le=USAGE_MAX)] | None = None
    """Tens of thousands of Secrets Manager API calls a month."""


class UsageFile(BaseModel):
    """The usage file (`--usage-file`), shaped like Infracost's infracost-usage.yml."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    resource_type_default_usage: dict[str, ResourceUsage] = {}
    resource_usage: dict[str, ResourceUsage] = {}


@dataclass(frozen=True)
class Value:
    """One usage quantity and where it came from."""

    amount: Decimal
    origin: str
    note: str | None = None


@dataclass(frozen=True)
class Usage:
    file: UsageFile = field(default_factory=UsageFile)
    assumed: Mapping[str, tuple[ResourceUsage, str]] = field(default_factory=dict)
    """Spec-derived usage by resource key (type::name), with the reason."""
    source: str | None = None

    def value(self, resource: Resource, name: str) -> Value | None:
        explicit = self.file.resource_usage.get(resource.name) or self.file.resource_usage.get(resource.key)
        if explicit is not None and getattr(explicit, name) is not None:
            return Value(Decimal(getattr(explicit, name)), FILE)
        assumed = self.assumed.get(resource.key)
        if assumed is not None and getattr(assumed[0], name) is not None:
            return Value(Decimal(getattr(assumed[0], name)), SPEC, assumed[1])
        default = self.file.resource_type_default_usage.get(resource.type)
        if default is not None and getattr(default, name) is not None:
            return Value(Decimal(getattr(default, name)), FILE)
        return None

    def with_assumed(self, assumed: Mapping[str, tuple[ResourceUsage, str]]) -> Usage:
        return Usage(self.file, assumed, self.source)


def load_usage_file(path: Path) -> Usage:
    """Read and check a usage file; problems are input errors (exit 2) naming file and field."""
    doc = read_yaml(path, "usage file")
    try:
        parsed = UsageFile.model_validate(doc.data or {})
    except ValidationError as exc:
        raise InputError(validation_problems(exc, UsageFile, doc)) from None
    return Usage(parsed, {}, str(path))


def assumed_usage(plan: AnyPlan | None, graph: Graph) -> dict[str, tuple[ResourceUsage, str]]:
    """Usage the plan implies. Training with checkpoints: the checkpoint bucket (its lifecycle expires the copies the
    pruner tags superseded after N days) holds every checkpoint written in N days (one per interval), each of the
    planned checkpoint size. Other buckets with a lifecycle (flow logs) are usage priced as any bucket."""
    checkpoint = plan.checkpoint if isinstance(plan, TrainingPlan) else None
    if checkpoint is None or not checkpoint.size_gb or not checkpoint.interval_minutes:
        return {}
    size_gb, interval = checkpoint.size_gb, checkpoint.interval_minutes
    expiry = _expiry_days(graph)
    out: dict[str, tuple[ResourceUsage, str]] = {}
    for bucket in graph.of_type(tokens.BUCKET, BUCKET_V2):
        days = expiry.get(str(bucket.inputs.get("bucket")))
        if days is None:
            continue
        kept = math.ceil(days * 24 * 60 / float(interval) - 1e-9)
        size = Decimal(str(size_gb))
        note = (
            f"assumed from the plan: {kept} checkpoints of {size.normalize():f} GB "
            f"(one every {float(interval):g} min, expired after {days} days)"
        )
        out[bucket.key] = (ResourceUsage(storage_gb=size * kept), note)
    return out


def _expiry_days(graph: Graph) -> dict[str, int]:
    """Checkpoint bucket name -> the longest enabled expiration (days) of its rules on superseded checkpoints."""
    out: dict[str, int] = {}
    for config in graph.of_type(*LIFECYCLE_TYPES):
        for rule in config.inputs.get("rules") or []:
            days = (rule.get("expiration") or {}).get("days")
            tag = ((rule.get("filter") or {}).get("tag") or {}).get("key")
            if rule.get("status") == "Enabled" and isinstance(days, int) and tag == SUPERSEDED_TAG:
                name = str(config.inputs.get("bucket"))
                out[name] = max(out.get(name, 0), days)
    return out


__all__ = ["FILE", "SPEC", "ResourceUsage", "Usage", "UsageFile", "Value", "assumed_usage", "load_usage_file"]
