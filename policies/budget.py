"""Budget: the stack's estimated monthly cost stays within (a share of) its account's monthly budget.

The estimate comes from one function, graph -> monthly USD (Decimal) or None when unknown, so the
policy does not care how cost is computed. `ESTIMATE` is that function: the cost module's once it
exists (infra/cost), else unknown, which makes the policy not applicable rather than silently "0".
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from pulumi_policy import PolicyResource, StackValidationArgs
from pulumi_policy.deserialize import serialize_properties

from infra.engine import plain
from infra.graph import Graph, Resource
from infra.report.format import money, percent

from .facts import require
from .rules import ADVISORY, Report, stack_policy

MonthlyCost = Callable[[Graph], Decimal | None]


def estimate_monthly(graph: Graph) -> Decimal | None:
    """The cost module's monthly estimate of `graph`; None while it is not available."""
    try:
        from infra.cost import monthly_total  # type: ignore[import-not-found]  # lands with the cost issue
    except ImportError:
        return None
    return monthly_total(graph)  # type: ignore[no-any-return]


ESTIMATE: MonthlyCost = estimate_monthly


def graph_of(args: StackValidationArgs) -> Graph:
    """The stack as a Graph: handed over by the in-process runner, else rebuilt from the CLI's resources."""
    given = getattr(args, "graph", None)
    if isinstance(given, Graph):
        return given
    stack = next((r.urn.split("::")[0].removeprefix("urn:pulumi:") for r in args.resources), "")
    project = next((r.urn.split("::")[1] for r in args.resources if r.urn.count("::") >= 3), "")
    return Graph.of(stack, project, (_resource(r) for r in args.resources))


def _is_custom(kind: str) -> bool:
    """Provider resources' types read pkg:module/name:Name (and providers pulumi:providers:pkg); components'
    read pkg:module:Name. The CLI's AnalyzeStack does not say which is which."""
    parts = kind.split(":")
    return kind.startswith("pulumi:providers:") or (len(parts) == 3 and "/" in parts[1])


def _resource(r: PolicyResource) -> Resource:
    return Resource(urn=r.urn, type=r.resource_type, name=r.name, parent=r.parent.urn if r.parent else r.opts.parent,
                    provider=r.provider.urn if r.provider else None, custom=_is_custom(r.resource_type),
                    dependencies=tuple(sorted(d.urn for d in r.dependencies)),
                    inputs=plain(serialize_properties(r.props)))


@stack_policy("budget-within-account",
              "The stack's estimated monthly cost stays within its share of the account's monthly budget.", ADVISORY,
              config={"share": {"type": "number", "minimum": 0, "default": 1,
                                "description": "Share of the account's monthly_budget_usd this stack may use."}})
def within_budget(args: StackValidationArgs, report_violation: Report) -> None:
    facts = require(args)
    monthly = ESTIMATE(graph_of(args))
    if monthly is None:
        args.not_applicable("no cost estimate for this stack")
        return
    share = Decimal(str(args.get_config().get("share", 1)))
    budget = facts.account.monthly_budget_usd * share
    if monthly > budget:
        of = "" if share == 1 else f" ({percent(float(share))} of {money(facts.account.monthly_budget_usd, 0)})"
        report_violation(f"{facts.stack} is estimated at {money(monthly, 0)}/month, over {facts.account_name}'s "
                         f"budget of {money(budget, 0)}{of} by {money(monthly - budget, 0)}; shrink the stack or raise "
                         "monthly_budget_usd in the organization file")


__all__ = ["ESTIMATE", "MonthlyCost", "estimate_monthly", "graph_of", "within_budget"]
