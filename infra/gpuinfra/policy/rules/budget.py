"""Budget: at maximum size, the stack and the repository's other stacks in its account stay within (a share
of) the account's monthly budget.

A budget is a ceiling, so the stack is judged by its maximum monthly cost (every group at its maximum
size), not the expected one, and added to what the account's other stacks cost at their maximum (folded
by gpuinfra.workspace): two stacks each within the budget alone can exceed it together, and the review of either
names both. Mandatory by default (a platform team lowers it in the pack's config).

The stack's figure comes from one function, (graph, facts) -> maximum monthly USD (Decimal) or None when
unknown, so the policy does not care how cost is computed. `ESTIMATE` is that function: the cost module's
price of the graph, with the usage the plan implies, as `gpuinfra preview` prices the stack (without a
usage file, which only `gpuinfra` has). In-process, preview hands over the maximum it already priced
(usage file included) instead of pricing twice. Unknown makes the policy not applicable, never "0".
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from pulumi_policy import PolicyResource, StackValidationArgs
from pulumi_policy.deserialize import serialize_properties

from gpuinfra.clouds import CLOUDS
from gpuinfra.cost.model import MaxCost
from gpuinfra.cost.money import money
from gpuinfra.graph import Graph, Resource
from gpuinfra.graph.values import plain
from gpuinfra.policy.facts import StackFacts, require
from gpuinfra.policy.rules.declare import MANDATORY, ReportViolation, stack_policy

MonthlyCost = Callable[[Graph, StackFacts], Decimal | None]


def estimate_monthly(graph: Graph, facts: StackFacts) -> Decimal | None:
    """The cost module's maximum monthly cost of `graph` (groups at maximum size), with the usage the plan
    implies; None when nothing in it has a price."""
    from gpuinfra.cost import Usage, assumed_usage, price_graph

    breakdown = price_graph(graph, facts.catalog, Usage().with_assumed(assumed_usage(facts.plan, graph)))
    if not any(r.priced for r in breakdown.resources):
        return None
    return MaxCost.of(breakdown.monthly_max, breakdown.unknown_keys())


ACCEPTED_UNPRICED = [
    "aws-native:pcs:Cluster: PCS controller",
    "aws-native:pcs:ComputeNodeGroup: PCS node management",
    "aws-native:pcs:Queue: Resource",
    *(line for c in CLOUDS.values() for line in c.accepted_unpriced),
]
"""Unknown prices the pack accepts by default, each a prefix of `<type>: <line>`: AWS PCS's controller and node
management fees, and its queues, for which no citable price has been read into the catalog
(clouds/aws/catalog/data/pcs.yaml), and each cloud's own (the registry's `accepted_unpriced`). Every other unknown
price makes the budget cannot-judge."""


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
        protect=bool(r.opts.protect),
    )


@stack_policy(
    "budget-within-account",
    "At maximum size, the stack's monthly cost plus that of the repository's other stacks in its account stays "
    "within its share of the account's monthly budget.",
    MANDATORY,
    config={
        "share": {
            "type": "number",
            "minimum": 0,
            "default": 1,
            "description": "Share of the account's monthly_budget_usd the account's stacks may use together.",
        },
        "accepted_unpriced": {
            "type": "array",
            "items": {"type": "string"},
            "default": ACCEPTED_UNPRICED,
            "description": "Lines whose price is unknown that may be left out of the total, each a prefix of "
            "'<resource type>: <line name>'; any other unknown price makes the budget cannot-judge.",
        },
    },
)
def within_budget(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    facts = require(args)
    monthly = getattr(args, "monthly_cost", NOT_GIVEN)
    if monthly is NOT_GIVEN:
        monthly = ESTIMATE(graph_of(args), facts)
    if monthly is None:
        args.not_applicable("no cost estimate for this stack")
        return
    siblings = facts.held.totals
    for other in siblings:
        if other.problem:
            report_violation(
                f"the account's budget total cannot be checked: the repository's stack {other.stack} {other.problem}"
            )
    held = [(o.stack, o.monthly_max[facts.account.id]) for o in siblings if o.monthly_max.get(facts.account.id)]
    config = args.get_config()
    share = Decimal(str(config.get("share", 1)))
    budget = facts.account.monthly_budget_usd * share
    total = monthly + sum((cost for _, cost in held), Decimal(0))
    accepted = tuple(str(a) for a in config.get("accepted_unpriced", ACCEPTED_UNPRICED) or ())
    unknown = _unaccepted(facts.stack, monthly, siblings, accepted)
    if unknown and total <= budget:
        shown = "; ".join(unknown[:4]) + (f" and {len(unknown) - 4} more" if len(unknown) > 4 else "")
        report_violation(
            f"cannot judge {facts.account_name}'s budget of {money(budget, 0)}: at maximum size the account's stacks "
            f"cost at least {money(total, 0)}, but {len(unknown)} line{'s' if len(unknown) != 1 else ''} "
            f"{'have' if len(unknown) != 1 else 'has'} no price: {shown}; add the prices to the catalog, or accept "
            "them in the policy's `accepted_unpriced` with the reason"
        )
        return
    if total <= budget:
        return
    of = "" if share == 1 else f" ({float(share):.1%} of {money(facts.account.monthly_budget_usd, 0)})"
    alone = f"{facts.stack} costs up to {money(monthly, 0)}/month at maximum size"
    if held:
        listed = ", ".join(f"{stack} up to {money(cost, 0)}" for stack, cost in held)
        alone += f"; with the account's other stacks ({listed}) {facts.account_name} costs up to {money(total, 0)}"
    lower = f" (at least: {len(unknown)} unpriced lines are left out)" if unknown else ""
    report_violation(
        f"{alone}, over {facts.account_name}'s budget of {money(budget, 0)}{of} by {money(total - budget, 0)}"
        f"{lower}; shrink the stack (its maximum size) or raise monthly_budget_usd in the organization file"
    )


def _unaccepted(stack: str, monthly: Decimal, siblings: Any, accepted: tuple[str, ...]) -> list[str]:
    """The unknown prices of the stack and its account's other stacks the config does not accept: each leaves
    the total a lower bound, so a budget it stays within is not judged."""
    found = [(stack, key) for key in getattr(monthly, "unknown", ())]
    found += [(other.stack, key) for other in siblings for key in getattr(other, "unknown", ())]
    return [f"{where}: {key}" for where, key in found if not key.startswith(accepted)]


__all__ = ["ACCEPTED_UNPRICED", "ESTIMATE", "NOT_GIVEN", "MonthlyCost", "estimate_monthly", "graph_of", "within_budget"]
