"""What the pack knows about the stack besides its resources: the spec, its plan and the organization.

A graph does not say which account is for training, what quota was granted or how often the
cluster checkpoints. Those facts come from the stack's own config, read the way `infra/program.py`
reads it: the spec under `gpuinfra:<workload>`, the organization file at `gpuinfra:org` (default
`stacks/org.yaml`), planned with the same planner.

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

from infra.catalog import Catalog, load_catalog
from infra.errors import InputError
from infra.inputs import Inputs, resolve
from infra.plan import InferencePlan, RegistryPlan, TrainingPlan, build_plan
from infra.spec import (
    NAMESPACE,
    ORG_KEY,
    SPEC_MODELS,
    Account,
    Organization,
    Workload,
    WorkloadSpec,
    YamlDocument,
    parse_stack,
    read_org,
)

from .values import a

PlanT = TrainingPlan | InferencePlan | RegistryPlan


class FactsError(Exception):
    """The stack's gpuinfra config cannot be read; policies that need it are not applicable."""


@dataclass(frozen=True)
class StackFacts:
    stack: str
    workload: Workload
    spec: WorkloadSpec
    plan: PlanT
    org: Organization
    catalog: Catalog = field(repr=False)

    @classmethod
    def of(cls, inputs: Inputs, plan: PlanT, catalog: Catalog) -> StackFacts:
        return cls(inputs.stack.name, inputs.workload, inputs.spec, plan, inputs.org.org, catalog)

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


def decode_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Pulumi hands config over as strings; the spec is JSON (decoded as program.py's stack_config does)."""
    from infra.program import SPEC_KEYS

    return {k: json.loads(v) if k in SPEC_KEYS and isinstance(v, str) else v for k, v in config.items()}


def facts_from_config(stack: str, config: Mapping[str, Any]) -> StackFacts | None:
    """The facts of `stack` from its Pulumi config; None when it is not a gpuinfra stack."""
    from infra.program import DEFAULT_ORG, PROJECT_ROOT

    decoded = decode_config(config)
    if not any(f"{NAMESPACE}:{w}" in decoded for w in SPEC_MODELS):
        return None
    try:
        stack_doc = parse_stack(
            YamlDocument(path=PROJECT_ROOT / "stacks" / f"Pulumi.{stack}.yaml", data={"config": decoded})
        )
        org_path = Path(str(decoded.get(ORG_KEY) or DEFAULT_ORG))
        catalog = load_catalog()
        inputs = resolve(stack_doc, read_org(org_path if org_path.is_absolute() else PROJECT_ROOT / org_path), catalog)
    except InputError as exc:
        raise FactsError(f"cannot read the stack's gpuinfra config: {exc.problems[0].render()}") from None
    return StackFacts.of(inputs, build_plan(inputs.spec, inputs.org.org, catalog), catalog)


@lru_cache(maxsize=4)
def _from_environment(stack: str, config_json: str) -> StackFacts | None:
    return facts_from_config(stack, json.loads(config_json or "{}"))


_UNSET: Any = object()
_INSTALLED: ContextVar[Any] = ContextVar("gpuinfra_policy_facts", default=_UNSET)


def current() -> StackFacts | None:
    """The running stack's facts: installed by the in-process runner, else from the CLI's environment."""
    installed = _INSTALLED.get()
    if installed is not _UNSET:
        return installed  # type: ignore[no-any-return]
    return _from_environment(os.environ.get("PULUMI_STACK", ""), os.environ.get("PULUMI_CONFIG", ""))


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
        _not_applicable(args, "not a gpuinfra stack: its config holds no gpuinfra:training, :inference or :registry")
    if workload is not None and facts.workload != workload:
        _not_applicable(args, f"applies to {workload} stacks; {facts.stack} is {a(facts.workload)} stack")
    return facts


def _not_applicable(args: Any, reason: str) -> NoReturn:
    args.not_applicable(reason)
    raise AssertionError("not_applicable returns only by raising")


__all__ = ["FactsError", "StackFacts", "current", "decode_config", "facts_from_config", "require", "using"]
