"""The JSON renderer: `render(report) -> str`, one serializer for every report. A preview or validate report is
the stable, versioned, byte-deterministic document `diff` reads; cost and diff reports use the same encoding."""

from __future__ import annotations

import json
from dataclasses import fields
from functools import singledispatch
from typing import Any

import orjson

from gpuinfra.report.model import CatalogReport, CostReport, DiffReport, Report, Resource

RESOURCE_FIELDS = tuple(f.name for f in fields(Resource))


def dumps(data: Any) -> str:
    """Indented, keys sorted: the text `json.dumps(indent=2, sort_keys=True, ensure_ascii=False)` gives, via
    orjson (a test holds the two equal for every example)."""
    try:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"
    except TypeError:  # a lone surrogate (from an argument or a file name), which orjson refuses: escaped instead
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=True) + "\n"


@singledispatch
def render(report: object) -> str:
    raise TypeError(f"no JSON renderer for {type(report).__name__}")


@render.register
def render_json(report: Report) -> str:
    """Resources are plain JSON already: they skip pydantic's serializer, which is slow on free-form inputs."""
    data = report.model_dump(mode="json", exclude={"stacks": {"__all__": {"summary", "resources"}}})
    for out, stack in zip(data["stacks"], report.stacks, strict=True):
        out["resources"] = None if stack.resources is None else [_plain(r) for r in stack.resources]
    return dumps(data)


@render.register
def render_cost_json(report: CostReport) -> str:
    return dumps(report.model_dump(mode="json"))


@render.register
def render_catalog_json(report: CatalogReport) -> str:
    return dumps(report.model_dump(mode="json"))


@render.register
def render_diff_json(report: DiffReport) -> str:
    return dumps(report.model_dump(mode="json"))


def _plain(resource: Resource) -> dict[str, Any]:
    return {name: getattr(resource, name) for name in RESOURCE_FIELDS}


__all__ = ["dumps", "render", "render_catalog_json", "render_cost_json", "render_diff_json", "render_json"]
