"""Each stack of the folder planned alone, for its quota holdings: what `validate`, the program and the pack add
to a stack's own needs (plan/account.py). Planned against the bundled catalog and kept on disk by content, so a
preview of one stack in a large repository does not plan the others again in every process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuinfra.clouds import cloud
from gpuinfra.errors import GpuinfraError, InputError
from gpuinfra.plan.account import AccountQuotas, Holding, held_by
from gpuinfra.store.disk import cached
from gpuinfra.store.keys import content_key
from gpuinfra.workspace.members import Member


def planned(member: Member, org: Path, org_data: bytes) -> dict[str, Any]:
    """(account id, needs, problem) of one stack as plain data, kept by the content it is computed from."""
    key = content_key("sibling-plan", 2, str(member.path), str(org), member.data, org_data)
    return cached(key, lambda: _plan(member, org))  # type: ignore[no-any-return]


def _plan(member: Member, org: Path) -> dict[str, Any]:
    """The stack read against the organization file and planned alone (its own needs, no one else's)."""
    from gpuinfra.catalog import load_catalog
    from gpuinfra.load import load_inputs
    from gpuinfra.plan import build_plan

    catalog = load_catalog()
    try:
        inputs = load_inputs(member.path, org=org, catalog=catalog)
    except InputError as exc:
        return {"account_id": None, "needs": [], "problem": f"cannot be read: {exc.problems[0].render()}"}
    if not cloud(inputs.spec.target.cloud).account_quotas:
        return {"account_id": "", "needs": [], "problem": None}  # on premises: no account quota
    account = inputs.org.org.accounts.get(inputs.spec.account)
    account_id = account.id if account else ""
    try:
        plan = build_plan(inputs.spec, inputs.org.org, catalog)
    except GpuinfraError as exc:
        return {"account_id": account_id, "needs": [], "problem": f"cannot be planned: {str(exc)[:300]}"}
    needs = [[n.region, n.code, n.vcpus] for n in getattr(plan, "quotas", []) if n.code is not None]
    return {"account_id": account_id, "needs": needs, "problem": None}


def account_quotas(others: list[Member], org: Path, org_data: bytes) -> AccountQuotas:
    """What `others` hold, by account, region and code; each stack that could not be counted a problem."""
    holdings: list[Holding] = []
    problems: list[tuple[str | None, str]] = []
    for member in others:
        found = planned(member, org, org_data)
        if found["problem"]:
            problems.append((found["account_id"], f"the repository's stack {member.stack} {found['problem']}"))
        holdings += [Holding(member.stack, found["account_id"], r, c, int(v)) for r, c, v in found["needs"]]
    return AccountQuotas(held_by(holdings), tuple(problems))


__all__ = ["account_quotas", "planned"]
