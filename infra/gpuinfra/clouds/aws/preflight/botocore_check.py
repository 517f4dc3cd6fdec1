"""Validate an AWS API request against botocore's service model (AWS's own machine-readable API definition).

botocore's ParamValidator checks what the SDK checks before sending: required members, unknown members,
types, and `min` lengths/ranges. The service models carry more that the service enforces server-side and
the SDK leaves to it: `max`, `enum` and `pattern` (Smithy length/range/enum/pattern traits). A subclass
adds those, so one walk reports everything. Values Pulumi does not know until apply (UNKNOWN, secrets)
are skipped: they cannot be judged now and are not wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from botocore.model import OperationModel, ServiceModel, Shape
from botocore.validate import ParamValidator, ValidationErrors
from gpuinfra.graph import judgeable

EXTRA_CONSTRAINTS = {"enum", "pattern", "max"}


@cache
def _session() -> Any:
    """One private botocore session, created on first use (the models load lazily, once per service)."""
    import botocore.session

    return botocore.session.Session()


@cache
def service_model(service: str) -> ServiceModel:
    """The service's whole model, its data kept compiled on disk (parsing ec2's JSON model costs about 0.2 s a
    process). botocore registers no `service-data-loaded` handler of its own, so the loaded data is the whole
    model. Preflight itself reads the smaller entries of `operation` and `shape`."""
    import botocore
    from gpuinfra.store.disk import cached

    data = cached(f"botocore-service|{botocore.__version__}|{service}", lambda: _session().get_service_data(service))
    return ServiceModel(data, service_name=service)


def _pruned(service: str, operation_name: str | None, root: str) -> dict[str, Any]:
    """The part of the service's model a request is judged by: its metadata, the operation (without its output
    and errors, which preflight never reads) and every shape reachable from `root`. ec2's whole model is some
    5 MB of compiled data that took 0.3 s of each fresh process to read back; one operation's part, milliseconds."""
    whole = service_model(service)
    shapes = whole._shape_resolver._shape_map
    reached: dict[str, Any] = {}
    todo = [root]
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached[name] = body = shapes[name]
        refs = [*body.get("members", {}).values(), body.get("member"), body.get("key"), body.get("value")]
        todo += [ref["shape"] for ref in refs if ref is not None]
    operations = {}
    if operation_name is not None:
        kept = whole._service_description["operations"][operation_name]
        operations[operation_name] = {k: v for k, v in kept.items() if k not in ("output", "errors")}
    return {"metadata": whole.metadata, "operations": operations, "shapes": reached}


@cache
def operation(service: str, name: str) -> OperationModel:
    """One operation of a service, from its own compiled entry (keyed by botocore's version, like the whole
    model's)."""
    import botocore
    from gpuinfra.store.disk import cached

    def build() -> dict[str, Any]:
        return _pruned(service, name, service_model(service).operation_model(name).input_shape.name)

    data = cached(f"botocore-operation|{botocore.__version__}|{service}|{name}", build)
    return ServiceModel(data, service_name=service).operation_model(name)


@cache
def shape(service: str, name: str) -> Shape:
    """A named shape of a service model (e.g. ec2 `RequestLaunchTemplateData`), from its own compiled entry."""
    import botocore
    from gpuinfra.store.disk import cached

    data = cached(f"botocore-shape|{botocore.__version__}|{service}|{name}", lambda: _pruned(service, None, name))
    return ServiceModel(data, service_name=service).shape_for(name)


@cache
def _pattern(expression: str) -> re.Pattern[str] | None:
    """AWS services match a member's pattern against the whole value (IAM API Reference, e.g. RoleName:
    "a string of characters consisting of upper and lowercase alphanumeric characters with no spaces" for
    `[\\w+=,.@-]+`), hence `fullmatch`; the few patterns Python cannot compile are skipped, not guessed at."""
    try:
        return re.compile(expression)
    except re.error:
        return None


