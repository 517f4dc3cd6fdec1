"""The account's other stacks, planned: quotas are granted per account and region, not per stack.

Two stacks in one account each within the grant alone can need twice it together, so `validate` and the
program (whose ServiceQuota request sets the account's value) count what the repository's other stacks (the
stack file's directory) hold in the same account at full size, from their plans. The policy pack counts the
same from their graphs (policy/rules/ledger.py); the planner and the graph agree on every need, so the two
verdicts agree. A sibling stack that cannot be read or planned is a `problem`, never zero.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from gpuinfra.errors import GpuinfraError, InputError
from gpuinfra.plan.quotas import with_held

if TYPE_CHECKING:
    from gpuinfra.catalog import Catalog
    from gpuinfra.load import Inputs
    from gpuinfra.plan import FinetunePlan, InferencePlan, RegistryPlan, TrainingPlan

    AnyPlan = TrainingPlan | InferencePlan | RegistryPlan | FinetunePlan

P = TypeVar("P")

HeldQuotas = dict[tuple[str, str, str], list[tuple[str, int]]]
"""(account id, region, quota code) -> [(stack, vCPUs at full size)]."""


@dataclass(frozen=True)
class Sibling:
    stack: str
    account_id: str | None
    """None when the stack could not be read (then it may be in any account)."""
    needs: tuple[tuple[str, str, int], ...] = ()
    """(region, code, vCPUs)."""
    problem: str | None = None


def held_quotas(stack_file: Path, org_file: Path, account_id: str) -> tuple[HeldQuotas, list[str]]:
    """What the other stacks beside `stack_file` hold on `account_id`, and the ones that could not be counted
    (each planned against the bundled catalog, as the policy's ledger builds them)."""
    held: HeldQuotas = defaultdict(list)
    problems = []
    for path in sibling_files(stack_file):
        sibling = _planned(path, *file_stamp(path), org_file, *file_stamp(org_file), os.getcwd())
        if sibling.account_id not in (None, account_id):
            continue
        if sibling.problem:
            problems.append(f"the repository's stack {sibling.stack} {sibling.problem}")
        for region, code, vcpus in sibling.needs:
            held[(account_id, region, code)].append((sibling.stack, vcpus))
    return dict(held), problems


def sibling_files(stack_file: Path) -> list[Path]:
    """The repository's other stack files: those beside `stack_file` (the project's stack directory)."""
    return [p for p in sorted(stack_file.parent.glob("Pulumi.*.yaml")) if p.name != stack_file.name]


def file_stamp(path: Path) -> tuple[int, int]:
    """(size, modification time): the per-process caches of the siblings' results are keyed by it."""
    try:
        stat = path.stat()
    except OSError:
        return (0, 0)
    return (stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=4096)
def _planned(path: Path, size: int, mtime: int, org: Path, org_size: int, org_mtime: int, cwd: str) -> Sibling:
    """One sibling's needs at full size, kept per process by the files' sizes and modification times and the
    working directory (`path` may be relative: `diff --base-ref` previews a checkout of the base in-process).
    Room for every stack of two sides of a large repository: read in turn, a smaller LRU missed every time.
    Across processes by content (gpuinfra.store.disk): a fresh `gpuinfra preview` of one stack in a repository
    of two hundred read and planned the other 199 again (seconds)."""
    key = _content_key(path, org)
    if key is None:
        return _plan_sibling(path, org)
    from gpuinfra.store.disk import cached

    return _from_plain(cached(key, lambda: _to_plain(_plan_sibling(path, org))))


def _content_key(path: Path, org: Path) -> str | None:
    """What a sibling's plan reads: the two files (their bytes, and their names as messages show them), the code
    (with the catalog) and the dependency versions, and the clock the catalog's staleness reads. None when a
    file cannot be read (then it is planned, and its problem reported)."""
    import hashlib

    from gpuinfra.catalog.staleness import MAX_AGE_ENV
    from gpuinfra.store.fingerprint import code_fingerprint

    try:
        files = hashlib.sha256(path.read_bytes() + b"\0" + org.read_bytes()).hexdigest()
    except OSError:
        return None
    clock = f"{os.environ.get('SOURCE_DATE_EPOCH', '')}|{os.environ.get(MAX_AGE_ENV, '')}"
    return f"sibling-plan-1|{code_fingerprint()}|{path}|{org}|{files}|{clock}"


def _to_plain(sibling: Sibling) -> dict[str, object]:
    return {
        "stack": sibling.stack,
        "account_id": sibling.account_id,
        "needs": [list(need) for need in sibling.needs],
        "problem": sibling.problem,
    }


def _from_plain(data: dict[str, Any]) -> Sibling:
    needs = tuple((str(region), str(code), int(vcpus)) for region, code, vcpus in data["needs"])
    return Sibling(data["stack"], data["account_id"], needs, data["problem"])


def _plan_sibling(path: Path, org: Path) -> Sibling:
    """The sibling read against the organization file and planned against the bundled catalog."""
    from gpuinfra.catalog import load_catalog
    from gpuinfra.load import load_inputs
    from gpuinfra.plan import build_plan

    name = path.name.removeprefix("Pulumi.").removesuffix(".yaml")
    catalog = load_catalog()
    try:
        inputs = load_inputs(path, org=org, catalog=catalog)
    except InputError as exc:
        return Sibling(name, None, problem=f"cannot be read: {exc.problems[0].render()}")
    if getattr(inputs.spec, "provider", "aws") != "aws":
        return Sibling(name, "")  # on premises: no EC2 quota
    account = inputs.org.org.accounts.get(inputs.spec.account)
    account_id = account.id if account else ""
    try:
        plan = build_plan(inputs.spec, inputs.org.org, catalog)
    except GpuinfraError as exc:
        return Sibling(name, account_id, problem=f"cannot be planned: {str(exc)[:300]}")
    needs: tuple[tuple[str, str, int], ...] = tuple(
        (n.region, n.code, n.vcpus) for n in getattr(plan, "quotas", []) if n.code is not None
    )
    return Sibling(name, account_id, needs)


def account_plan(inputs: Inputs, catalog: Catalog) -> tuple[AnyPlan, list[str]]:
    """The stack's plan, its quota needs counted with the account's other stacks (what `validate` and the
    program judge and request), and the siblings that could not be counted."""
    from gpuinfra.plan import build_plan

    plan = build_plan(inputs.spec, inputs.org.org, catalog)
    account = inputs.org.org.accounts.get(inputs.spec.account)
    if getattr(inputs.spec, "provider", "aws") != "aws" or account is None:
        return plan, []
    return in_account(plan, inputs.stack.path, inputs.org.path, account.id)


def in_account(plan: P, stack_file: Path, org_file: Path, account_id: str) -> tuple[P, list[str]]:
    """The plan with its quota needs counted account-wide, and the siblings that could not be counted."""
    held, problems = held_quotas(stack_file, org_file, account_id)
    quotas = getattr(plan, "quotas", None)
    if quotas and held:
        plan = plan.model_copy(update={"quotas": with_held(quotas, held)})  # type: ignore[attr-defined]
    return plan, problems


__all__ = ["HeldQuotas", "account_plan", "file_stamp", "held_quotas", "in_account", "sibling_files"]
