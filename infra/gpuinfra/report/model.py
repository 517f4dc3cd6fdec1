"""The report model: what every renderer (table, Markdown, JSON) formats. Versioned; `diff` reads it.

Renderers import only this module. Unknown money is None, never zero.
"""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuinfra.findings import blocks, verdict
from gpuinfra.graph.model import Resource
from gpuinfra.plan import Plan

REPORT_VERSION: Literal[1] = 1


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FindingOut(Model):
    rule: str
    level: Literal["info", "warning", "error"]
    path: str
    message: str
    hint: str | None = None
    file: str | None = None
    line: int | None = None


class Section(Model):
    """A titled table or list of facts for people: the plan, summarized."""

    title: str
    columns: list[str] = []
    rows: list[list[str]] = []
    notes: list[str] = []


class PolicyViolationOut(Model):
    """A policy's verdict on one resource (or on the stack as a whole: resource None)."""

    policy: str
    level: Literal["advisory", "mandatory"]
    resource: str | None = None
    """URN of the resource in violation; None for the stack."""
    resource_name: str | None = None
    message: str
    description: str = ""


class PolicyOut(Model):
    """How one policy of the pack fared on the stack."""

    name: str
    kind: Literal["resource", "stack"]
    level: Literal["advisory", "mandatory", "remediate", "disabled"]
    status: Literal["passed", "failed", "not-applicable", "disabled"]
    violations: int = 0
    reason: str | None = None
    """Why the policy did not apply, when it did not."""


class PolicyReportOut(Model):
    """The policy pack's run over the stack's graph (preview only)."""

    pack: str
    policies: list[PolicyOut] = []
    violations: list[PolicyViolationOut] = []


class Money(Model):
    """Hourly and monthly cost in USD, the month expected and at the fewest and most instances. None = unknown."""

    hourly_usd: Decimal | None = None
    monthly_usd: Decimal | None = None
    monthly_min_usd: Decimal | None = None
    monthly_max_usd: Decimal | None = None


class MoneyChange(Model):
    """One money type for a review, as Infracost's past/current/diff: the month before and after the change (each a
    Money: expected, autoscaling minimum and maximum; None inside where a side is unknown or absent) and the
    expected change, unknown when either side is."""

    before: Money = Money()
    after: Money = Money()
    delta_usd: Decimal | None = None


def money_change(
    before: Decimal | None,
    after: Decimal | None,
    delta: Decimal | None,
    before_range: tuple[Decimal | None, Decimal | None] = (None, None),
    after_range: tuple[Decimal | None, Decimal | None] = (None, None),
) -> MoneyChange:
    """A MoneyChange from expected totals, the change and (min, max) ranges."""
    return MoneyChange(
        before=Money(monthly_usd=before, monthly_min_usd=before_range[0], monthly_max_usd=before_range[1]),
        after=Money(monthly_usd=after, monthly_min_usd=after_range[0], monthly_max_usd=after_range[1]),
        delta_usd=delta,
    )


class CostLineOut(Money):
    """One priced dimension of a resource (Infracost's cost component)."""

    name: str
    quantity: Decimal | None = None
    unit: str
    unit_price_usd: Decimal | None = None
    price_unit: str = ""
    flags: list[str] = []
    """unconfirmed, region-fallback, spot-estimate, usage-based, assumed-usage, unknown-input, not-in-catalog."""
    sources: list[str] = []
    """Catalog source ids (infra/gpuinfra/catalog/data/sources.yaml)."""
    note: str | None = None


class ResourceCostOut(Money):
    urn: str
    type: str
    name: str
    component: str
    region: str | None = None
    account: str | None = None
    lines: list[CostLineOut] = []


class CostGroupOut(Model):
    """Monthly cost summed over a component, region or account."""

    key: str
    monthly_usd: Decimal
    monthly_min_usd: Decimal
    monthly_max_usd: Decimal


class CostOut(Model):
    """The priced graph of one stack. Totals sum the known lines; unknown lines are listed in `unpriced`."""

    currency: Literal["USD"] = "USD"
    monthly_usd: Decimal
    """Expected: Auto Scaling groups at their desired (else minimum) size."""
    monthly_min_usd: Decimal
    monthly_max_usd: Decimal
    hourly_usd: Decimal
    prices_as_of: datetime.date | None = None
    """Oldest catalog date behind the priced lines."""
    prices_as_of_newest: datetime.date | None = None
    resources: list[ResourceCostOut] = []
    """Resources with cost lines (free resources are only counted)."""
    free_resources: int = 0
    by_component: list[CostGroupOut] = []
    by_region: list[CostGroupOut] = []
    by_account: list[CostGroupOut] = []
    unpriced: list[str] = []
    doubtful: list[str] = []
    usage_file: str | None = None
    partial: bool = False
    """A line's price is unknown (not in the catalog, an input unknown until apply): every total above is a lower
    bound, "at least" (unpriced usage alone leaves a total whole, as Infracost's usage-based lines do)."""
    unknown_prices: list[str] = []
    """The lines that make the totals partial (a subset of `unpriced`)."""


