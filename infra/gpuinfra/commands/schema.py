"""`gpuinfra schema`: the JSON Schema of stack files, of the organization file or of intent files, for editors."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from gpuinfra.spec.schema import intent_schema, org_schema, stack_schema

SCHEMAS: dict[str, Callable[[], dict[str, Any]]] = {"stack": stack_schema, "org": org_schema, "intent": intent_schema}
"""Each kind of file gpuinfra reads, and its schema."""


def schema_text(kind: str) -> str:
    return json.dumps(SCHEMAS[kind](), indent=2, sort_keys=True) + "\n"


__all__ = ["SCHEMAS", "schema_text"]
