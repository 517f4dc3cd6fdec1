"""JSON renderer: the stable, versioned, byte-deterministic document `diff` reads."""

from __future__ import annotations

import json

from .model import Report


def render_json(report: Report) -> str:
    data = report.model_dump(mode="json", exclude={"stacks": {"__all__": {"summary"}}})
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


__all__ = ["render_json"]
