"""A preflight finding, made the one way: what a cloud or Kubernetes would refuse (or silently ignore) in one
resource, at a property path, with the offending value and whose definition says so (a `Finding` of stage
preflight, gpuinfra.findings)."""

from __future__ import annotations

import json
from typing import Any

from gpuinfra.findings import Finding, Level
from gpuinfra.graph import Resource

MAX_VALUE_CHARS = 120
"""Values are cut to this length: a finding names the value, the report is not a dump of user data."""


def cut(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """A readable, bounded rendering of an offending value."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def finding_at(
    resource: Resource,
    rule: str,
    path: str,
    value: Any,
    message: str,
    source: str,
    level: Level = Level.ERROR,
) -> Finding:
    """One violation: rule id, where (the resource, and the property path in its Pulumi inputs such as
    `networkInterfaces[3].networkCardIndex`; empty for the resource as a whole), the value, the rule and its
    source (a botocore operation, a CloudFormation schema, a document's URL)."""
    return Finding(
        rule,
        level,
        path,
        message,
        stage="preflight",
        urn=resource.urn,
        name=resource.name,
        type=resource.type,
        value=cut(value),
        source=source,
    )


__all__ = ["MAX_VALUE_CHARS", "cut", "finding_at"]
