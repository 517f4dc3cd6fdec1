"""Turn Pydantic validation errors into Problems that say where, what, and what to change."""

from __future__ import annotations

import difflib
import functools
import json
import types
import typing
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, StringConstraints, ValidationError
from pydantic.fields import FieldInfo

import gpuinfra.spec.base as base
from gpuinfra.errors import FieldPath, Problem
from gpuinfra.spec.base import Invalid
from gpuinfra.spec.docs import field_description
from gpuinfra.spec.target import TAG_PREFIX
from gpuinfra.spec.yamlfile import YamlDocument


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """A hint naming the closest choices, or None when nothing is close."""
    close = difflib.get_close_matches(str(word), sorted(choices), n=3, cutoff=0.6)
    if not close:
        return None
    return "did you mean " + " or ".join(repr(c) for c in close) + "?"


def with_article(word: str) -> str:
    """'a training', 'an inference': the article messages need."""
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def validation_problems(
    error: ValidationError, model: type[BaseModel], doc: YamlDocument, prefix: FieldPath = ()
) -> list[Problem]:
    """One Problem per Pydantic error, located in `doc` under `prefix`."""
    problems = []
    for err in error.errors(include_url=False):
        loc = tuple(p for p in err["loc"] if not _is_union_tag(p))
        path = (*prefix, *loc)
        problems.append(_problem(err, loc, model, doc, path))
    return problems


MAX_SHOWN = 60
"""Characters of an offending value a message shows (a 100,000-character value is not echoed)."""
KIND_HINTS = {
    "int_type": "write a whole number, without quotes",
    "int_from_float": "write a whole number",
    "float_type": "write a number, without quotes",
    "bool_type": "write true or false, without quotes",
    "string_type": "write text (quote it if YAML reads it as a number, a date or a boolean)",
    "finite_number": "write a finite number (not .inf or .nan)",
    "list_type": "write a list (- item per line)",
    "dict_type": "write a mapping (key: value per line)",
    "model_type": "write a mapping (key: value per line)",
    "greater_than": "use a larger value",
    "greater_than_equal": "use a larger value",
    "less_than": "use a smaller value",
    "less_than_equal": "use a smaller value",
    "string_too_long": "shorten it",
    "string_too_short": "write a longer value",
    "too_long": "remove entries",
    "too_short": "add entries",
    "string_pattern_mismatch": "write a value of the form the field describes",
    "literal_error": "use one of the values listed",
    "enum": "use one of the values listed",
    "union_tag_invalid": "use one of the values listed",
    "int_parsing": "write a whole number, without quotes",
    "float_parsing": "write a number, without quotes",
    "decimal_type": "write a number, without quotes",
    "decimal_parsing": "write a number",
    "value_error": "change the value as the message says",
}
GENERIC_HINT = "see `gpuinfra schema` for the fields, their types and limits"


