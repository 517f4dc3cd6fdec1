"""The resource graph: every registration a Pulumi program makes, as plain data.

It is what `pulumi up` would be asked to create. The engine produces it in-process; a real
`pulumi preview --json` or `pulumi stack export` can be read into the same shape. Policies, cost and
diff read only this, never the Pulumi SDK.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
"""Pulumi's sentinel for a value not known until the resource exists."""
SECRET = "[secret]"
"""How `pulumi preview --json` shows a secret; the engine records secrets the same way."""
STACK_TYPE = "pulumi:pulumi:Stack"
MIN_EMBEDDED = 8
"""The shortest stand-in looked for inside a text (an FSx mount name is 8 characters): shorter ones would match
ordinary words."""


@dataclass(frozen=True, slots=True)
class Resource:
    urn: str
    type: str
    name: str
    parent: str | None = None
    provider: str | None = None
    """URN of the provider resource (without the `::id` suffix)."""
    custom: bool = True
    dependencies: tuple[str, ...] = ()
    inputs: dict[str, Any] = field(default_factory=dict)
    protect: bool = False
    """Pulumi's `protect` option: the engine refuses to delete (or replace) it."""
    retain_on_delete: bool = False
    """Pulumi's `retainOnDelete` option: deleting it drops it from the state and leaves it in the cloud."""
    delete_before_replace: bool = False
    """Pulumi's `deleteBeforeReplace` option: a replacement deletes the old resource before creating the new one."""
    ignore_changes: tuple[str, ...] = ()
    """Pulumi's `ignoreChanges` option: inputs whose changes the engine does not diff."""

    @property
    def key(self) -> str:
        """Type and logical name: how a resource is matched across two graphs."""
        return f"{self.type}::{self.name}"

    @property
    def is_provider(self) -> bool:
        return self.type.startswith("pulumi:providers:")

    @property
    def is_component(self) -> bool:
        return not self.custom and self.type != STACK_TYPE


@dataclass(frozen=True)
class Graph:
    """All resources of one stack, sorted by URN (deterministic whatever order they registered in)."""

    stack: str
    project: str
    resources: tuple[Resource, ...]
    after_apply: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    """Values the embedded engine stood in for (an id, an ARN, an autonamed name, a looked-up AMI) -> what they
    stand for: `pulumi preview` knows them only after apply (or reads them from the cloud), so a report shows
    them as such, never as real (pulumi/engine/mocks.py). The graph keeps the stand-ins themselves: they are
    stable per resource name, which is what a diff of two previews compares."""

    @classmethod
    def of(
        cls, stack: str, project: str, resources: Iterable[Resource], after_apply: dict[str, str] | None = None
    ) -> Graph:
        return cls(stack, project, tuple(sorted(resources, key=lambda r: r.urn)), dict(after_apply or {}))

    def shown(self, value: object) -> str:
        """`value` as a report shows it: a stand-in becomes what it stands for."""
        text = str(value)
        return self.after_apply.get(text, text)

    def masked(self, text: str, mark: str) -> str:
        """`text` (a policy document, user data) with each stand-in inside it replaced by `mark`: an ARN in a
        policy is as invented as the same ARN on its own. Whole tokens only, longest first (an id inside its DNS
        name goes with the name); bare numbers (template versions) are stand-ins only as whole values."""
        pattern = self._stand_ins
        return pattern.sub(mark, text) if pattern is not None else text

    @cached_property
    def _stand_ins(self) -> re.Pattern[str] | None:
        words = sorted((v for v in self.after_apply if len(v) >= MIN_EMBEDDED and not v.isdigit()), key=len)
        if not words:
            return None
        alternatives = "|".join(re.escape(w) for w in reversed(words))
        return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])")

    @cached_property
    def by_urn(self) -> dict[str, Resource]:
        return {r.urn: r for r in self.resources}

    @cached_property
    def _by_type(self) -> dict[str, list[Resource]]:
        index: dict[str, list[Resource]] = defaultdict(list)
        for r in self.resources:
            index[r.type].append(r)
        return index

    def of_type(self, *types: str) -> list[Resource]:
        return [r for t in types for r in self._by_type.get(t, [])]

    def one(self, type_: str) -> Resource:
        found = self.of_type(type_)
        if len(found) != 1:
            raise LookupError(f"expected one {type_}, found {len(found)}")
        return found[0]

    def named(self, type_: str, name: str) -> Resource:
        for r in self.of_type(type_):
            if r.name == name:
                return r
        raise LookupError(f"no {type_} named {name}")

    def providers(self) -> list[Resource]:
        return [r for r in self.resources if r.is_provider]

    def provider_of(self, resource: Resource) -> Resource | None:
        return self.by_urn.get(resource.provider or "")

    def component_of(self, resource: Resource) -> Resource | None:
        """The nearest component ancestor (not the stack)."""
        parent = self.by_urn.get(resource.parent or "")
        while parent is not None and not parent.is_component:
            parent = self.by_urn.get(parent.parent or "")
        return parent

    def ancestors(self, resource: Resource) -> Iterator[Resource]:
        parent = self.by_urn.get(resource.parent or "")
        while parent is not None:
            yield parent
            parent = self.by_urn.get(parent.parent or "")

    def dependencies_of(self, resource: Resource, *types: str) -> list[Resource]:
        """Resources `resource` depends on, optionally only of the given types."""
        found = (self.by_urn[u] for u in resource.dependencies if u in self.by_urn)
        return [r for r in found if not types or r.type in types]

    def custom_resources(self) -> list[Resource]:
        return [r for r in self.resources if r.custom and not r.is_provider]


def is_known(value: Any) -> bool:
    """False for Pulumi's unknown sentinel, anywhere inside `value`."""
    if value == UNKNOWN:
        return False
    if isinstance(value, dict):
        return all(is_known(v) for v in value.values())
    if isinstance(value, list):
        return all(is_known(v) for v in value)
    return True


def judgeable(value: Any) -> bool:
    """A value a schema can judge: no Pulumi unknown inside a string, not a blinded secret (preflight's test,
    for every cloud's definitions and Kubernetes')."""
    return not (isinstance(value, str) and (UNKNOWN in value or value == SECRET))


__all__ = ["SECRET", "STACK_TYPE", "UNKNOWN", "Graph", "Resource", "is_known", "judgeable"]