@dataclass(frozen=True, slots=True)
class Problem:
    """One violation of the request shape: the API member path (`.LaunchTemplateData.NetworkInterfaces[3]`),
    what is wrong, and the offending value."""

    path: str
    message: str
    value: Any


class _StrictValidator(ParamValidator):  # type: ignore[misc]
    def _shape_has_constraints(self, shape: Shape) -> bool:
        return super()._shape_has_constraints(shape) or bool(EXTRA_CONSTRAINTS & set(shape.metadata))

    def _validate(self, params: Any, shape: Shape, errors: ValidationErrors, name: str) -> None:
        if judgeable(params):
            super()._validate(params, shape, errors, name)

    def _validate_string(self, param: Any, shape: Shape, errors: ValidationErrors, name: str) -> None:
        super()._validate_string(param, shape, errors, name)
        if not isinstance(param, str):
            return
        meta = shape.metadata
        if "max" in meta and len(param) > meta["max"]:
            errors.report(name, "too long", param=param, max_allowed=meta["max"])
        enum = getattr(shape, "enum", None) or meta.get("enum")
        if enum and param not in enum:
            errors.report(name, "not in enum", param=param, valid_values=list(enum))
        pattern = _pattern(meta["pattern"]) if "pattern" in meta else None
        if pattern is not None and not pattern.fullmatch(param):
            errors.report(name, "pattern mismatch", param=param, pattern=meta["pattern"])

    def _validate_list(self, param: Any, shape: Shape, errors: ValidationErrors, name: str) -> None:
        super()._validate_list(param, shape, errors, name)
        if isinstance(param, list | tuple) and "max" in shape.metadata and len(param) > shape.metadata["max"]:
            errors.report(name, "too many", param=param, max_allowed=shape.metadata["max"])

    def _validate_number(self, param: Any, shape: Shape, errors: ValidationErrors, name: str) -> None:
        if isinstance(param, bool):
            errors.report(name, "invalid type", param=param, valid_types=[shape.type_name])
            return
        getattr(super(), f"_validate_{shape.type_name}")(param, shape, errors, name)
        if isinstance(param, int | float) and "max" in shape.metadata and param > shape.metadata["max"]:
            errors.report(name, "too large", param=param, max_allowed=shape.metadata["max"])

    _validate_integer = _validate_long = _validate_double = _validate_float = _validate_number


def _message(reason: str, detail: dict[str, Any]) -> str:
    if reason == "missing required field":
        return f"required member {detail['required_name']!r} is missing"
    if reason == "unknown field":
        return f"{detail['unknown_param']!r} is not a member of the request"
    if reason == "invalid type":
        return f"wrong type {type(detail['param']).__name__}; the API takes {', '.join(detail['valid_types'])}"
    if reason in ("invalid range", "invalid length"):
        return f"below the minimum {detail['min_allowed']}"
    if reason in ("too long", "too many", "too large"):
        return f"{reason}: the maximum is {detail['max_allowed']}"
    if reason == "not in enum":
        values = detail["valid_values"]
        shown = ", ".join(values[:12]) + (", …" if len(values) > 12 else "")
        return f"not one of the values the API accepts ({shown})"
    if reason == "pattern mismatch":
        return f"does not match the API's pattern {detail['pattern']}"
    return reason


def validate(service: str, operation_name: str, request: dict[str, Any]) -> list[Problem]:
    """Every way `request` violates the input shape of `service`.`operation_name`."""
    errors = ValidationErrors()
    _StrictValidator()._validate(request, operation(service, operation_name).input_shape, errors, "")
    problems = []
    for reason, name, detail in errors._errors:
        path = name
        if reason == "missing required field":
            path = f"{name}.{detail['required_name']}"
        elif reason == "unknown field":
            path = f"{name}.{detail['unknown_param']}"
        problems.append(Problem(path, _message(reason, detail), detail.get("param")))
    return problems


__all__ = ["Problem", "operation", "service_model", "shape", "validate"]
