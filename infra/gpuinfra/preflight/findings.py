"""A preflight finding: what AWS or Kubernetes would refuse (or silently ignore), and by whose definition."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from gpuinfra.graph import Resource

Level = Literal["error", "info"]
MAX_VALUE_CHARS = 120
"""Values are cut to this length: a finding names the value, the report is not a dump of user data."""


def cut(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """A readable, bounded rendering of an offending value."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class PreflightFinding:
    """One violation: rule id, where (resource and property path), the value, the rule and its source."""

    rule: str
    urn: str
    name: str
    type: str
    path: str
    """Property path in the resource's Pulumi inputs (`networkInterfaces[3].networkCardIndex`); empty for
    the resource as a whole."""
    value: str
    message: str
    source: str
    """Where the rule comes from: a botocore operation, a CloudFormation schema, a document's URL."""
    level: Level = "error"

    @classmethod
    def at(
        cls,
        resource: Resource,
        rule: str,
        path: str,
        value: Any,
        message: str,
        source: str,
        level: Level = "error",
    ) -> PreflightFinding:
        return cls(rule, resource.urn, resource.name, resource.type, path, cut(value), message, source, level)

    def to_json(self) -> dict[str, str]:
        return {
            "rule": self.rule,
            "level": self.level,
            "urn": self.urn,
            "name": self.name,
            "type": self.type,
            "path": self.path,
            "value": self.value,
            "message": self.message,
            "source": self.source,
        }


__all__ = ["MAX_VALUE_CHARS", "Level", "PreflightFinding", "cut"]
