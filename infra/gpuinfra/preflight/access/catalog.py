"""AWS's IAM action catalog: every service's actions, from the Service Authorization Reference as the `parliament`
library bundles it (its iam_definition.json, pinned in pyproject.toml). Read as package data, without importing
parliament: its __init__ imports pkg_resources, which setuptools 81+ no longer ships."""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from gpuinfra.preflight.access.match import like


@lru_cache(maxsize=1)
def definitions() -> list[dict[str, Any]]:
    """parliament's bundled iam_definition.json: one entry per service (prefix, privileges, access levels). Parsed
    with orjson (as preview documents are): 4 MB, a fifth of the time of the standard library's parser."""
    spec = importlib.util.find_spec("parliament")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the parliament package (the IAM action catalog) is not installed")
    folder = Path(next(iter(spec.submodule_search_locations)))
    return list(orjson.loads((folder / "iam_definition.json").read_bytes()))


@lru_cache(maxsize=1)
def iam_catalog() -> dict[str, tuple[str, ...]]:
    """Service prefix -> its actions (lower case)."""
    catalog: dict[str, tuple[str, ...]] = {}
    for service in definitions():
        prefix = service["prefix"].lower()
        catalog[prefix] = catalog.get(prefix, ()) + tuple(p["privilege"].lower() for p in service["privileges"])
    return catalog


@lru_cache(maxsize=4096)
def expand(pattern: str, services: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The catalog's actions (`service:action`, lower case) an Action pattern matches with IAM's wildcards (`*`,
    `?`, case-insensitive), among `services` when given (a resource policy is asked only its own service's
    actions); () when none does (a typo, or an action newer than the catalog)."""
    prefix, _, name = pattern.lower().partition(":")
    if pattern == "*":
        prefix, name = "*", "*"
    if not name:
        return ()
    return tuple(
        f"{service}:{action}"
        for service, actions in iam_catalog().items()
        if (not services or service in services) and like(prefix, service)
        for action in actions
        if like(name, action)
    )


__all__ = ["definitions", "expand", "iam_catalog"]
