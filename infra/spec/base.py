"""Shared building blocks of every spec model: strict config and the constrained scalar types.

Field docstrings become JSON Schema descriptions (``use_attribute_docstrings``), so the schema an
editor shows is the documentation. Units live in field names (``power_budget_kw``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from pydantic.json_schema import JsonDict

UpdatePolicy = Literal["in_place", "replace", "drain"]
"""What changing a field does to running infrastructure (ParallelCluster's update_policy)."""


class SpecModel(BaseModel):
    """Base of all spec models: unknown fields are errors, values are immutable."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        use_attribute_docstrings=True,
        validate_default=True,
    )


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
    StringConstraints(pattern=r"^[a-z]{2}(-gov)?-[a-z]+-\d$"),
    Field(description="AWS region code, e.g. us-east-1."),
]
Zone = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z]{2}(-gov)?-[a-z]+-\d[a-z]$"),
    Field(description="AWS availability zone, e.g. us-east-1a."),
]
S3Uri = Annotated[
    str,
    StringConstraints(pattern=r"^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/[^\s]*)?$"),
    Field(description="s3://bucket/prefix/"),
]
BucketName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")]
InstanceTypeName = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$"),
    Field(description="EC2 instance type from the catalog, e.g. p5.48xlarge."),
]
RuleId = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]*$")]
Tags = dict[Annotated[str, StringConstraints(min_length=1, max_length=128)], str]

__all__ = [
    "AccountName",
    "BucketName",
    "InstanceTypeName",
    "Name",
    "Region",
    "RuleId",
    "S3Uri",
    "SpecModel",
    "Tags",
    "UpdatePolicy",
    "Zone",
    "updates",
]