class PreflightOut(Model):
    """What AWS or Kubernetes would refuse or ignore, judged by their own definitions (infra/preflight)."""

    rule: str
    level: Literal["error", "info"]
    urn: str
    name: str
    type: str
    path: str
    """Property path in the resource's Pulumi inputs; empty for the resource as a whole."""
    value: str
    message: str
    source: str


class PictureNodeOut(Model):
    """One part of a stack's picture: a node group, a file system, a load balancer..."""

    id: str
    label: str
    """What it is (e.g. FSx for Lustre) and its logical name."""
    group: str
    """Where it sits: its region (or the stack, when it has none)."""
    status: Literal["same", "added", "changed", "replaced", "deleted"] = "same"


class PictureOut(Model):
    """What a stack is, at a glance: its main parts by region and what connects them (report/build/picture.py)."""

    nodes: list[PictureNodeOut] = []
    edges: list[tuple[str, str]] = []


class EngineOut(Model):
    """The serving engine's catalog row a fleet's image, launch and metrics come from (catalog engines.yaml), and
    how old it is, as `cost.prices_as_of` says of the prices."""

    name: str
    source: str
    """The row's source id (engines.yaml `sources:`)."""
    as_of: datetime.date | None = None
    """Its source's date; None when the source gives none (undated, not new)."""


class StackReport(Model):
    stack: str
    file: str
    workload: Literal["training", "inference", "registry", "finetune", "dataprep"]
    account: str
    account_id: str | None = None
    findings: list[FindingOut] = []
    plan: Plan | None = None
    """The stack's plan, typed (its `workload` tells which); what `diff` reads back for usage and figures."""
    summary: list[Section] = []
    resources: list[Resource] | None = None
    """The graph's own records (gpuinfra.graph.Resource), serialized as they are: one record for a resource
    everywhere, in the engine, the report and the documents `diff` reads back."""
    """The resource graph (preview only)."""
    cost: CostOut | None = None
    """The graph priced from the catalog (preview only)."""
    policy: PolicyReportOut | None = None
    """The policy pack's verdicts on the graph (preview only)."""
    preflight: list[PreflightOut] | None = None
    """Preflight findings on the graph (preview only): errors first."""
    picture: PictureOut | None = None
    """The stack's main parts (preview only)."""
    engine: EngineOut | None = Field(default=None, exclude_if=lambda engine: engine is None)
    """An inference fleet's serving engine: which catalog row, its source and date (absent for other workloads)."""


class InputProblem(Model):
    """A stack that could not be read (exit 2)."""

    stack: str
    messages: list[str]


class CostTotalOut(Model):
    """Monthly cost over every stack of a report."""

    monthly_usd: Decimal
    monthly_min_usd: Decimal
    monthly_max_usd: Decimal
    prices_as_of: datetime.date | None = None
    prices_as_of_newest: datetime.date | None = None
    unpriced: int = 0
    partial: bool = False
    """A stack's total is partial (CostOut.partial): so is this sum, "at least"."""


class Report(Model):
    version: Literal[1] = REPORT_VERSION
    command: str
    stacks: list[StackReport] = []
    problems: list[InputProblem] = []
    cost: CostTotalOut | None = None
    """Sum of the stacks' costs (preview only)."""

    @property
    def exit_code(self) -> int:
        """errors.verdict over validator findings, policy violations and preflight findings."""
        levels = [
            *(f.level for s in self.stacks for f in s.findings),
            *(v.level for s in self.stacks if s.policy for v in s.policy.violations),
            *(f.level for s in self.stacks for f in s.preflight or ()),
        ]
        return verdict(bool(self.problems), levels)


class StackCostOut(Model):
    """One stack priced by `gpuinfra cost` (from a stack file or a JSON document)."""

    stack: str
    source: str
    """gpuinfra preview, pulumi preview --json, pulumi stack export or pulumi engine events."""
    cost: CostOut | None = None
    """None when the stack has no graph (an error finding stopped the preview)."""
    notes: list[str] = []


