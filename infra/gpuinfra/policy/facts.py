"""What the pack knows about the stack besides its resources: the spec, its plan, the organization and what the
account's other stacks hold (`AccountFacts`).

A graph does not say which account is for training, what quota was granted or how often the
cluster checkpoints. The spec comes from the stack's own config, read by the same function the program
uses (`gpuinfra.load.inputs_from_config`), planned with the same planner; the organization facts come from
a file the stack cannot choose: the one the pack's config pins (`separation-trusted-organization`), else
stacks/org.yaml of the project. A stack naming another (`gpuinfra:org`) is refused (FactsError).

Nothing here reads a stack file: the facts are handed in.
- Under the Pulumi CLI the pack's entry (gpuinfra.workspace.pack) installs a `source` that reads the stack's
  config from `PULUMI_CONFIG` and its folder's other stacks through the workspace.
- In-process, the runner already holds the checked inputs, plan and account facts and installs them with `using()`.

Both paths end in `StackFacts.of(inputs, plan, catalog, account)`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, NoReturn

from gpuinfra.account import AccountFacts
from gpuinfra.catalog import Catalog
from gpuinfra.errors import GpuinfraError
from gpuinfra.load import Inputs, project_dir
from gpuinfra.plan import AnyPlan
from gpuinfra.spec import (
    Account,
    Organization,
    Workload,
    WorkloadSpec,
    with_article,
)

PlanT = AnyPlan


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
    """The stack's file."""
    held: AccountFacts = field(default_factory=AccountFacts)
    """What the repository's other stacks hold (quotas, monthly totals) and the registry's graphs."""

    @classmethod
    def of(cls, inputs: Inputs, plan: PlanT, catalog: Catalog, held: AccountFacts | None = None) -> StackFacts:
        return cls(
            inputs.stack.name,
            inputs.workload,
            inputs.spec,
            plan,
            inputs.org.org,
            catalog,
            inputs.org.path,
            inputs.stack.path,
            held or AccountFacts(),
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


_PACK_PIN: list[str] = ["", ""]
"""What the pack's own config trusts (`separation-trusted-organization`), recorded when the engine configures the
pack: the pinned organization file (`organization_file`, resolved against the project directory) and the git
revision whose organization file is trusted (`base_ref`); "" for the default."""


def pin_organization(organization_file: str, base_ref: str = "") -> None:
    """Record the pack config's organization file and base revision: every stack the pack judges is read
    against them."""
    _PACK_PIN[:] = [str(pinned_path(organization_file) or ""), base_ref]


def pinned_path(organization_file: str) -> Path | None:
    """A pinned organization file as a path: relative paths are the project directory's."""
    if not organization_file:
        return None
    path = Path(organization_file)
    return path if path.is_absolute() else (project_dir() or Path.cwd()) / path


_UNSET: Any = object()
_INSTALLED: ContextVar[Any] = ContextVar("gpuinfra_policy_facts", default=_UNSET)


_SOURCE: list[Callable[[str, str], StackFacts | None]] = []
"""How the pack reads the running stack's facts under the Pulumi CLI (installed by its entry, `install_source`):
called with the pinned organization file and base revision ("" for the default)."""


def install_source(source: Callable[[str, str], StackFacts | None]) -> None:
    """The pack's entry installs how facts are read under the CLI (gpuinfra.workspace.pack)."""
    _SOURCE[:] = [source]


def current() -> StackFacts | None:
    """The running stack's facts: installed by the in-process runner, else read by the installed source. With
    neither, the pack fails closed: it cannot tell what it judges."""
    installed = _INSTALLED.get()
    if installed is not _UNSET:
        return installed  # type: ignore[no-any-return]
    if not _SOURCE:
        raise FactsError("the pack was not started by its entry (policies/__main__.py): no stack facts to judge by")
    return _SOURCE[0](_PACK_PIN[0], _PACK_PIN[1])


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
    "install_source",
    "pin_organization",
    "pinned_path",
    "require",
    "using",
]
