"""The stack's Cloud Billing budget: the spend of the stack's own resources (its `gpuinfra-stack` label) in its
project, against what its VMs cost at full size (the plan's maxima at Google's rates), alerting at half, 90% and
all of it, and when the month's forecast passes it. The project's own budget (the organization file's
monthly_budget_usd over every stack of the project) is the pack's budget policy's."""

from __future__ import annotations

import math
from decimal import Decimal

import pulumi
import pulumi_gcp as gcp

from gpuinfra.clouds.gcp.catalog import HOURS_PER_MONTH, gcp_book
from gpuinfra.clouds.gcp.pulumi.base import opts
from gpuinfra.clouds.gcp.spec import GcpProject
from gpuinfra.plan import InferencePlan


def vms_at_full_size(plan: InferencePlan) -> Decimal | None:
    """A month of every region's groups at their maxima (on-demand and Spot rates); None when a rate is unknown."""
    book, total = gcp_book(), Decimal(0)
    for r in plan.regions:
        for purchase, count in (("on_demand", r.max_on_demand), ("spot", r.max_spot)):
            rate = book.vm_hourly(r.instance_type or "", r.region, purchase) if count else Decimal(0)
            if rate is None:
                return None
            total += rate * count * HOURS_PER_MONTH
    return total


def stack_budget(
    name: str, stack_label: str, project: GcpProject, plan: InferencePlan, parent: pulumi.Resource
) -> None:
    amount = vms_at_full_size(plan)
    if amount is None:
        return  # an unpriced machine type: the cost stage names it; no budget at an invented amount
    gcp.billing.Budget(
        f"{name}-budget",
        billing_account=project.billing_account,
        display_name=f"gpuinfra {name}"[:60],
        budget_filter={
            "projects": [f"projects/{project.id}"],
            "labels": {"gpuinfra-stack": stack_label},
            "calendar_period": "MONTH",
        },
        amount={"specified_amount": {"currency_code": "USD", "units": str(math.ceil(amount))}},
        threshold_rules=[
            {"threshold_percent": 0.5},
            {"threshold_percent": 0.9},
            {"threshold_percent": 1.0},
            {"threshold_percent": 1.0, "spend_basis": "FORECASTED_SPEND"},
        ],
        opts=opts(parent),
    )


__all__ = ["stack_budget", "vms_at_full_size"]
