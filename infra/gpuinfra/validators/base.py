"""Findings, levels and the rule registry.

A rule is a generator function registered with `@rule(level)`. Its id is its name in kebab-case,
its workload is the type annotation of its `spec` parameter, and it receives only the arguments it
names (spec, plan, org, account, catalog, config) so it can be tested without building anything.
It yields `Failure(message, path, hint)`; the runner turns those into `Finding`s (gpuinfra.findings, the one
finding type of every stage) with id and level.
"""

from __future__ import annotations

import inspect
import math
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from gpuinfra.errors import FieldPath
from gpuinfra.findings import Finding, Level


@dataclass(frozen=True)
class Failure:
    """What a rule reports: what is wrong, where (path inside the spec) and what to change."""

    message: str
    path: FieldPath = ()
    hint: str | None = None


Rule = Callable[..., Iterator[Failure]]


def floor_2(x: float) -> str:
    """`x` rounded down to two significant decimals (at least two places): a figure to write that is at or
    below it, never 0."""
    places = max(2, 1 - math.floor(math.log10(x))) if x > 0 else 2
    return f"{math.floor(x * 10**places) / 10**places:.{places}f}"


@dataclass(frozen=True)
class RegisteredRule:
    id: str
    level: Level
    spec_type: type
    fn: Rule
    params: tuple[str, ...]
    suppressible: bool = False
    """An error a spec may still silence by id: a knowingly accepted risk (failover-short), never a spec AWS or
    the planner would refuse."""

    @property
    def doc(self) -> str:
        return (inspect.getdoc(self.fn) or "").split("\n")[0]


RULES: dict[str, RegisteredRule] = {}


def rule_id(fn: Callable[..., Any]) -> str:
    return fn.__name__.strip("_").replace("_", "-")


def rule(level: Level, *, suppressible: bool = False) -> Callable[[Rule], Rule]:
    """Register a validator; its id is derived from its name, its workload from `spec`'s type. Warnings are
    always suppressible; an error only when registered `suppressible`."""

    def register(fn: Rule) -> Rule:
        hints = typing.get_type_hints(fn)
        spec_type = hints.get("spec")
        if spec_type is None:
            raise TypeError(f"rule {fn.__name__} must take a typed `spec` parameter")
        rid = rule_id(fn)
        if rid in RULES:
            raise TypeError(f"duplicate rule id {rid}")
        params = tuple(inspect.signature(fn).parameters)
        RULES[rid] = RegisteredRule(rid, level, spec_type, fn, params, suppressible or level < Level.ERROR)
        return fn

    return register


__all__ = ["RULES", "Failure", "Finding", "Level", "RegisteredRule", "Rule", "floor_2", "rule", "rule_id"]
