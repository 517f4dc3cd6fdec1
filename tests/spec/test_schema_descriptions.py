"""Every property of the published JSON Schemas says what it is (an editor's hover shows it), and no field has a
default a validator refuses: a spec that leaves a field out is never refused for a value its author did not
write."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from gpuinfra.spec.schema import org_schema, stack_schema


def described(prop: dict[str, Any], defs: dict[str, Any]) -> bool:
    """A description on the property, or on the one definition it refers to (what editors show for a $ref)."""
    if "description" in prop:
        return True
    refs = [prop.get("$ref")]
    alternatives = [alt for key in ("anyOf", "allOf", "oneOf") for alt in prop.get(key, [])]
    refs += [alt.get("$ref") for alt in alternatives if isinstance(alt, dict)]
    if isinstance(prop.get("items"), dict):
        refs.append(prop["items"].get("$ref"))
    return any(ref and "description" in defs.get(ref.rsplit("/", 1)[-1], {}) for ref in refs)


def properties(node: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        for name, prop in (node.get("properties") or {}).items():
            yield f"{path}.{name}", prop
        for key, value in node.items():
            yield from properties(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from properties(value, f"{path}[{i}]")


@pytest.mark.parametrize("kind", ["stack", "org"])
def test_every_property_is_described(kind: str) -> None:
    schema = stack_schema() if kind == "stack" else org_schema()
    found = list(properties(schema, kind))
    assert len(found) > (150 if kind == "stack" else 20)  # the walk reaches the nested models
    missing = [path for path, prop in found if not described(prop, schema.get("$defs", {}))]
    assert missing == []


def test_a_pcs_stack_without_an_image_is_told_it_is_required() -> None:
    """The schema's `image_id` has no default (it was a `latest` alias image-not-pinned always refused for PCS):
    leaving it out is named as required, with where to find an AMI."""
    from gpuinfra.validators import Level
    from helpers import DELETE, checked

    result = checked("llm-train", {"compute.image_id": DELETE})
    (finding,) = [f for f in result.findings if f.rule == "image-not-pinned"]
    assert finding.level == Level.ERROR
    assert finding.message.startswith("compute.image_id is required for AWS PCS nodes")
    assert "aws-pcs-sample_ami-*" in (finding.hint or "")
    assert stack_schema()["$defs"]["Compute"]["properties"]["image_id"].get("default") is None  # no alias default
