"""Field docstrings, read when something shows one: the problem that quotes a field's description, and the editor
schema (spec/schema.py). A field is documented by the string literal under its annotation, as pydantic's
`use_attribute_docstrings` reads it; that option reads them at class creation instead, parsing the source of every
model in every process: ~0.09 s of a 1.5 s `preview`, which never shows one. Same rule as pydantic's: an explicit
`Field(description=...)` wins, and a field takes the docstring of the class that annotates it last."""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import textwrap
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema


def field_description(model: type[BaseModel], name: str) -> str | None:
    """The description of `model`'s field `name`: its Field(description=...), else its docstring; None if neither."""
    info = model.model_fields.get(name)
    if info is None:
        return None
    if info.description:
        return info.description
    owner = next((cls for cls in model.__mro__ if name in vars(cls).get("__annotations__", {})), None)
    return attribute_docstrings(owner).get(name) if owner is not None else None


@functools.cache
def attribute_docstrings(cls: type) -> dict[str, str]:
    """Name -> docstring of the attributes `cls` itself annotates (the string statement right after `name: T`)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):  # no source (a built class, a zipped install): no docstrings
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs = {}
    for statement, following in itertools.pairwise(body):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[statement.target.id] = inspect.cleandoc(following.value.value)
    return docs


class DocumentedSchema(GenerateJsonSchema):
    """Pydantic's JSON Schema with each field's docstring as its description (what an editor's hover shows)."""

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        json_schema = super().model_schema(schema)
        model = schema["cls"]
        properties: dict[str, Any] = json_schema.get("properties", {})
        for name, info in model.model_fields.items():
            key = info.validation_alias if isinstance(info.validation_alias, str) else info.alias or name
            described = field_description(model, name)
            if key in properties and described and "description" not in properties[key]:
                properties[key]["description"] = described
        return json_schema


__all__ = ["DocumentedSchema", "attribute_docstrings", "field_description"]
