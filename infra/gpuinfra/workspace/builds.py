"""The other stacks the account checks need built: each sibling's maximum monthly cost (budgets) and the
registry's graph (data flows). Built in the embedded engine as `gpuinfra preview` builds a stack, and kept on disk
by content (gpuinfra.store), so a preview of one stack does not build every other stack of its account again."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from gpuinfra.account import StackTotal
from gpuinfra.clouds import cloud
from gpuinfra.errors import InputError
from gpuinfra.graph import Graph, Resource
from gpuinfra.plan.account import AccountQuotas
from gpuinfra.store.disk import cached, write
from gpuinfra.store.keys import content_key
from gpuinfra.workspace.members import Member


def total_of(stack: str, plan: Any, graph: Graph) -> StackTotal:
    """A built stack's maximum monthly cost per account, priced as `gpuinfra preview` prices it with no usage
    file (the plan's assumed usage only: the same figure for every stack that reads it)."""
    from gpuinfra.catalog import load_catalog
    from gpuinfra.cost import Usage, assumed_usage, price_graph

    breakdown = price_graph(graph, load_catalog(), Usage().with_assumed(assumed_usage(plan, graph)))
    monthly = {account: totals[2] for account, totals in breakdown.by("account").items() if account.isdigit()}
    return StackTotal(stack, monthly, unknown=breakdown.unknown_keys())


def built_total(member: Member, org: Path, org_data: bytes, quotas: AccountQuotas) -> StackTotal:
    """The member read, planned with its account's holdings (`quotas`: a Karpenter pool's limits are what the
    grant leaves it) and built in the engine, then priced; kept by every input it is computed from."""
    data = cached(_total_key(member, org_data, quotas), lambda: _plain_total(_build_total(member, org, quotas)))
    return StackTotal(
        data["stack"],
        {a: Decimal(v) for a, v in data["monthly_max"].items()},
        data["problem"],
        tuple(data.get("unknown", ())),
    )


def store_total(member: Member, org_data: bytes, quotas: AccountQuotas, total: StackTotal) -> StackTotal:
    """A total this process computed from the member's own build, kept for the next process."""
    write(_total_key(member, org_data, quotas), _plain_total(total))
    return total


def _total_key(member: Member, org_data: bytes, quotas: AccountQuotas) -> str:
    return content_key("stack-total", 2, member.path.name, member.data, org_data, repr(quotas))


def _plain_total(total: StackTotal) -> dict[str, Any]:
    return {
        "stack": total.stack,
        "monthly_max": {account: str(usd) for account, usd in total.monthly_max.items()},
        "problem": total.problem,
        "unknown": list(total.unknown),
    }


def _build_total(member: Member, org: Path, quotas: AccountQuotas) -> StackTotal:
    from gpuinfra.pulumi.engine import EngineError

    try:
        inputs, plan = _planned(member, org, quotas)
        graph = _engine(inputs, plan)
    except InputError as exc:
        return StackTotal(member.stack, problem=f"cannot be read: {exc.problems[0].render()}")
    except EngineError as exc:
        return StackTotal(member.stack, problem=f"cannot be built: {str(exc)[:300]}")
    return total_of(member.stack, plan, graph)


def registry_graph(member: Member, org: Path, org_data: bytes, quotas: AccountQuotas) -> Graph | None:
    """The registry stack's graph as `pulumi up` would build it (None when it cannot be read, is refused by its
    own validators, or fails in the engine: its flows are then unknown)."""
    key = content_key("registry-graph", 2, member.path.name, member.data, org_data, repr(quotas))
    return _graph_from(cached(key, lambda: _graph_plain(_build_registry(member, org, quotas))))


def _build_registry(member: Member, org: Path, quotas: AccountQuotas) -> Graph | None:
    from gpuinfra.catalog import load_catalog
    from gpuinfra.pulumi.engine import EngineError
    from gpuinfra.validators.checked import check

    try:
        inputs = _inputs(member, org)
        checked = check(inputs, load_catalog(), (), quotas)
        return None if checked.blocked else _engine(inputs, checked.plan)
    except (InputError, EngineError):
        return None


def _inputs(member: Member, org: Path) -> Any:
    from gpuinfra.catalog import load_catalog
    from gpuinfra.load import load_inputs

    return load_inputs(member.path, org=org, catalog=load_catalog())


def _planned(member: Member, org: Path, quotas: AccountQuotas) -> tuple[Any, Any]:
    from gpuinfra.catalog import load_catalog
    from gpuinfra.plan import build_plan
    from gpuinfra.plan.account import in_account

    inputs = _inputs(member, org)
    plan = build_plan(inputs.spec, inputs.org.org, load_catalog())
    return inputs, (in_account(plan, quotas) if _counts_quotas(inputs) else plan)


def _counts_quotas(inputs: Any) -> bool:
    """Quotas are counted account-wide where the cloud grants them per account, for an account the
    organization lists (as `validate` counts)."""
    return (
        cloud(inputs.spec.target.cloud).account_quotas and inputs.org.org.accounts.get(inputs.spec.account) is not None
    )


def _engine(inputs: Any, plan: Any) -> Graph:
    from gpuinfra.pulumi.preview import preview_graph

    return preview_graph(inputs, plan)


_FIELDS = ("urn", "type", "name", "parent", "provider", "custom", "dependencies", "inputs", "protect")


def _graph_plain(graph: Graph | None) -> dict[str, Any]:
    if graph is None:
        return {"graph": None}
    rows = [[*(getattr(r, f) for f in _FIELDS), r.retain_on_delete] for r in graph.resources]
    return {"graph": [graph.stack, graph.project, rows]}


def _graph_from(data: dict[str, Any]) -> Graph | None:
    if data["graph"] is None:
        return None
    stack, project, rows = data["graph"]
    resources = (
        Resource(row[0], row[1], row[2], row[3], row[4], row[5], tuple(row[6]), row[7], row[8], row[9]) for row in rows
    )
    return Graph(stack, project, tuple(resources))


__all__ = ["built_total", "registry_graph", "store_total", "total_of"]
