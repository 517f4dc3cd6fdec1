"""What the pack knows about the stack besides its resources: the spec, its plan and the organization.

A graph does not say which account is for training, what quota was granted or how often the
cluster checkpoints. The spec comes from the stack's own config, read by the same function the program
uses (`gpuinfra.load.inputs_from_config`), planned with the same planner; the organization facts come from
a file the stack cannot choose: the one the pack's config pins (`separation-trusted-organization`), else
stacks/org.yaml of the project. A stack naming another (`gpuinfra:org`) is refused (FactsError).

- Under the Pulumi CLI the engine starts the pack with the stack's config in `PULUMI_CONFIG` and the
  stack's name in `PULUMI_STACK`; `current()` reads them (once per process).
- In-process, the runner already holds the checked inputs and plan and installs them with `using()`.

Both paths end in `StackFacts.of(inputs, plan, catalog)`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, NoReturn

from gpuinfra.catalog import Catalog, load_catalog
from gpuinfra.errors import GpuinfraError, InputError
from gpuinfra.load import SPEC_KEYS, Inputs, inputs_from_config, pinned_org, project_dir
from gpuinfra.plan import FinetunePlan, InferencePlan, RegistryPlan, TrainingPlan, build_plan
from gpuinfra.spec import (
    Account,
    Organization,
    Workload,
    WorkloadSpec,
    with_article,
)

PlanT = TrainingPlan | InferencePlan | RegistryPlan | FinetunePlan


class FactsError(GpuinfraError):
    """A gpuinfra stack's config or organization file cannot be read: the pack fails closed on it."""


@dataclass(frozen=True)
class StackFacts:
    stack: str
    workload: Workload
    spec: WorkloadSpec
    plan: PlanT
    org: Organization
    catalog: Catalog = field(repr=False)
    org_file: Path | None = None
    """Where the organization facts were read (the trusted file the host chose)."""
    stack_file: Path | None = None
    """The stack's file: its directory holds the repository's other stacks (account-wide totals)."""

    @classmethod
    def of(cls, inputs: Inputs, plan: PlanT, catalog: Catalog) -> StackFacts:
        return cls(
            inputs.stack.name,
            inputs.workload,
            inputs.spec,
            plan,
            inputs.org.org,
            catalog,
            inputs.org.path,
            inputs.stack.path,
        )

    @property
    def account_name(self) -> str:
        return self.spec.account

    @property
    def account(self) -> Account:
        return self.org.accounts[self.spec.account]

    @cached_property
    def accounts_by_id(self) -> dict[str, tuple[str, Account]]:
        return {a.id: (name, a) for name, a in self.org.accounts.items()}

    def account_with_id(self, account_id: str) -> tuple[str, Account] | None:
        return self.accounts_by_id.get(account_id)


def facts_from_config(stack: str, config: Mapping[str, Any], project: Path | None = None) -> StackFacts | None:
    """The facts of `stack` from its Pulumi config, read as the program reads it (`inputs_from_config`); None
    when it is not a gpuinfra stack. Anything unreadable raises FactsError: the pack fails closed on it."""
    if not any(key in config for key in SPEC_KEYS):
        return None
    root = project or project_dir() or Path.cwd()
    try:
        catalog = load_catalog()
        inputs = inputs_from_config(stack, config, root, catalog)
    except InputError as exc:
        raise FactsError(f"cannot read the stack's gpuinfra config: {exc.problems[0].render()}") from None
    except ValueError as exc:  # a spec key that is not the JSON the Pulumi CLI writes
        raise FactsError(f"cannot read the stack's gpuinfra config: not JSON ({str(exc)[:120]})") from None
    return StackFacts.of(inputs, build_plan(inputs.spec, inputs.org.org, catalog), catalog)


@lru_cache(maxsize=4)
def _from_environment(stack: str, config_json: str, pinned: str = "") -> StackFacts | None:
    try:
        config = json.loads(config_json or "{}")
    except ValueError as exc:
        raise FactsError(f"cannot read PULUMI_CONFIG: not JSON ({str(exc)[:120]})") from None
    if not isinstance(config, dict):
        raise FactsError("cannot read PULUMI_CONFIG: not a JSON object of config keys")
    with pinned_org(Path(pinned) if pinned else None):
        return facts_from_config(stack, config)


_PACK_PIN: list[str] = [""]
"""The organization file the pack's own config pins (`separation-trusted-organization.organization_file`,
resolved against the project directory), recorded when the engine configures the pack; "" for the default."""


def pin_organization(organization_file: str) -> None:
    """Record the pack config's organization file: every stack the pack judges is read against it."""
    _PACK_PIN[0] = str(pinned_path(organization_file) or "")


def pinned_path(organization_file: str) -> Path | None:
    """A pinned organization file as a path: relative paths are the project directory's."""
    if not organization_file:
        return None
    path = Path(organization_file)
    return path if path.is_absolute() else (project_dir() or Path.cwd()) / path


_UNSET: Any = object()
_INSTALLED: ContextVar[Any] = ContextVar("gpuinfra_policy_facts", default=_UNSET)


def current() -> StackFacts | None:
    """The running stack's facts: installed by the in-process runner, else from the CLI's environment."""
    installed = _INSTALLED.get()
    if installed is not _UNSET:
        return installed  # type: ignore[no-any-return]
    return _from_environment(os.environ.get("PULUMI_STACK", ""), os.environ.get("PULUMI_CONFIG", ""), _PACK_PIN[0])


@contextmanager
def using(facts: StackFacts | None) -> Iterator[None]:
    """Install `facts` for the policies run inside this block (in-process runs)."""
    token = _INSTALLED.set(facts)
    try:
        yield
    finally:
        _INSTALLED.reset(token)


def require(args: Any, workload: str | None = None) -> StackFacts:
    """The facts, or the policy is not applicable (not a gpuinfra stack, or another workload's)."""
    try:
        facts = current()
    except FactsError as exc:
        _not_applicable(args, str(exc))
    if facts is None:
        _not_applicable(
            args, "not a gpuinfra stack: its config holds no gpuinfra:training, :inference, :registry or :finetune"
        )
    if workload is not None and facts.workload != workload:
        _not_applicable(args, f"applies to {workload} stacks; {facts.stack} is {with_article(facts.workload)} stack")
    return facts


def _not_applicable(args: Any, reason: str) -> NoReturn:
    args.not_applicable(reason)
    raise AssertionError("not_applicable returns only by raising")


__all__ = [
    "FactsError",
    "StackFacts",
    "current",
    "facts_from_config",
    "pin_organization",
    "pinned_path",
    "require",
    "using",
]
