"""What a property change does to a resource (updated in place, replaced, its instances refreshed), asked of the
cloud whose package the resource type is (the registry's `replacements` part: AWS's generated table, another
cloud's API definitions). A type no cloud marks is updated in place.

Like ParallelCluster's per-field update policy: a reviewer learns before `pulumi up` that a change deletes and
recreates the file system, or rolls every instance of a group.
"""

from __future__ import annotations

from typing import Any

from gpuinfra.clouds import type_part
from gpuinfra.graph import UNKNOWN

UPDATE = "update"
REPLACE = "replace"
REFRESH = "refresh"
"""In place, but the group replaces its running instances (instance refresh)."""
MAY_REPLACE = "may-replace"
"""A replacing property whose new value is unknown until apply."""
UNKNOWN_EFFECT = "unknown"

Effect = tuple[str, str | None]
"""(effect, source id or why)."""


class Replacements:
    """The diff's question, one answer per (type, property path, before, after, the resource's inputs)."""

    def effect(self, type_: str, path: str, before: Any, after: Any, inputs: dict[str, Any]) -> Effect:
        own = type_part(type_, "replacements")  # (type, path, before, after, inputs) -> Effect | None
        marked = own(type_, path, before, after, inputs) if own is not None else None
        if marked is not None:
            return marked  # type: ignore[no-any-return]
        return (UNKNOWN_EFFECT if after == UNKNOWN else UPDATE), None


def replacements() -> Replacements:
    return Replacements()


__all__ = ["MAY_REPLACE", "REFRESH", "REPLACE", "UNKNOWN_EFFECT", "UPDATE", "Effect", "Replacements", "replacements"]
