"""Field docstrings read on demand (spec/docs.py) are what pydantic's own `use_attribute_docstrings` reads at class
creation: the oracle is pydantic, on twin models that differ only in that option."""

from __future__ import annotations

from typing import Any

import pytest
from gpuinfra.spec.docs import DocumentedSchema, field_description
from pydantic import BaseModel, ConfigDict, Field


class EagerBase(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    size_gb: int = 1
    """Capacity.

    In GB, written as a whole number."""
    name: str = "a"
    """Inherited unchanged."""
    plain: int = 0


class Eager(EagerBase):
    name: str = "b"  # re-annotated without a docstring: pydantic drops the parent's
    tier: str = Field("x", description="Explicit wins.")
    """Not this one."""
    after_assign: int = 2
    last: float = 1.0
    """Last field."""


class LazyBase(BaseModel):
    size_gb: int = 1
    """Capacity.

    In GB, written as a whole number."""
    name: str = "a"
    """Inherited unchanged."""
    plain: int = 0


class Lazy(LazyBase):
    name: str = "b"  # re-annotated without a docstring: pydantic drops the parent's
    tier: str = Field("x", description="Explicit wins.")
    """Not this one."""
    after_assign: int = 2
    last: float = 1.0
    """Last field."""


@pytest.mark.parametrize("eager, lazy", [(EagerBase, LazyBase), (Eager, Lazy)])
def test_each_field_reads_as_pydantic_reads_it(eager: type[BaseModel], lazy: type[BaseModel]) -> None:
    expected = {name: info.description for name, info in eager.model_fields.items()}
    assert expected["size_gb"] == "Capacity.\n\nIn GB, written as a whole number."  # pydantic's cleandoc
    assert {name: field_description(lazy, name) for name in lazy.model_fields} == expected


def test_the_schema_carries_the_docstrings_as_pydantic_puts_them() -> None:
    def props(schema: dict[str, Any]) -> dict[str, Any]:
        return schema["properties"]

    eager = props(Eager.model_json_schema())
    lazy = props(Lazy.model_json_schema(schema_generator=DocumentedSchema))
    assert lazy == eager
    assert "description" not in props(Lazy.model_json_schema())["size_gb"]  # without the generator, none


def test_spec_models_no_longer_parse_their_source_at_import() -> None:
    """The point of reading on demand: a spec model carries no description until asked."""
    from gpuinfra.spec.training import TrainingSpec

    assert TrainingSpec.model_config.get("use_attribute_docstrings") is not True
    assert any(field_description(TrainingSpec, name) for name in TrainingSpec.model_fields)
