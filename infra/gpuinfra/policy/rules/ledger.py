"""The account ledger: what the repository's other stacks spend in the same account, for account-wide budgets.

Budgets are granted per account, not per stack: two stacks each within the budget alone can exceed it
together. So the budget policy adds to the stack under review the maximum monthly cost of every other stack of
the repository (its stack directory, `stacks/`) in the same account. (Quotas are totalled from the siblings'
plans, as `validate` totals them: plan/account.py.)

Each other stack is read against the trusted organization file, planned (its quotas counted account-wide) and
built in the embedded engine as `gpuinfra preview` builds it, and counted with the same functions the policies
use on the stack under review; results are kept per process, keyed by the files' sizes and modification times,
and across processes by content. A run that previews several stacks of one account hands each one's total over
as it is previewed (`seed`), so the ledger does not build in the engine again what the run just built. The
stack under review is never read from its file: its graph is what the change will create. A stack that cannot
be read or built is a `problem`, never zero.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuinfra.errors import GpuinfraError, InputError
from gpuinfra.plan.account import file_stamp, sibling_files
from gpuinfra.policy.facts import StackFacts
from gpuinfra.spec import read_stack

if TYPE_CHECKING:
    from gpuinfra.catalog import Catalog
    from gpuinfra.graph import Graph
    from gpuinfra.load import Inputs
    from gpuinfra.plan.account import AnyPlan


@dataclass(frozen=True)
class Held:
    """One other stack of the repository, at maximum size."""

    stack: str
    monthly_max: dict[str, Decimal] = field(default_factory=dict)
    """Account id -> the stack's maximum monthly cost there (USD)."""
    problem: str | None = None
    """Why the stack could not be totalled (then it holds an unknown amount, not zero)."""


def others(facts: StackFacts) -> list[Held]:
    """The repository's other AWS stacks in the account of the stack under review."""
    own = facts.stack_file
    if own is None or facts.org_file is None:
        return []
    org = facts.org_file
    same = [path for path in sibling_files(own) if _same_account(path, facts)]
    return [_held(path, *file_stamp(path), org, *file_stamp(org), os.getcwd()) for path in same]


def _content_key(path: Path, org: Path) -> str | None:
    """The content address of one stack's totals: the stack file, the organization file, the code (with the
    catalog) and the dependency versions, and the clock the catalog's staleness reads. None when a file cannot
    be read (then the stack is built, and its problem reported)."""
    import hashlib
    import os

    from gpuinfra.catalog.staleness import MAX_AGE_ENV
    from gpuinfra.store.fingerprint import code_fingerprint

    try:
        stack, org_text = path.read_bytes(), org.read_bytes()
    except OSError:
        return None
    clock = f"{os.environ.get('SOURCE_DATE_EPOCH', '')}|{os.environ.get(MAX_AGE_ENV, '')}"
    files = hashlib.sha256(path.name.encode() + b"\0" + stack + b"\0" + org_text).hexdigest()
    return f"ledger-held-3|{code_fingerprint()}|{files}|{clock}"


def _to_plain(held: Held) -> dict[str, object]:
    return {
        "stack": held.stack,
        "monthly_max": {account: str(usd) for account, usd in held.monthly_max.items()},
        "problem": held.problem,
    }


def _from_plain(data: dict[str, Any]) -> Held:
    return Held(
        data["stack"],
        {account: Decimal(usd) for account, usd in data["monthly_max"].items()},
        data["problem"],
    )


def _same_account(path: Path, facts: StackFacts) -> bool:
    """A cheap first look (the spec alone): AWS stacks naming an account with the same id. A stack file that
    does not parse is kept, so that `_held` reports it."""
    try:
        spec = read_stack(path).spec
    except GpuinfraError:
        return True
    if getattr(spec, "provider", "aws") != "aws":
        return False  # on premises: no EC2 quota, no AWS bill
    account = facts.org.accounts.get(spec.account)
    return account is not None and account.id == facts.account.id


@lru_cache(maxsize=4096)
def _held(path: Path, size: int, mtime: int, org: Path, org_size: int, org_mtime: int, cwd: str = "") -> Held:
    """Per process by the files' stamps and the working directory (`path` may be relative: `diff --base-ref`
    previews a checkout of the base in-process); across processes by content (gpuinfra.store.disk), so a fresh
    `gpuinfra preview` does not build every other stack of the account in the engine again."""
    key = _content_key(path, org)
    if key is None:
        return _built(path, org)
    if key in _SEEDED:
        return _SEEDED[key]
    from gpuinfra.store.disk import cached

    return _from_plain(cached(key, lambda: _to_plain(_built(path, org))))


_SEEDED: dict[str, Held] = {}
"""Totals of the stacks this process previewed, by content key (`seed`)."""


def seed(inputs: Inputs, plan: AnyPlan, graph: Graph) -> None:
    """Keep the total of a stack this process just previewed (its checked inputs and plan, the graph the engine
    built from them), so the ledgers of its account's other stacks read it instead of building it again: the
    same value `_built` gives from the file, as both plan account-wide and price with the same functions
    (tests/policies/test_ledger_seed.py holds them equal). Kept on disk too, for the next process."""
    key = _content_key(inputs.stack.path, inputs.org.path)
    if key is None:
        return
    from gpuinfra.catalog import load_catalog
    from gpuinfra.store.disk import cached

    held = _SEEDED[key] = held_of(inputs.stack.path, plan, graph, load_catalog())
    cached(key, lambda: _to_plain(held))


def _built(path: Path, org: Path) -> Held:
    """The stack read, planned (quotas account-wide: a Karpenter pool's limits are what the grant leaves it) and
    built in the embedded engine, as `gpuinfra preview` does, then priced."""
    from gpuinfra.catalog import load_catalog
    from gpuinfra.load import load_inputs
    from gpuinfra.plan.account import account_plan
    from gpuinfra.pulumi.engine import EngineError
    from gpuinfra.pulumi.preview import preview_graph

    catalog = load_catalog()
    try:
        inputs = load_inputs(path, org=org, catalog=catalog)
        plan, _ = account_plan(inputs, catalog)
        graph = preview_graph(inputs, plan)
    except InputError as exc:
        return Held(_name(path), problem=f"cannot be read: {exc.problems[0].render()}")
    except EngineError as exc:
        return Held(_name(path), problem=f"cannot be built: {str(exc)[:300]}")
    return held_of(path, plan, graph, catalog)


def held_of(path: Path, plan: AnyPlan, graph: Graph, catalog: Catalog) -> Held:
    """A built stack's maximum monthly cost per account, priced as `gpuinfra preview` prices it with no usage
    file (the plan's assumed usage only: the same for every reader of the ledger)."""
    from gpuinfra.cost import Usage, assumed_usage, price_graph

    breakdown = price_graph(graph, catalog, Usage().with_assumed(assumed_usage(plan, graph)))
    monthly = {account: totals[2] for account, totals in breakdown.by("account").items() if account.isdigit()}
    return Held(_name(path), monthly)


def _name(path: Path) -> str:
    return path.name.removeprefix("Pulumi.").removesuffix(".yaml")


__all__ = ["Held", "held_of", "others", "seed"]
