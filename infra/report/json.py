"""JSON renderer: the stable, versioned, byte-deterministic document `diff` reads."""

from __future__ import annotations

from typing import Any

import orjson

from .model import Report, ResourceOut

RESOURCE_FIELDS = tuple(ResourceOut.model_fields)


def render_json(report: Report) -> str:
    """Indented, keys sorted (the text `json.dumps(indent=2, sort_keys=True, ensure_ascii=False)` gives, via orjson).
    Resources are plain JSON already: they skip pydantic's serializer, which is slow on free-form inputs."""
    data = report.model_dump(mode="json", exclude={"stacks": {"__all__": {"summary", "resources"}}})
    for out, stack in zip(data["stacks"], report.stacks, strict=True):
        out["resources"] = None if stack.resources is None else [_plain(r) for r in stack.resources]
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"


def _plain(resource: ResourceOut) -> dict[str, Any]:
    return {name: getattr(resource, name) for name in RESOURCE_FIELDS}


__all__ = ["render_json"]
