"""Plant one violation into a copy of a real example graph (or add one resource to it)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from gpuinfra.graph import Graph, Resource
from helpers import example_graph

Mutate = Callable[[dict[str, Any]], None]


def planted(graph: Graph, type_: str, mutate: Mutate, index: int = 0) -> tuple[Graph, Resource]:
    """`graph` with the `index`-th resource of `type_` changed by `mutate` (on a deep copy of its inputs)."""
    target = graph.of_type(type_)[index]
    inputs = copy.deepcopy(target.inputs)
    mutate(inputs)
    changed = replace(target, inputs=inputs)
    return Graph.of(
        graph.stack, graph.project, [changed if r.urn == target.urn else r for r in graph.resources]
    ), changed


def added(
    graph: Graph, type_: str, name: str, inputs: dict[str, Any], like: str, deps: tuple[str, ...] = ()
) -> tuple[Graph, Resource]:
    """`graph` plus one resource of `type_`, with the provider of the first resource of type `like`."""
    template = graph.of_type(like)[0]
    urn = f"urn:pulumi:{graph.stack}::{graph.project}::{type_}::{name}"
    deps_urns = tuple(r.urn for r in graph.resources if r.name in deps)
    resource = Resource(urn, type_, name, template.parent, template.provider, True, deps_urns, inputs)
    return Graph.of(graph.stack, graph.project, [*graph.resources, resource]), resource


@dataclass(frozen=True)
class Plant:
    """A violation: in `stack`, the resource of `type_` changed by `mutate` (or `add`ed), and the rule and
    input path that must catch it."""

    stack: str
    type_: str
    rule: str
    path: str
    mutate: Mutate | None = None
    add: dict[str, Any] | None = None
    like: str = ""
    deps: tuple[str, ...] = ()
    index: int = 0
    why: str = field(default="")

    @property
    def id(self) -> str:
        return f"{self.type_.rsplit(':', 1)[-1]}-{self.rule}-{self.path}"

    def graph(self) -> tuple[Graph, Resource]:
        base = example_graph(self.stack)
        if self.add is not None:
            return added(
                base, self.type_, f"planted-{self.type_.rsplit(':', 1)[-1].lower()}", self.add, self.like, self.deps
            )
        assert self.mutate is not None
        return planted(base, self.type_, self.mutate, self.index)


def setting(path: str, value: Any) -> Mutate:
    """A mutation that sets `a.b[2].c` = value (creating dicts on the way)."""
    import re

    parts: list[str | int] = [int(p) if p.isdigit() else p for p in re.findall(r"[^.\[\]]+", path)]

    def mutate(inputs: dict[str, Any]) -> None:
        node: Any = inputs
        for key in parts[:-1]:
            node = node[key] if isinstance(key, int) else node.setdefault(key, {})
        node[parts[-1]] = value

    return mutate


def removing(key: str) -> Mutate:
    def mutate(inputs: dict[str, Any]) -> None:
        inputs.pop(key, None)

    return mutate


__all__ = ["Plant", "added", "planted", "removing", "setting"]
