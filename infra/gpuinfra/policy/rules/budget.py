"""Budget: the stack's estimated monthly cost stays within (a share of) its account's monthly budget.

The estimate comes from one function, (graph, facts) -> monthly USD (Decimal) or None when unknown, so
the policy does not care how cost is computed. `ESTIMATE` is that function: the cost module's
`monthly_total`, with the usage the plan implies, as `gpuinfra preview` prices the stack (without a
usage file, which only `gpuinfra` has). In-process, preview hands over the cost it already priced
(usage file included) instead of pricing twice. Unknown makes the policy not applicable, never "0".
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from pulumi_policy import PolicyResource, StackValidationArgs
from pulumi_policy.deserialize import serialize_properties

from gpuinfra.cost.money import money
from gpuinfra.graph import Graph, Resource
from gpuinfra.graph.values import plain
from gpuinfra.policy.facts import StackFacts, require
from gpuinfra.policy.rules.declare import ADVISORY, Report, stack_policy

MonthlyCost = Callable[[Graph, StackFacts], Decimal | None]


def estimate_monthly(graph: Graph, facts: StackFacts) -> Decimal | None:
    """The cost module's expected monthly cost of `graph`, with the usage the plan implies."""
    from gpuinfra.cost import Usage, assumed_usage, monthly_total

    usage = Usage().with_assumed(assumed_usage(facts.plan, graph))
    return monthly_total(graph, facts.catalog, usage)


ESTIMATE: MonthlyCost = estimate_monthly
NOT_GIVEN: Any = object()
"""What `args.monthly_cost` is when the host priced nothing (always, under the CLI)."""


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
    read pkg:module:Name, as do pulumi-aws-native's resources (aws-native:pcs:Cluster). The CLI's AnalyzeStack does
    not say which is which."""
    parts = kind.split(":")
    return kind.startswith(("pulumi:providers:", "aws-native:")) or (len(parts) == 3 and "/" in parts[1])


def _resource(r: PolicyResource) -> Resource:
    return Resource(
        urn=r.urn,
        type=r.resource_type,
        name=r.name,
        parent=r.parent.urn if r.parent else r.opts.parent,
        provider=r.provider.urn if r.provider else None,
        custom=_is_custom(r.resource_type),
        dependencies=tuple(sorted(d.urn for d in r.dependencies)),
        inputs=plain(serialize_properties(r.props)),
    )


@stack_policy(
    "budget-within-account",
    "The stack's estimated monthly cost stays within its share of the account's monthly budget.",
    ADVISORY,
    config={
        "share": {
            "type": "number",
            "minimum": 0,
            "default": 1,
            "description": "Share of the account's monthly_budget_usd this stack may use.",
        }
    },
)
def within_budget(args: StackValidationArgs, report_violation: Report) -> None:
    facts = require(args)
    monthly = getattr(args, "monthly_cost", NOT_GIVEN)
    if monthly is NOT_GIVEN:
        monthly = ESTIMATE(graph_of(args), facts)
    if monthly is None:
        args.not_applicable("no cost estimate for this stack")
        return
    share = Decimal(str(args.get_config().get("share", 1)))
    budget = facts.account.monthly_budget_usd * share
    if monthly > budget:
        of = "" if share == 1 else f" ({float(share):.1%} of {money(facts.account.monthly_budget_usd, 0)})"
        report_violation(
            f"{facts.stack} is estimated at {money(monthly, 0)}/month, over {facts.account_name}'s "
            f"budget of {money(budget, 0)}{of} by {money(monthly - budget, 0)}; shrink the stack or raise "
            "monthly_budget_usd in the organization file"
        )


__all__ = ["ESTIMATE", "NOT_GIVEN", "MonthlyCost", "estimate_monthly", "graph_of", "within_budget"]
