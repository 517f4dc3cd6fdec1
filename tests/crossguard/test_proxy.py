"""The lazy proxy behaves as `unknown_checking_proxy` on every read of every example resource."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from gpuinfra.graph import UNKNOWN
from gpuinfra.policy.proxy import lazy_unknown_checking_proxy
from helpers import example_graph
from pulumi_policy.deserialize import serialize_properties
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

EXAMPLES = ("llm-train", "chat-serve", "chat-serve-k8s", "model-registry")


def with_unknowns(value: Any, counter: list[int]) -> Any:
    """Every third leaf replaced by Pulumi's unknown sentinel."""
    if isinstance(value, dict):
        return {k: with_unknowns(v, counter) for k, v in value.items()}
    if isinstance(value, list):
        return [with_unknowns(v, counter) for v in value]
    counter[0] += 1
    return UNKNOWN if counter[0] % 3 == 0 else value


def reads(proxy: Any) -> list[tuple[Any, ...]]:
    """Every path read through `proxy`: the scalar found, or the unknown error (message and path)."""
    out: list[tuple[Any, ...]] = []

    def read(node: Any, key: Any, path: tuple[Any, ...]) -> None:
        try:
            child = node[key]
        except UnknownValueError as exc:
            out.append((*path, key, "unknown", exc.message, tuple(exc.props)))
            return
        visit(child, (*path, key))

    def visit(node: Any, path: tuple[Any, ...]) -> None:
        if isinstance(node, Mapping):
            for key in list(node):
                read(node, key, path)
        elif isinstance(node, Sequence) and not isinstance(node, str):
            for i in [*range(len(node)), -1][: len(node) + 1 if len(node) else 0]:
                read(node, i, path)
            out.append((*path, "slice", len(node[0:2])))
        else:
            out.append((*path, "value", node))

    visit(proxy, ())
    return out


@pytest.mark.parametrize("stack", EXAMPLES)
def test_every_read_matches_the_librarys_proxy(stack: str) -> None:
    counter = [0]
    for resource in example_graph(stack).resources:
        props = with_unknowns(resource.inputs, counter)
        eager, lazy = unknown_checking_proxy(props), lazy_unknown_checking_proxy(props)
        assert reads(lazy) == reads(eager), resource.urn
        assert serialize_properties(lazy) == serialize_properties(eager) == props


def test_missing_keys_raise_key_error_like_the_original() -> None:
    lazy = lazy_unknown_checking_proxy({"a": {"b": 1}})
    with pytest.raises(KeyError):
        lazy["a"]["c"]
    assert lazy["a"].get("c", 2) == 2 and "b" in lazy["a"]
