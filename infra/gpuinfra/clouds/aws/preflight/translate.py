"""From Pulumi inputs (camelCase, as the engine records them) to an AWS API request.

pulumi-aws is generated from terraform-provider-aws, so a resource's inputs become API members the way the
provider's expanders build them (`expand*` functions in internal/service/<service>/). Most inputs map to
the member of the same name (compared case-insensitively, as `sseAlgorithm` -> `SSEAlgorithm`); a spec
names the exceptions: a renamed member, a value converted (the provider keeps some booleans and integers
as strings), an input the provider handles itself and never sends (DROP). An input that maps to nothing
is a gap in this table, reported as such rather than silently passed (fail closed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from botocore.model import Shape
from gpuinfra.clouds.aws.preflight.botocore_check import operation
from gpuinfra.graph import UNKNOWN

AUTONAME = UNKNOWN
"""A name Pulumi generates (logical name plus a random suffix, within the provider's length limit): not
known now, valid by construction."""


class _Drop:
    def __repr__(self) -> str:
        return "DROP"


DROP: Any = _Drop()
"""Spec value: the provider consumes this input itself (or in another call); it is not a request member."""


@dataclass(frozen=True)
class F:
    """How one input maps: to another member name, through a converter, with a spec for its fields."""

    to: str | None = None
    convert: Callable[[Any], Any] | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)


Spec = Mapping[str, Any]
"""input name -> member name (str) | F | DROP; names absent map case-insensitively."""


@dataclass
class Call:
    """One API request built from a resource's inputs, with the input path behind each member path."""

    service: str
    operation: str
    params: dict[str, Any] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)
    gaps: list[str] = field(default_factory=list)

    @property
    def input_shape(self) -> Shape:
        return operation(self.service, self.operation).input_shape

    def fill(self, inputs: Mapping[str, Any], spec: Spec | None = None, into: str = "", at: str = "") -> Call:
        """Map `inputs` (found at input path `at`) onto the structure member `into` (dotted, '' = top)."""
        target, shape, api = self.params, self.input_shape, ""
        for part in filter(None, into.split(".")):
            shape = shape.members[part]
            target = target.setdefault(part, {})
            api = f"{api}.{part}"
            self.paths.setdefault(api, at)
        mapped = _structure(dict(inputs), shape, spec or {}, self, api, at)
        target.update(mapped)
        return self

    def mapped(
        self, inputs: Mapping[str, Any], api_path: str, spec: Spec | None = None, at: str = ""
    ) -> dict[str, Any]:
        """`inputs` mapped onto the structure at `api_path` (`.BlockDeviceMappings[0].Ebs`), not placed:
        for members the translator assembles itself."""
        shape = self.input_shape
        for part in re.findall(r"\.(\w+)|\[\d+\]", api_path):
            shape = shape.members[part] if part else shape.member
        self.paths.setdefault(api_path, at)
        return _structure(dict(inputs), shape, spec or {}, self, api_path, at)

    def put(self, member: str, value: Any, at: str = "") -> Call:
        """Set a top-level member directly (a value the translator computed), remembering its input path."""
        if value is not None:
            self.params[member] = value
            if at:
                self.paths[f".{member}"] = at
        return self

    def input_path(self, api_path: str) -> str:
        """The input path behind an API member path (the longest mapped prefix, plus the rest)."""
        probe = api_path
        while probe:
            if probe in self.paths:
                rest = api_path[len(probe) :]
                return (self.paths[probe] + rest) if self.paths[probe] else rest.lstrip(".")
            cut = max(probe.rfind("."), probe.rfind("["))
            probe = probe[:cut] if cut > 0 else ""
        return api_path.lstrip(".")


def _member(shape: Shape, name: str) -> str | None:
    members = getattr(shape, "members", {})
    if name in members:
        return name
    lowered = name.lower()
    return next((m for m in members if m.lower() == lowered), None)


def _join(at: str, key: str | int) -> str:
    return f"{at}[{key}]" if isinstance(key, int) else (f"{at}.{key}" if at else key)


def _structure(inputs: dict[str, Any], shape: Shape, spec: Spec, call: Call, api: str, at: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in inputs.items():
        rule = spec.get(key)
        if rule is DROP or value is None:
            continue
        rule = F(to=rule) if isinstance(rule, str) else rule or F()
        member = rule.to or _member(shape, key)
        here = _join(at, key)
        if member is None or member not in shape.members:
            call.gaps.append(here)
            continue
        converted = rule.convert(value) if rule.convert else value
        out[member] = _value(converted, shape.members[member], rule.fields, call, f"{api}.{member}", here)
    return out


def _value(value: Any, shape: Shape, spec: Spec, call: Call, api: str, at: str) -> Any:
    call.paths.setdefault(api, at)
    if shape.type_name == "structure" and isinstance(value, dict):
        return _structure(value, shape, spec, call, api, at)
    if shape.type_name == "list" and isinstance(value, list):
        return [_value(v, shape.member, spec, call, f"{api}[{i}]", f"{at}[{i}]") for i, v in enumerate(value)]
    return value


# ---- converters: where terraform-provider-aws keeps a value in another type than the API's ------------
def bool_str(value: Any) -> Any:
    """ "true"/"false" -> bool (the provider's nullable booleans, e.g. launch template network interfaces)."""
    return {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value


def int_str(value: Any) -> Any:
    """ "106" -> 106 (the provider's string-typed integers, e.g. instance refresh `instance_warmup`)."""
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    return value


def float_str(value: Any) -> Any:
    try:
        return float(value) if isinstance(value, str) else value
    except ValueError:
        return value


def one(value: Any) -> Any:
    """A provider block of at most one element, sent as a structure (`aliases` -> AliasTarget)."""
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def listed(value: Any) -> Any:
    """A single value the API takes as a list (pulumi-aws `subnetIds` of FSx is a string)."""
    return value if isinstance(value, list) or value is None else [value]


def tag_list(key: str = "Key", val: str = "Value") -> Callable[[Any], Any]:
    """A tags map -> [{Key, Value}] (KMS spells them TagKey/TagValue)."""

    def convert(tags: Any) -> Any:
        if not isinstance(tags, dict):
            return tags
        return [{key: k, val: v} for k, v in tags.items()]

    return convert


def json_doc(value: Any) -> Any:
    """Policy documents are JSON strings in the request; a structure given instead is serialized."""
    return json.dumps(value) if isinstance(value, dict | list) else value


def without(inputs: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in inputs.items() if k not in keys}


__all__ = [
    "AUTONAME",
    "DROP",
    "Call",
    "F",
    "Spec",
    "bool_str",
    "float_str",
    "int_str",
    "json_doc",
    "listed",
    "one",
    "tag_list",
    "without",
]
