"""The organization as the unit of work: a stack folder's stack files read once, planned, and the account
aggregates folded from them (`AccountFacts`) before any stage judges one stack.

The checks this project is valued for are about several stacks at once: an account's quotas, an account's budget,
the registry's data flows. This package is the one place that reads the other stacks, plans them and builds them
in the engine; validators, preflight, cost and the pack receive plain data. It sits at the command level: the CLI's
commands, the Pulumi program's entry (workspace/program.py) and the pack's entry (workspace/pack.py) call it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from gpuinfra.account import AccountFacts, StackTotal
from gpuinfra.clouds import cloud
from gpuinfra.errors import GpuinfraError
from gpuinfra.graph import Graph
from gpuinfra.plan.account import AccountQuotas
from gpuinfra.spec import RegistrySpec
from gpuinfra.spec.files import read_text
from gpuinfra.spec.yamlfile import HINT, MAX_BYTES, read_yaml
from gpuinfra.workspace.builds import built_total, registry_graph, store_total, total_of
from gpuinfra.workspace.members import Member, file_stamp, read_members, stack_files, stack_name
from gpuinfra.workspace.quotas import account_quotas


@dataclass
class Workspace:
    """One stack folder judged against one organization file."""

    folder: Path
    org: Path
    org_data: bytes
    members: list[Member]
    _quotas: dict[str, AccountQuotas] = field(default_factory=dict)
    _built: dict[str, StackTotal] = field(default_factory=dict)
    """Totals of the stacks this process built from these files (`record`)."""

    def others(self, stack: str) -> list[Member]:
        """The folder's stacks but `stack`, in file order."""
        return [m for m in self.members if m.stack != stack]

    def quotas(self, stack: str) -> AccountQuotas:
        """What the folder's other stacks hold on every account (plan/account.py applies them)."""
        if stack not in self._quotas:
            self._quotas[stack] = account_quotas(self.others(stack), self.org, self.org_data)
        return self._quotas[stack]

    def totals(
        self, stack: str, account_id: str, accounts: Mapping[str, Any], built: Mapping[str, StackTotal]
    ) -> tuple[StackTotal, ...]:
        """The other stacks of `account_id` (and those whose account cannot be told) at maximum size: taken from
        `built` (this run's own builds of the same files) or built here."""
        out = []
        for member in self.others(stack):
            spec = member.spec
            if spec is not None:
                account = accounts.get(spec.account)
                if not cloud(spec.target.cloud).account_bill or account is None or account.id != account_id:
                    continue
            total = built.get(member.stack) or self._built.get(member.stack)
            out.append(total or built_total(member, self.org, self.org_data, self.quotas(member.stack)))
        return tuple(out)

    def record(self, inputs: Any, plan: Any, graph: Graph) -> None:
        """A stack this run built from its file: its total is what `totals` gives its account's other stacks,
        here and, by content, in the next process. One built from anything else under the file's name (a spec or
        organization edited in memory, as the property tests build thousands) is not recorded: its total is not
        the file's, and stored under the file's key it would stand for the file in every later budget."""
        stack = inputs.stack.name
        member = next((m for m in self.members if m.stack == stack), None)
        if member is None or not self._from_files(member, inputs):
            return
        self._built[stack] = store_total(member, self.org_data, self.quotas(stack), total_of(stack, plan, graph))

    def _from_files(self, member: Member, inputs: Any) -> bool:
        """Whether `inputs` hold what the member's file and the organization file hold (parsed once per content)."""
        try:
            return (
                inputs.stack.doc.data == read_yaml(member.path, "stack file").data
                and inputs.org.doc.data == read_yaml(self.org, "organization file").data
            )
        except GpuinfraError:
            return False

    def registries(self, stack: str, spec: Any, registry: Any) -> tuple[Graph, ...]:
        """The registry stacks' graphs the stack's data flows reach into (none for the registry itself)."""
        if registry is None or isinstance(spec, RegistrySpec):
            return ()
        found = []
        for member in self.others(stack):
            if isinstance(member.spec, RegistrySpec) and member.spec.account == registry.account:
                graph = registry_graph(member, self.org, self.org_data, self.quotas(member.stack))
                if graph is not None:
                    found.append(graph)
        return tuple(found)

    def facts(self, inputs: Any, built: Mapping[str, StackTotal] | None = None) -> AccountFacts:
        """Everything the stack is judged against besides its own graph."""
        stack, spec, org = inputs.stack.name, inputs.spec, inputs.org.org
        account = org.accounts.get(spec.account)
        totals: tuple[StackTotal, ...] = ()
        if cloud(spec.target.cloud).account_bill and account is not None:
            totals = self.totals(stack, account.id, org.accounts, built or {})
        return AccountFacts(self.quotas_of(inputs), totals, self.registries(stack, spec, org.registry))

    def quotas_of(self, inputs: Any) -> AccountQuotas:
        """The stack's account holdings, when quotas are counted for it (AWS, an account the organization
        lists): what `validate`, the program and the pack add to its own needs."""
        spec = inputs.spec
        if not cloud(spec.target.cloud).account_quotas or inputs.org.org.accounts.get(spec.account) is None:
            return AccountQuotas()
        return self.quotas(inputs.stack.name)


def workspace_of(stack_file: Path, org: Path) -> Workspace:
    """The workspace of the folder holding `stack_file`, judged by `org`; kept per process while no file of the
    folder changed (a test or a review's base may rewrite them between runs)."""
    folder = stack_file.parent
    stamps = tuple((str(p), *file_stamp(p)) for p in stack_files(folder))
    return _workspace(str(folder), str(org), str(Path.cwd()), stamps, file_stamp(org))


@lru_cache(maxsize=16)
def _workspace(folder: str, org: str, cwd: str, stamps: object, org_stamp: object) -> Workspace:
    org_path = Path(org)
    org_data = read_text(org_path, "organization file", MAX_BYTES, HINT).encode()
    return Workspace(Path(folder), org_path, org_data, read_members(Path(folder)))


__all__ = ["AccountFacts", "Workspace", "stack_name", "total_of", "workspace_of"]
