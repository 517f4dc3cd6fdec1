"""Policy pack configuration, reconciled the way the Pulumi CLI does before it calls `Configure`.

The CLI (pkg/resource/analyzer/config.go `ReconcilePolicyPackConfig`) starts from each policy's
default enforcement level and its schema's `default` values, applies the pack's programmatic
`initial_config`, then the user's config file (`pulumi preview --policy-pack-config FILE`, the same
file `gpuinfra preview --policy-config FILE` takes), where `"all"` sets every policy's level. The
result is validated against each policy's schema. This module does the same, a little stricter:
unknown policy or property names are errors here (the CLI ignores them silently).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuinfra.errors import InputError, Problem

LEVELS = ("advisory", "mandatory", "remediate", "disabled")
ALL = "all"


@dataclass(frozen=True)
class PolicyMeta:
    """What the engine learns about a policy from GetAnalyzerInfo."""

    name: str
    level: str
    properties: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The config schema's properties (JSON Schema per property)."""
    required: tuple[str, ...] = ()


@dataclass(frozen=True)
class PolicyConfig:
    """One policy's reconciled configuration: its enforcement level and properties."""

    level: str
    properties: dict[str, Any] = field(default_factory=dict)


Given = Mapping[str, PolicyConfig | str | Mapping[str, Any]]


def parse_config(data: Any, source: str = "policy config") -> dict[str, PolicyConfig]:
    """The CLI's config format: {"policy": "mandatory" | {"enforcementLevel": ..., "prop": ...}, "all": ...}."""
    if not isinstance(data, Mapping):
        raise InputError([Problem(f"{source} must be a JSON object of policy names")])
    problems: list[Problem] = []
    out: dict[str, PolicyConfig] = {}
    for name, value in data.items():
        if isinstance(value, PolicyConfig):
            out[name] = value
            continue
        if isinstance(value, str):
            level, props = value, {}
        elif isinstance(value, Mapping):
            props = dict(value)
            level = props.pop("enforcementLevel", "")
        else:
            problems.append(Problem(f"{source}: {name!r} must be an enforcement level or an object, not {value!r}"))
            continue
        if level and level not in LEVELS:
            problems.append(
                Problem(f"{source}: {name!r} has enforcement level {level!r}", hint=f"use one of {', '.join(LEVELS)}")
            )
            continue
        if level or props:
            out[name] = PolicyConfig(level, props)
    if problems:
        raise InputError(problems)
    return out


MAX_CONFIG_BYTES = 1024 * 1024
"""A policy config names a few dozen policies: a megabyte is thousands of times what one needs."""
CONFIG_HINT = "give a JSON object of policy names, as for `pulumi preview --policy-pack-config`"


def load_config_file(path: Path) -> dict[str, PolicyConfig]:
    """Read the user's config file, bounded like every file gpuinfra reads (gpuinfra.spec.files)."""
    from gpuinfra.spec.files import loads_json, read_text

    text = read_text(path, "the policy config", MAX_CONFIG_BYTES, CONFIG_HINT)
    try:
        data = loads_json(text, path, "the policy config", CONFIG_HINT) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise InputError([Problem(f"the policy config is not JSON: {exc.msg}", file=path, line=exc.lineno)]) from None
    return parse_config(data, str(path))


def reconcile(
    policies: Iterable[PolicyMeta], initial: Given | None = None, given: Given | None = None
) -> dict[str, PolicyConfig]:
    """Defaults, then the pack's initial config, then the user's; validated against each schema."""
    metas = {p.name: p for p in policies}
    result = {
        p.name: PolicyConfig(p.level, {k: v["default"] for k, v in p.properties.items() if "default" in v})
        for p in metas.values()
    }
    for layer, source in ((initial, "the pack's initial config"), (given, "policy config")):
        if layer:
            result = _apply(result, parse_config(layer, source), metas, source)
    problems = [
        Problem(f"policy {name}: {message}")
        for name, config in result.items()
        for message in _schema_errors(metas[name], config.properties)
    ]
    if problems:
        raise InputError(problems)
    return result


def _apply(
    result: dict[str, PolicyConfig], layer: dict[str, PolicyConfig], metas: Mapping[str, PolicyMeta], source: str
) -> dict[str, PolicyConfig]:
    from gpuinfra.spec import did_you_mean

    unknown = sorted(set(layer) - set(metas) - {ALL})
    if unknown:
        raise InputError(
            [Problem(f"{source} names unknown policy {n!r}", hint=did_you_mean(n, metas)) for n in unknown]
        )
    out = dict(result)
    everyone = layer.get(ALL)
    if everyone is not None and everyone.level:
        out = {name: PolicyConfig(everyone.level, c.properties) for name, c in out.items()}
    for name, config in layer.items():
        if name == ALL:
            continue
        current = out[name]
        out[name] = PolicyConfig(config.level or current.level, {**current.properties, **config.properties})
    return out


_TYPES: dict[str, tuple[type, ...]] = {
    "boolean": (bool,),
    "string": (str,),
    "array": (list, tuple),
    "object": (dict,),
    "integer": (int,),
    "number": (int, float),
}


def _schema_errors(meta: PolicyMeta, properties: Mapping[str, Any]) -> list[str]:
    """The subset of JSON Schema the pack's schemas use: type, enum, minimum, maximum, items.type, required."""
    errors = [f"{name} is required" for name in meta.required if name not in properties]
    for name, value in properties.items():
        schema = meta.properties.get(name)
        if schema is None:
            from gpuinfra.spec import did_you_mean

            hint = did_you_mean(name, meta.properties)
            errors.append(f"unknown property {name!r}" + (f" ({hint})" if hint else ""))
            continue
        errors += [f"{name}: {e}" for e in _value_errors(schema, value)]
    return errors


def _value_errors(schema: Mapping[str, Any], value: Any) -> list[str]:
    kind = schema.get("type")
    if kind in _TYPES:
        ok = isinstance(value, _TYPES[kind]) and not (kind in ("integer", "number") and isinstance(value, bool))
        if kind == "integer" and isinstance(value, float):
            ok = value.is_integer()
        if not ok:
            return [f"{value!r} is not of type {kind}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{value!r} is not one of {schema['enum']}"]
    if "minimum" in schema and value < schema["minimum"]:
        return [f"{value!r} is less than the minimum {schema['minimum']}"]
    if "maximum" in schema and value > schema["maximum"]:
        return [f"{value!r} is greater than the maximum {schema['maximum']}"]
    if kind == "array" and isinstance(schema.get("items"), Mapping):
        return [e for item in value for e in _value_errors(schema["items"], item)]
    return []


__all__ = ["ALL", "LEVELS", "PolicyConfig", "PolicyMeta", "load_config_file", "parse_config", "reconcile"]
