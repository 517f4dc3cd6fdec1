"""The preview JSON is written by a fast path (orjson, resources not passed through pydantic's serializer).
It must be the very text pydantic and `json.dumps(indent=2, sort_keys=True, ensure_ascii=False)` give, so
`diff` against a document written before the fast path sees no change."""

from __future__ import annotations

import json

import pytest
from gpuinfra.commands.preview import preview_stacks
from gpuinfra.report.render.json import render_json
from helpers import STACKS

EXAMPLES = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in STACKS.glob("Pulumi.*.yaml"))


@pytest.mark.parametrize("stack", EXAMPLES)
def test_fast_json_is_the_plain_serialization(stack: str) -> None:
    report = preview_stacks([stack])
    assert report.stacks and report.stacks[0].resources, "a preview with resources"
    plain = report.model_dump(mode="json", exclude={"stacks": {"__all__": {"summary"}}})
    assert render_json(report) == json.dumps(plain, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
