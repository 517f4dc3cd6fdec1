"""Declaring policies: a name, a description, a default enforcement level, the resource types a
resource policy applies to, and a config schema where the policy takes parameters.

Every policy declared here lands in `REGISTRY` in declaration order; `policies/__init__.py` imports
the domain modules, so nobody keeps a list of policy names by hand.

A resource policy declares the types it judges. Its validate function is wrapped so that any other
type is a no-op: under the Pulumi CLI the engine calls every resource policy for every resource,
and in-process the runner skips the types a policy does not declare. Both give the same result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, cast

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

ADVISORY = EnforcementLevel.ADVISORY
MANDATORY = EnforcementLevel.MANDATORY


class ReportViolation(Protocol):
    """pulumi_policy's ReportViolation as it is called: the URN is optional."""

    def __call__(self, message: str, urn: str | None = None) -> None: ...


ResourceCheck = Callable[[ResourceValidationArgs, ReportViolation], None]
StackCheck = Callable[[StackValidationArgs, ReportViolation], None]

REGISTRY: list[Policy] = []


class ResourceRule(ResourceValidationPolicy):
    """A resource policy that knows which resource types it applies to."""

    resource_types: frozenset[str] | None
    """Exact types; None with `type_prefix` None means every type."""
    type_prefix: str | tuple[str, ...] | None

    def __init__(
        self,
        name: str,
        description: str,
        check: ResourceCheck,
        *,
        level: EnforcementLevel,
        types: Iterable[str] | None = None,
        type_prefix: str | tuple[str, ...] | None = None,
        config_schema: PolicyConfigSchema | None = None,
    ) -> None:
        self.resource_types = frozenset(types) if types is not None else None
        self.type_prefix = type_prefix
        self.check = check

        def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
            if self.applies_to(args.resource_type):
                check(args, report_violation)

        super().__init__(
            name, description, validate=cast(Any, validate), enforcement_level=level, config_schema=config_schema
        )

    def applies_to(self, resource_type: str) -> bool:
        if self.resource_types is not None and resource_type not in self.resource_types:
            return False
        return self.type_prefix is None or resource_type.startswith(self.type_prefix)


def schema(properties: Mapping[str, Mapping[str, Any]], required: list[str] | None = None) -> PolicyConfigSchema:
    """A config schema; each property should carry a `default` (the CLI fills defaults from it)."""
    return PolicyConfigSchema({k: dict(v) for k, v in properties.items()}, required)


def resource_policy(
    name: str,
    description: str,
    level: EnforcementLevel,
    *,
    types: Iterable[str] | None = None,
    type_prefix: str | tuple[str, ...] | None = None,
    config: Mapping[str, Mapping[str, Any]] | None = None,
) -> Callable[[ResourceCheck], ResourceRule]:
    """Declare a resource policy from its check function."""

    def declare(check: ResourceCheck) -> ResourceRule:
        policy = ResourceRule(
            name,
            description,
            check,
            level=level,
            types=types,
            type_prefix=type_prefix,
            config_schema=schema(config) if config else None,
        )
        _register(policy)
        return policy

    return declare


def stack_policy(
    name: str,
    description: str,
    level: EnforcementLevel,
    *,
    config: Mapping[str, Mapping[str, Any]] | None = None,
) -> Callable[[StackCheck], StackValidationPolicy]:
    """Declare a stack policy from its check function."""

    def declare(check: StackCheck) -> StackValidationPolicy:
        policy = StackValidationPolicy(
            name,
            description,
            validate=cast(Any, check),
            enforcement_level=level,
            config_schema=schema(config) if config else None,
        )
        _register(policy)
        return policy

    return declare


def _register(policy: Policy) -> None:
    if any(p.name == policy.name for p in REGISTRY):
        raise TypeError(f"duplicate policy name {policy.name}")
    REGISTRY.append(policy)


__all__ = [
    "ADVISORY",
    "MANDATORY",
    "REGISTRY",
    "ReportViolation",
    "ResourceRule",
    "resource_policy",
    "schema",
    "stack_policy",
]
