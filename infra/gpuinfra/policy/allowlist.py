"""The resource types the pack lets through, per account purpose, with the reason for each (data/resource_types.yaml).

Deny by default: the `unrecognised-resource` policy refuses any type this list does not name for the purpose of
the account a resource is deployed into. The list is data, not code, so a reviewer reads one file to see what
the pack trusts, and a test holds every row against the provider packages' own type tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import get_args

from ruamel.yaml import YAML

from gpuinfra.spec.org import Purpose

DATA_FILE = Path(__file__).parent / "data" / "resource_types.yaml"
PURPOSES: tuple[str, ...] = get_args(Purpose)
CATEGORIES = (
    "compute",
    "network",
    "edge",
    "data",
    "identity",
    "secrets",
    "observability",
    "scheduler",
    "kubernetes",
    "provider",
    "plumbing",
)
STACK_TYPE = "pulumi:pulumi:Stack"
COMPONENT_PACKAGE = "gpuinfra"
"""Type tokens `gpuinfra:<module>:<Name>` are this program's component resources: no provider plugin of that
name exists, so such a type can only be a component, which creates nothing itself (its children are judged)."""


@dataclass(frozen=True)
class Allowed:
    """One row: a resource type, what it is, which account purposes may hold it, and why."""

    type: str
    category: str
    purposes: tuple[str, ...]
    reason: str
    judged_by: tuple[str, ...] = ()


class AllowListError(ValueError):
    """The allow-list file is malformed: the pack cannot judge anything without it."""


@cache
def allow_list(path: Path = DATA_FILE) -> dict[str, Allowed]:
    """Every row of the allow-list, by type (read once per process)."""
    try:
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    except Exception as exc:  # a duplicate key, a YAML error: refuse to judge with a half-read list
        raise AllowListError(f"{path.name}: cannot be read: {exc}") from None
    rows = data.get("types") if isinstance(data, dict) else None
    if not isinstance(rows, dict):
        raise AllowListError(f"{path.name}: expected a mapping `types:` of resource type -> row")
    return {str(kind): _row(path, str(kind), row) for kind, row in rows.items()}


def _row(path: Path, kind: str, row: object) -> Allowed:
    if not isinstance(row, dict):
        raise AllowListError(f"{path.name}: types.{kind}: expected a mapping with category, purposes and reason")
    unknown = set(row) - {"category", "purposes", "reason", "judged_by"}
    purposes = tuple(str(p) for p in row.get("purposes") or ())
    problems = [
        *(f"unknown key {k!r}" for k in sorted(unknown)),
        *([] if row.get("category") in CATEGORIES else [f"category must be one of {', '.join(CATEGORIES)}"]),
        *([] if purposes else ["purposes: list the account purposes that may hold it"]),
        *(f"purpose {p!r} is none of {', '.join(PURPOSES)}" for p in purposes if p not in PURPOSES),
        *([] if str(row.get("reason") or "").strip() else ["reason: say why it may pass"]),
    ]
    if problems:
        raise AllowListError(f"{path.name}: types.{kind}: {'; '.join(problems)}")
    return Allowed(kind, str(row["category"]), purposes, str(row["reason"]), tuple(row.get("judged_by") or ()))


def exempt(resource_type: str) -> bool:
    """The stack itself and gpuinfra's components: they create nothing in a cloud."""
    return resource_type == STACK_TYPE or resource_type.split(":", 1)[0] == COMPONENT_PACKAGE


__all__ = ["CATEGORIES", "DATA_FILE", "PURPOSES", "AllowListError", "Allowed", "allow_list", "exempt"]
