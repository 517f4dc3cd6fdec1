"""A documented rule the machine-readable models cannot express: an id, the rule, its source, a check."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeGuard

from gpuinfra.catalog import Catalog
from gpuinfra.findings import Finding
from gpuinfra.graph import Graph, Resource
from gpuinfra.preflight.findings import finding_at


@dataclass(frozen=True, slots=True)
class Violation:
    resource: Resource
    path: str
    value: Any
    message: str


Check = Callable[[Graph, Catalog], Iterable[Violation]]


@dataclass(frozen=True)
class Rule:
    id: str
    text: str
    """The rule, in one sentence, as its source states it."""
    source: str
    check: Check

    def run(self, graph: Graph, catalog: Catalog) -> Iterator[Finding]:
        for v in self.check(graph, catalog):
            yield finding_at(v.resource, self.id, v.path, v.value, f"{v.message} ({self.text})", self.source)


RULES: list[Rule] = []


def rule(id: str, text: str, source: str) -> Callable[[Check], Check]:
    """Register a documented rule (modules of this package are imported by its __init__)."""

    def register(check: Check) -> Check:
        if any(r.id == id for r in RULES):
            raise ValueError(f"duplicate preflight rule id {id}")
        RULES.append(Rule(id, text, source, check))
        return check

    return register


def judgeable_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


__all__ = ["RULES", "Rule", "Violation", "judgeable_number", "rule"]
