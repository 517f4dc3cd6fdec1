"""Shared building blocks of every spec model: strict config and the constrained scalar types.

Field docstrings become JSON Schema descriptions (spec/docs.py reads them when a schema or a problem shows one),
so the schema an editor shows is the documentation. Units live in field names (``power_budget_kw``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from decimal import Decimal
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
)
from pydantic.json_schema import JsonDict

from gpuinfra.spec.words import S3Uri

Purpose = Literal["training", "inference", "registry", "dataprep"]
"""What an account (or another cloud's equivalent) is for: training and inference never share one."""
PURPOSE_OF_WORKLOAD = {"finetune": "training"}
"""Workloads that live in another workload's accounts: fine-tuning reads training data and writes to the registry's
upload prefix, as training does, so it shares training's accounts, quotas and separation."""
UpdatePolicy = Literal["in_place", "replace", "drain"]
"""What changing a field does to running infrastructure (ParallelCluster's update_policy)."""


MAX_MAGNITUDE = 1e15
"""Largest number a spec may hold. Physical quantities in a spec (parameters, tokens, bytes, dollars, hours)
stay far below it; past it the planner's arithmetic overflows or loses every digit that matters."""
MIN_MAGNITUDE = 1e-9
"""Smallest non-zero number a spec may hold: below it, dividing by it overflows (5e-324 is a float too)."""
MAX_INTEGER = 2**53
"""Integers beyond it cannot be written into a JSON report exactly (JSON numbers are doubles)."""


def bounded(value: Any) -> Any:
    """Every number in `value` (walking lists and mappings) within the magnitudes the planner computes with;
    raise ValueError naming the bound otherwise (pydantic reports it at the field's path)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        if abs(value) > MAX_INTEGER:
            raise ValueError(f"integers larger than 2^53 ({MAX_INTEGER:,}) cannot be planned or reported exactly")
    elif isinstance(value, float | Decimal):
        magnitude = abs(float(value))
        if magnitude > MAX_MAGNITUDE:
            raise ValueError(
                f"{value:g} is beyond any physical quantity gpuinfra plans with (at most {MAX_MAGNITUDE:g})"
            )
        if 0 < magnitude < MIN_MAGNITUDE:
            raise ValueError(f"{value:g} is too small to compute with (use 0, or at least {MIN_MAGNITUDE:g})")
    elif isinstance(value, list | tuple):
        for item in value:
            bounded(item)
    elif isinstance(value, dict):
        for item in value.values():
            bounded(item)
    return value


class Invalid(ValueError):
    """A cross-field check that failed, raised from a model validator: `at` is the field it is about (relative
    to the model), so the message lands on that field's line rather than on the model's; `hint` says what to
    change."""

    def __init__(self, message: str, at: Sequence[str | int] = (), hint: str | None = None) -> None:
        super().__init__(message)
        self.at = tuple(at)
        self.hint = hint


class SpecModel(BaseModel):
    """Base of all spec models: unknown fields are errors, values are immutable, types are strict (a YAML
    `true` is not the number 1, `"16"` is not 16), numbers are finite and within physical bounds."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        validate_default=True,
        strict=True,
        allow_inf_nan=False,
    )

    @field_validator("*", mode="before")
    @classmethod
    def _no_boolean_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """Strict mode still lets `false` match `Literal[0, ...]` (False == 0 in Python): a YAML boolean is
        only ever a boolean."""
        if isinstance(value, bool) and info.field_name is not None:
            annotation = cls.model_fields[info.field_name].annotation
            if not _takes_booleans(annotation):
                raise ValueError(f"{str(value).lower()} is a boolean; this field takes {_kind_of(annotation)}")
        return value

    @field_validator("*", mode="after")
    @classmethod
    def _bounded(cls, value: Any) -> Any:
        return bounded(value)


def _takes_booleans(annotation: Any) -> bool:
    if annotation is bool or annotation is Any:
        return True
    if get_origin(annotation) is Literal:
        return any(isinstance(arg, bool) for arg in get_args(annotation))
    return any(_takes_booleans(arg) for arg in get_args(annotation))


def _kind_of(annotation: Any) -> str:
    literals = [a for a in get_args(annotation) if get_origin(annotation) is Literal] or [
        v for arg in get_args(annotation) if get_origin(arg) is Literal for v in get_args(arg)
    ]
    return "one of " + ", ".join(map(str, literals)) if literals else "a value of another kind"


