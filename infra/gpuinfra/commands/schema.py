"""`gpuinfra schema`: the JSON Schema of stack files or of the organization file, for editors."""

from __future__ import annotations

import json

from gpuinfra.spec.schema import org_schema, stack_schema


def schema_text(kind: str) -> str:
    data = stack_schema() if kind == "stack" else org_schema()
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


__all__ = ["schema_text"]
