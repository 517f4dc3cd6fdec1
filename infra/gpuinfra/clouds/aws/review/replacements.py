"""AWS's replacement table (the registry's `replacements` for the aws and aws-native packages): which property
changes replace a resource instead of updating it, from AWS's own catalog (clouds/aws/catalog/data/replacements.yaml),
which tools/replacements_build.py generates from the providers' own definitions at the pinned versions
(terraform-provider-aws ForceNew for pulumi-aws, CloudFormation createOnlyProperties for pulumi-aws-native).
The review asks `effect(type, path, before, after, inputs)` through gpuinfra.review.effects.
"""

from __future__ import annotations

import datetime
import re
from functools import lru_cache
from typing import Any

from gpuinfra.catalog.load import CatalogError
from gpuinfra.clouds.aws.catalog import DATA_DIR
from gpuinfra.graph import UNKNOWN
from gpuinfra.review.effects import MAY_REPLACE, REFRESH, REPLACE, UPDATE, Effect
from pydantic import BaseModel, ConfigDict


class ReplacementRule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    types: list[str]
    source: str
    file: str | None = None
    """The provider source file (terraform) or CloudFormation type the marks were read from."""
    as_of: datetime.date | None = None
    carried: bool = False
    """Carried from an earlier hand-kept table: its source was not in the checkout the tool was given."""
    lines: dict[str, int] = {}
    """Property -> line of its ForceNew in `file`."""
    replace: list[str] = []
    replace_if_decreased: list[str] = []
    replace_when: dict[str, str] = {}
    refresh: list[str] = []


_INDEX = re.compile(r"\[[^\]]*\]")


def _under(path: str, prop: str) -> bool:
    """`path` is `prop` or inside it; list indices are ignored (`rootBlockDevice[0].kmsKeyId` is under
    `rootBlockDevice.kmsKeyId`)."""
    bare = _INDEX.sub("", path)
    return bare == prop or bare.startswith(prop + ".") or path.startswith(prop + "[")


class Rules:
    def __init__(self, rules: list[ReplacementRule]) -> None:
        self.rows: dict[str, list[ReplacementRule]] = {}
        for rule in rules:
            for t in rule.types:
                self.rows.setdefault(t, []).append(rule)
        self.by_type = {t: rows[0] for t, rows in self.rows.items()}

    def effect(self, type_: str, path: str, before: Any, after: Any, inputs: dict[str, Any]) -> Effect | None:
        """(effect, source id) of changing `path` from `before` to `after` on a resource of `type_`: the first row
        of the type that marks the path decides (a type may have rows from two sources); None: no row marks it."""
        for rule in self.rows.get(type_, []):
            found = self._effect(rule, path, before, after, inputs)
            if found is not None:
                return found
        return None

    @staticmethod
    def _effect(
        rule: ReplacementRule, path: str, before: Any, after: Any, inputs: dict[str, Any]
    ) -> tuple[str, str | None] | None:
        unknown = after == UNKNOWN
        if any(_under(path, p) for p in rule.replace):
            return (MAY_REPLACE if unknown else REPLACE), rule.source
        for prop in rule.replace_if_decreased:
            if _under(path, prop) and isinstance(before, int | float) and isinstance(after, int | float):
                return (REPLACE if after < before else UPDATE), rule.source
        for prop, flag in rule.replace_when.items():
            if _under(path, prop) and inputs.get(flag) is True:
                return REPLACE, rule.source
        if any(_under(path, p) for p in rule.refresh):
            return REFRESH, rule.source
        return None


def load_table() -> dict[str, Any]:
    """The generated table as data: `pins` (the provider versions it was generated at) and `rules`."""
    from ruamel.yaml import YAML

    return dict(YAML(typ="safe", pure=True).load((DATA_DIR / "replacements.yaml").read_text(encoding="utf-8")))


@lru_cache(maxsize=1)
def load_rules() -> Rules:
    from gpuinfra.catalog import load_catalog

    rows = load_table()["rules"]
    rules = [ReplacementRule.model_validate(row) for row in rows]
    unknown = sorted({r.source for r in rules} - set(load_catalog().sources))
    if unknown:
        raise CatalogError(f"replacements.yaml cites unknown sources: {', '.join(unknown)}")
    return Rules(rules)


def effect(type_: str, path: str, before: Any, after: Any, inputs: dict[str, Any]) -> Effect | None:
    """The registry's part: the table's mark for the change, None when no row marks it."""
    return load_rules().effect(type_, path, before, after, inputs)


__all__ = ["ReplacementRule", "Rules", "effect", "load_rules", "load_table"]