class CostReport(Model):
    version: Literal[1] = 1
    command: Literal["cost"] = "cost"
    stacks: list[StackCostOut] = []
    total: CostTotalOut | None = None
    problems: list[InputProblem] = []

    @property
    def exit_code(self) -> int:
        if self.problems:
            return 2
        return 1 if any(s.cost is None for s in self.stacks) else 0


class PropertyChangeOut(Model):
    path: str
    before: Any = None
    after: Any = None
    absent_before: bool = False
    absent_after: bool = False
    effect: Literal["update", "replace", "refresh", "may-replace", "unknown"]
    """refresh: in place, but the group replaces its running instances."""
    reason: str | None = None
    """Catalog source id of the rule (replacements.yaml), or 'pulumi' for Pulumi's replaceReasons."""
    reason_url: str | None = None


class ResourceChangeOut(Model):
    type: str
    name: str
    action: Literal["create", "delete", "update", "replace", "same"]
    """same: inputs equal, only the cost moved (e.g. spec-derived usage)."""
    component: str = ""
    changes: list[PropertyChangeOut] = []
    monthly: MoneyChange = MoneyChange()


class FindingChangeOut(Model):
    """A validator finding, policy result or Pulumi diagnostic, compared by (stack, rule, where, message)."""

    stack: str
    source: str
    rule: str
    level: str
    where: str
    message: str
    status: Literal["new", "resolved", "unchanged", "not-judged"]
    """not-judged: the base had it and the head was not judged (not previewed), so whether it is gone is unknown."""


class FigureChangeOut(Model):
    """A plan figure (run days, cost per run, cost of ownership...) that the change moves."""

    name: str
    unit: Literal["usd", "days", "hours", "months", "usd per 1M tokens", "rps"]
    before: Decimal | None = None
    after: Decimal | None = None


class StackDiffOut(Model):
    stack: str
    status: Literal["changed", "unchanged", "added", "removed", "not-previewed"]
    """not-previewed: a side has no graph (an error finding stopped its preview); its cost is left out."""
    counts: dict[str, int] = {}
    monthly: MoneyChange = MoneyChange()
    resources: list[ResourceChangeOut] = []
    findings: list[FindingChangeOut] = []
    unpriced_after: list[str] = []
    doubtful_after: list[str] = []
    figures: list[FigureChangeOut] = []
    picture: PictureOut | None = None
    """The head's parts (the base's for a removed stack), the changed ones marked."""
    """Plan figures that differ between base and head."""
    not_judged: str | None = None
    """Why the head was not judged (not previewed): the review cannot pass it. None when it was judged."""
    partial: bool = False
    """A side's total leaves out a line whose price is unknown: its totals are lower bounds, its change inexact."""


class DataLossOut(Model):
    """A replacement or deletion of a resource that holds data, and what it loses (review/stateful.py)."""

    stack: str
    type: str
    name: str
    action: Literal["replace", "delete"]
    lost: str
    protected: bool
    """Pulumi `protect` is on the deployed resource: `pulumi up` stops at this step instead of destroying it."""


class DiffReport(Model):
    version: Literal[1] = 1
    command: Literal["diff"] = "diff"
    base: str
    head: str
    monthly: MoneyChange = MoneyChange()
    prices_as_of: datetime.date | None = None
    prices_as_of_newest: datetime.date | None = None
    losses: list[DataLossOut] = []
    """Stateful data a head would destroy: the headline names these first."""
    disruption: list[str] = []
    """What the change does to running instances (groups that roll, replacements, nodes added or removed), said
    in the headline before the money (report/build/disruption.py)."""
    stacks: list[StackDiffOut] = []
    notes: list[str] = []
    problems: list[InputProblem] = []

    @property
    def blocking(self) -> list[FindingChangeOut]:
        """The head side's findings that fail the check (errors.verdict's rule)."""
        return [f for s in self.stacks for f in s.findings if f.status != "resolved" and blocks(f.level)]

    @property
    def partial(self) -> list[str]:
        """Stacks whose totals leave out an unknown price (on either side)."""
        return [s.stack for s in self.stacks if s.partial]

    @property
    def not_judged(self) -> list[StackDiffOut]:
        """Stacks whose head was not judged: nothing says they pass, so the review does not."""
        return [s for s in self.stacks if s.not_judged]

    @property
    def exit_code(self) -> int:
        """2 when the head (or an input) cannot be read; 1 when a head finding blocks or a head stack was not
        judged; else 0 (errors.verdict)."""
        code = verdict(bool(self.problems), (f.level for f in self.blocking))
        return max(code, 1) if self.not_judged else code


class CatalogSourceOut(Model):
    """A source the catalog cites (sources.yaml): its title, URL and the date it gives (None: it gives none)."""

    id: str
    title: str
    url: str
    date: datetime.date | None = None