def number_not_text(value: Any) -> Any:
    """Money fields are Decimal in lax mode (a YAML 0.1 is a float, and Decimal(0.1) is not 0.1), which would
    also take the text "42" or "1e3": a number in a spec is written as a number."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        raise ValueError("write a number here (not text, and not a boolean)")
    return value


Money = Annotated[Decimal, BeforeValidator(number_not_text), Field(strict=False)]
"""An amount of money: a YAML number read as Decimal."""


def updates(policy: UpdatePolicy) -> JsonDict:
    """JSON Schema extra marking how a change to the field reaches running infrastructure."""
    return {"x-update-policy": policy}


Name = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,30}[a-z0-9]$"),
    Field(description="Lower-case letters, digits and dashes; 2-32 characters; used in resource names."),
]
AccountName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]*$")]
Region = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z]{2}(-gov)?-[a-z]+-[0-9]$"),
    Field(description="AWS region code, e.g. us-east-1."),
]
Zone = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z]{2}(-gov)?-[a-z]+-[0-9][a-f]$"),
    Field(description="AWS availability zone: the region code and a letter a-f, e.g. us-east-1a."),
]
"""No region has more than six zones (us-east-1's use1-az1..az6 is the most; "AWS Availability Zones",
docs.aws.amazon.com/global-infrastructure/latest/regions/aws-availability-zones.html): a letter past f is a typo.
Whether the zone exists in the region for the deploying account only AWS can say (names map per account)."""
BucketName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")]
InstanceTypeName = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$"),
    Field(description="EC2 instance type from the catalog, e.g. p5.48xlarge."),
]
RuleId = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]*$")]
K8sName = Annotated[
    str,
    StringConstraints(max_length=63, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
    Field(
        description="Kubernetes name (RFC 1123 label): at most 63 lower-case letters, digits and dashes, "
        "starting and ending with a letter or digit."
    ),
]
"""Namespaces and other label-named objects (kubernetes.io/docs/concepts/overview/working-with-objects/names)."""
NODE_NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
NodeName = Annotated[
    str,
    StringConstraints(max_length=253, pattern=NODE_NAME_PATTERN),
    AfterValidator(lambda name: _labels_fit(name)),
    Field(
        description="Kubernetes node name (RFC 1123 subdomain): lower-case letters, digits, dashes and dots, "
        "at most 253 characters, each dot-separated part at most 63."
    ),
]


def _labels_fit(name: str) -> str:
    long = next((label for label in name.split(".") if len(label) > 63), None)
    if long is not None:
        raise ValueError(f"the part {long[:20]}... is {len(long)} characters; DNS labels hold at most 63")
    return name


def _network(cidr: str) -> str:
    try:
        ipaddress.ip_network(cidr)
    except ValueError:
        raise ValueError(f"{cidr} is not a network: each octet is 0-255 and the host bits are zero") from None
    return cidr


VpcCidr = Annotated[
    str,
    StringConstraints(pattern=r"^10\.[0-9]{1,3}\.0\.0/16$"),
    AfterValidator(_network),
    Field(description="The region's VPC network: a /16 inside 10.0.0.0/8, e.g. 10.64.0.0/16."),
]


def zone_problem(zone: str, region: str) -> str | None:
    """Why `zone` cannot be a zone of `region` (AWS zone names are the region code and one letter), or None."""
    if zone[:-1] != region:
        return f"availability zone {zone} is not in region {region}"
    return None


def _not_reserved(key: str) -> str:
    if key.lower().startswith("aws:"):
        raise ValueError(f"tag key {key!r}: the aws: prefix is reserved for AWS's own tags")
    return key


TagKey = Annotated[str, StringConstraints(min_length=1, max_length=128), AfterValidator(_not_reserved)]
TagValue = Annotated[str, StringConstraints(max_length=256)]
Tags = Annotated[
    dict[TagKey, TagValue],
    Field(
        max_length=40,
        description="Tags for every resource: keys 1-128 characters without the reserved aws: prefix, values "
        "at most 256 (AWS tagging limits; gpuinfra adds up to 10 of its own under the 50 per resource).",
    ),
]
LogRetentionDays = Literal[
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653
]  # fmt: skip
"""The retentions CloudWatch Logs accepts (PutRetentionPolicy, retentionInDays)."""
FlowLogDestination = Literal["s3", "cloud-watch-logs"]
"""Where VPC flow logs go (EC2 CreateFlowLogs LogDestinationType; kinesis-data-firehose is not offered)."""

__all__ = [
    "MAX_INTEGER",
    "MAX_MAGNITUDE",
    "MIN_MAGNITUDE",
    "NODE_NAME_PATTERN",
    "AccountName",
    "BucketName",
    "FlowLogDestination",
    "InstanceTypeName",
    "Invalid",
    "K8sName",
    "LogRetentionDays",
    "Money",
    "Name",
    "NodeName",
    "Region",
    "RuleId",
    "S3Uri",
    "SpecModel",
    "Tags",
    "UpdatePolicy",
    "VpcCidr",
    "Zone",
    "bounded",
    "number_not_text",
    "updates",
    "zone_problem",
]