def shown(value: Any, limit: int = MAX_SHOWN) -> str:
    """A value as the user wrote it (JSON-like, never a Python repr), cut to `limit` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = str(type(value).__name__)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _problem(err: Any, loc: FieldPath, model: type[BaseModel], doc: YamlDocument, path: FieldPath) -> Problem:
    """The problem at `path`: the message, the field's own description (never a raw regex) and a hint. A
    cross-field check (`Invalid`) names the field it is about and its own hint."""
    raised = (err.get("ctx") or {}).get("error")
    if isinstance(raised, Invalid):
        loc, path = (*loc, *raised.at), (*path, *raised.at)
    message, hint = _message(err, loc, model)
    if isinstance(raised, Invalid) and raised.hint:
        hint = raised.hint
    about = description_at(model, loc)
    hint = hint or KIND_HINTS.get(err["type"]) or GENERIC_HINT
    problem = doc.problem(message, path, hint=hint)
    return replace(problem, about=about) if about else problem


def _literal_edit(given: Any, options: list[str], loc: FieldPath) -> str | None:
    """The YAML that writes the allowed value closest to `given`: the nearest number, else the closest spelling;
    None when nothing is close or the field has no name."""
    field = loc[-1] if loc and isinstance(loc[-1], str) else None
    numbers = [o for o in options if o.lstrip("-").isdigit()]
    ask = ""
    if isinstance(given, int | float) and not isinstance(given, bool) and numbers:
        closest: str | None = min(numbers, key=lambda o: (abs(int(o) - given), int(o)))
    else:
        close = difflib.get_close_matches(str(given), options, n=1, cutoff=0.6)
        closest = close[0] if close else None
        ask = f"did you mean {closest!r}? " if closest else ""
    if field is None:
        return did_you_mean(str(given), options) if isinstance(given, str) else None
    if closest is None:
        return "write one of " + ", ".join(f"`{field}: {o}`" for o in options) if options else None
    return f"{ask}write `{field}: {closest}` (one of {', '.join(options)})"


def _message(err: Any, loc: FieldPath, model: type[BaseModel]) -> tuple[str, str | None]:
    kind = err["type"]
    given = err.get("input")
    if kind == "extra_forbidden":
        name = str(loc[-1]) if loc else "?"
        fields = field_names_at(model, loc[:-1])
        hint = did_you_mean(name, fields) or (f"allowed fields: {', '.join(sorted(fields))}" if fields else None)
        return f"unknown field {name!r}", hint
    if kind == "missing":
        return "required field is missing", (f"add `{missing_snippet(model, loc)}`" if loc else None)
    if kind in ("value_error", "assertion_error"):
        return str(err["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, "), None
    message = str(err["msg"])
    if kind == "literal_error":
        expected = err.get("ctx", {}).get("expected", "")
        options = [o.strip().strip("'") for o in expected.replace(" or ", ",").split(",") if o.strip()]
        return f"{message}, got {shown(given)}", _literal_edit(given, options, loc)
    if kind == "string_pattern_mismatch":
        form = _forms().get(err["ctx"]["pattern"])
        if form is None and not description_at(model, loc):
            form = f"the form {err['ctx']['pattern']}"
        return f"{shown(given)} does not have the expected form", (f"expected: {form}" if form else None)
    if kind in ("string_too_long", "too_long") and given is not None:
        return f"{message}, got {len(given):,}", None
    if not isinstance(given, dict | list):
        message += f", got {shown(given)}"
    return message, _bound_edit(kind, err.get("ctx") or {}, given, loc)


BOUNDS = {"greater_than_equal": "ge", "less_than_equal": "le", "greater_than": "gt", "less_than": "lt"}


def _bound_edit(kind: str, ctx: dict[str, Any], given: Any, loc: FieldPath) -> str | None:
    """The YAML that writes the nearest value inside a numeric bound: the bound itself when it is inclusive, the
    next whole number past it for an integer, else None (a float just above an open bound is the user's to pick)."""
    key = BOUNDS.get(kind)
    field = loc[-1] if loc and isinstance(loc[-1], str) else None
    if key is None or field is None or key not in ctx:
        return None
    bound = ctx[key]
    if key in ("ge", "le"):
        value: Any = bound
    elif isinstance(given, int) and not isinstance(given, bool) and isinstance(bound, int):
        value = bound + 1 if key == "gt" else bound - 1
    else:
        return None
    return f"write `{field}: {value:g}`" if isinstance(value, float) else f"write `{field}: {value}`"


def missing_snippet(model: type[BaseModel], loc: FieldPath) -> str:
    """The YAML to write for a missing required field: `name: <type>`, or for a section its required fields in
    flow style (`kv_cache: {layers: <int>, kv_heads: <int>, head_dim: <int>}`), each placeholder a YAML string."""
    name = str(loc[-1])
    info = field_info_at(model, loc)
    kind = _unwrap(info.annotation) if info is not None else None
    if kind is not None and _is_model(kind):
        required = [(n, f) for n, f in kind.model_fields.items() if f.is_required()]
        inner = ", ".join(f"{n}: <{_type_word(f.annotation)}>" for n, f in required)
        return f"{name}: {{{inner}}}"
    return f"{name}: <{_type_word(info.annotation) if info is not None else 'value'}>"


def _type_word(annotation: Any) -> str:
    """A short word for a field's type in a placeholder (int, number, text, list, section, one of a|b)."""
    kind = _unwrap(annotation)
    if typing.get_origin(kind) is typing.Literal:
        return "|".join(str(a) for a in typing.get_args(kind))
    if _is_model(kind):
        return "section"
    origin = typing.get_origin(kind)
    if origin in (list, tuple, set):
        return "list"
    if origin is dict:
        return "map"
    return {int: "int", float: "number", str: "text", bool: "true|false"}.get(kind, "value")


@functools.cache
def _forms() -> dict[str, str]:
    """Pattern -> the human description of the shared constrained types (spec/base.py), so a pattern error on a
    field with its own docstring still says what form is expected."""
    forms = {}
    for value in vars(base).values():
        if typing.get_origin(value) is not typing.Annotated:
            continue
        meta = typing.get_args(value)[1:]
        pattern = next((m.pattern for m in meta if isinstance(m, StringConstraints) and m.pattern), None)
        described = next((m.description for m in meta if isinstance(m, FieldInfo) and m.description), None)
        if isinstance(pattern, str) and described:
            forms[pattern] = described
    return forms


def field_info_at(model: type[BaseModel], loc: FieldPath) -> Any:
    """The FieldInfo at `loc` (following nested models, lists and dicts); None if none."""
    return _field_at(model, loc)[2]


def description_at(model: type[BaseModel], loc: FieldPath) -> str | None:
    """The description of the field at `loc` (its docstring, spec/docs.py), for a problem to quote."""
    owner, name, _ = _field_at(model, loc)
    return field_description(owner, name) if owner is not None and name is not None else None


def _field_at(model: type[BaseModel], loc: FieldPath) -> tuple[type[BaseModel] | None, str | None, Any]:
    """(the model that holds the field at `loc`, its name, its FieldInfo), each None when `loc` reaches none."""
    current: Any = model
    found: tuple[type[BaseModel] | None, str | None, Any] = (None, None, None)
    for part in loc:
        if _is_model(current) and isinstance(part, str):
            info = current.model_fields.get(part)
            if info is None:
                return None, None, None
            found = (current, part, info)
            current = _unwrap(info.annotation)
        else:
            current = _element_type(current)
    return found


def _is_union_tag(part: Any) -> bool:
    """Pydantic inserts the union member's name into loc (e.g. 'int', 'literal['auto']')."""
    return isinstance(part, str) and (
        part.startswith(("literal[", "function-", TAG_PREFIX)) or part in {"int", "str", "float", "constrained-int"}
    )


def field_names_at(model: type[BaseModel], loc: FieldPath) -> list[str]:
    """Field names of the model found by following `loc` through nested models, lists and dicts."""
    current: Any = model
    for part in loc:
        if _is_model(current) and isinstance(part, str):
            field = current.model_fields.get(part)
            if field is None:
                return []
            current = _unwrap(field.annotation)
        else:
            current = _element_type(current)
    return list(current.model_fields) if _is_model(current) else []


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _unwrap(tp: Any) -> Any:
    """Strip Optional/Annotated to the model or container type underneath."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        members = [_unwrap(a) for a in typing.get_args(tp) if a is not type(None)]
        models = [m for m in members if _is_model(m) or typing.get_origin(m) in (list, dict)]
        return models[0] if models else members[0]
    return tp


def _element_type(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is list and args:
        return _unwrap(args[0])
    if origin is dict and len(args) == 2:
        return _unwrap(args[1])
    return tp


__all__ = ["did_you_mean", "field_info_at", "field_names_at", "shown", "validation_problems", "with_article"]