class CatalogTypeOut(Model):
    """One instance type as the planner sees it: hardware, network cards, what it is for."""

    name: str
    family: str
    role: str | None = None
    """serving, training or other (families.yaml)."""
    vcpu: int
    memory_gib: int
    accelerator: str | None = None
    accelerator_kind: str | None = None
    accelerator_count: int
    accelerator_memory_mib: int
    """Per device."""
    gpu_product: str | None = None
    """nvidia.com/gpu.product as GPU feature discovery sets it."""
    instance_store_gb: int
    network_baseline_gbps: float
    network_burst_gbps: float | None = None
    network_cards: int
    max_interfaces: int
    efa_interfaces: int
    efa_cards: list[int] = []
    capacity_blocks: bool = False
    regions_priced: int = 0
    """Regions with an on-demand price."""
    on_demand_min_usd: Decimal | None = None
    """Cheapest on-demand hourly price over those regions; None when it has none."""
    region: str | None = None
    """The region asked for (`gpuinfra catalog --region R`), whose own price follows."""
    region_on_demand_usd: Decimal | None = None
    region_on_demand_as_of: datetime.date | None = None
    source: str
    as_of: datetime.date | None = None


class CatalogSpotOut(Model):
    """Spot over one region's zones, as discounts off on-demand (every one > 0), and the snapshot's date."""

    mean_discount: Decimal
    low_discount: Decimal | None = None
    """The dearest zone; None when some zone had no spot offer."""
    high_discount: Decimal
    """The cheapest zone."""
    mean_usd: Decimal
    """On-demand x (1 - mean discount)."""
    source: str
    as_of: datetime.date | None = None


class CatalogPriceOut(Model):
    """A type's price in one region: on-demand and the spot distribution; None is unknown, never zero."""

    region: str
    on_demand_usd: Decimal | None = None
    on_demand_source: str | None = None
    on_demand_as_of: datetime.date | None = None
    spot: CatalogSpotOut | None = None
    capacity_block_usd: Decimal | None = None
    capacity_block_note: str | None = None
    """Why the Capacity Block rate is unknown (when the family is sold as Capacity Blocks)."""
    interruption_band: str | None = None
    """The Spot Instance Advisor's interruption-frequency band ("<5%" ... ">20%"); None when the catalog has none."""
    interruption_as_of: datetime.date | None = None
    interruption_source: str | None = None


class CatalogQuotaOut(Model):
    """The EC2 quota (vCPUs per account and region) that counts a purchase option of the family, or why none is
    known."""

    purchase: str
    scope: str = "account"
    code: str | None = None
    name: str | None = None
    source: str
    reason: str | None = None


class CatalogDetailOut(Model):
    type: CatalogTypeOut
    prices: list[CatalogPriceOut] = []
    quotas: list[CatalogQuotaOut] = []
    spot_default_discount: Decimal
    """What a region without a spot row is priced at (flagged spot-estimate)."""


class CatalogRegionOut(Model):
    region: str
    types_priced: int
    """Catalog types with an on-demand price in the region."""


class CatalogReport(Model):
    """`gpuinfra catalog`: what the planner and the pricer read, listed or for one type."""

    version: Literal[1] = 1
    command: Literal["catalog"] = "catalog"
    filters: dict[str, str] = {}
    types: list[CatalogTypeOut] = []
    regions: list[CatalogRegionOut] = []
    detail: CatalogDetailOut | None = None
    sources: list[CatalogSourceOut] = []
    """Every source the listed figures cite."""
    problems: list[InputProblem] = []

    @property
    def exit_code(self) -> int:
        return 2 if self.problems else 0


__all__ = [
    "REPORT_VERSION",
    "CatalogDetailOut",
    "CatalogPriceOut",
    "CatalogQuotaOut",
    "CatalogRegionOut",
    "CatalogReport",
    "CatalogSourceOut",
    "CatalogSpotOut",
    "CatalogTypeOut",
    "CostGroupOut",
    "CostLineOut",
    "CostOut",
    "CostReport",
    "CostTotalOut",
    "DiffReport",
    "EngineOut",
    "FindingChangeOut",
    "FindingOut",
    "InputProblem",
    "Money",
    "MoneyChange",
    "PolicyOut",
    "PolicyReportOut",
    "PolicyViolationOut",
    "PropertyChangeOut",
    "Report",
    "Resource",
    "ResourceChangeOut",
    "ResourceCostOut",
    "Section",
    "StackCostOut",
    "StackDiffOut",
    "StackReport",
    "money_change",
]
