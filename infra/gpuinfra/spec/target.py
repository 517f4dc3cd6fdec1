"""Where a workload runs, as one typed value every stage reads instead of guessing from a spec's fields: the
cloud (or on premises), the account (an AWS account, a Google Cloud project, an on-premises site's owner) and
the regions. Stages that depend on the cloud look it up in the cloud registry (gpuinfra.clouds) by `cloud`.

This module is also the spec's half of that registry: a cloud whose stacks or organization entries have models of
their own (Google's fleet, Google's projects) names the package holding them in `SPEC_PACKAGES`, found by name
when a stack file or the organization file is read, so the spec stage names no cloud's models itself."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Discriminator, GetCoreSchemaHandler, Tag
from pydantic_core import CoreSchema

Cloud = Literal["aws", "onprem", "gcp"]
"""The clouds the specs can target (each with its entry in gpuinfra.clouds)."""

DEFAULT_CLOUD = "aws"
"""A stack or organization entry that names no `cloud` is AWS's (every file written before a second cloud)."""
SPEC_PACKAGES: dict[str, str] = {"gcp": "gpuinfra.clouds.gcp.spec"}
"""Clouds with spec models of their own, by the package that defines them: its `SPEC_MODELS` (workload -> model
of a stack that names `cloud: <name>`) and `ACCOUNT_MODEL` (an organization `accounts` entry with `cloud: <name>`)."""
TAG_PREFIX = "cloud:"
"""How an `accounts` entry's model is tagged in a validation error's location (an account name cannot hold ':')."""


@dataclass(frozen=True)
class Target:
    cloud: Cloud
    account: str
    """The organization file's account name (on Google Cloud, a project entry)."""
    regions: tuple[str, ...] = ()
    """The regions the workload's resources live in (none on premises, or when the organization sets them)."""


def workload_model(workload: str, cloud: object) -> type[BaseModel] | None:
    """The model of a `workload` stack that names `cloud`; None for AWS (the default models) or an unknown cloud
    (the default model then refuses the `cloud` field by name)."""
    package = SPEC_PACKAGES.get(cloud) if isinstance(cloud, str) else None
    if package is None:
        return None
    models: dict[str, type[BaseModel]] = import_module(package).SPEC_MODELS
    return models.get(workload)


def unknown_cloud(workload: str, cloud: object) -> str | None:
    """Why a stack's `cloud` cannot be built (None when it can): named clouds only, each with its models."""
    if cloud is None or workload_model(workload, cloud) is not None:
        return None
    others = sorted(c for c in SPEC_PACKAGES if workload_model(workload, c) is not None)
    return f"cloud {cloud!r}: gpuinfra builds {workload} stacks for {DEFAULT_CLOUD} (leave cloud out)" + (
        f" and {', '.join(others)}" if others else ""
    )


def cloud_workload_models() -> dict[str, list[type[BaseModel]]]:
    """Workload -> the models other clouds give it (the JSON Schema offers each beside the default)."""
    found: dict[str, list[type[BaseModel]]] = {}
    for package in SPEC_PACKAGES.values():
        for workload, model in import_module(package).SPEC_MODELS.items():
            found.setdefault(workload, []).append(model)
    return found


def _entry_cloud(value: Any) -> str:
    cloud = value.get("cloud", DEFAULT_CLOUD) if isinstance(value, dict) else getattr(value, "cloud", DEFAULT_CLOUD)
    return f"{TAG_PREFIX}{cloud}"


def account_union(default: type[BaseModel]) -> Any:
    """The tagged union of an organization `accounts` entry: `default` (an AWS account) unless it names `cloud:`,
    then that cloud's model; pydantic reports an unknown cloud as a tag none of the members has."""
    members: list[Any] = [Annotated[default, Tag(f"{TAG_PREFIX}{DEFAULT_CLOUD}")]]
    for cloud, package in SPEC_PACKAGES.items():
        model = getattr(import_module(package), "ACCOUNT_MODEL", None)
        if model is not None:
            members.append(Annotated[model, Tag(f"{TAG_PREFIX}{cloud}")])
    return Annotated[Union[tuple(members)], Discriminator(_entry_cloud)]  # noqa: UP007 (built at run time)


@dataclass(frozen=True)
class CloudAccounts:
    """Annotation of an `accounts` entry whose tagged union (`account_union`) is built when pydantic first builds
    the model's schema, not when the model is defined: a cloud's spec package imports the spec stage (its models
    extend spec.base), so were the union built at import, importing that package first would find it half
    initialized, without its ACCOUNT_MODEL, and silently leave its entries out. The model that holds the entries
    defers its build (`defer_build`) until its first validation or schema, when every import is done."""

    default: type[BaseModel]

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return handler.generate_schema(account_union(self.default))


def cloud_accounts(default: type[BaseModel]) -> Any:
    """The type of an organization `accounts` entry (see `account_union`), resolved at the first validation."""
    return Annotated[default, CloudAccounts(default)]


__all__ = [
    "DEFAULT_CLOUD",
    "SPEC_PACKAGES",
    "TAG_PREFIX",
    "Cloud",
    "CloudAccounts",
    "Target",
    "account_union",
    "cloud_accounts",
    "cloud_workload_models",
    "unknown_cloud",
    "workload_model",
]
