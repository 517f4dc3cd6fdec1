"""Rung 4's figures: the training cluster plan_training plans for the run (days, GPU-hours, cost, EFA, Lustre,
checkpoints), at the fewest nodes that meet the deadline, and owning those nodes against renting them.

The cluster is planned in passes, each fixing what the next reads: the first gives the training state's size
(which sizes Lustre: the kept checkpoints and the tokenized corpus); the next give the node count that meets the
deadline and, at that count, the Young/Daly checkpoint interval, until both settle. The layout is ZeRO-2 where it
fits GPU memory at that count, else ZeRO-3, else the planner's proposal (FIRST_LAYOUTS)."""

from __future__ import annotations

from decimal import Decimal

from gpuinfra.catalog import Catalog
from gpuinfra.plan.advise.model import OwnershipFigures, TrainRung
from gpuinfra.plan.advise.specs import advice_org, lustre_gib, training_spec
from gpuinfra.plan.checkpoint import HOURS_PER_MONTH
from gpuinfra.plan.layout import Layout, LayoutMemory
from gpuinfra.plan.ownership import ownership_plan
from gpuinfra.plan.rates import node_rates
from gpuinfra.plan.training import TrainingPlan, plan_training
from gpuinfra.spec import TrainingSpec
from gpuinfra.spec.intent import IntentSpec, Train

DEFAULT_NODES = 8
"""Nodes planned at when the intent names neither a count nor a deadline (64 H100s on p5.48xlarge)."""
FIRST_INTERVAL_MINUTES = 120.0
FIRST_LAYOUTS = (
    Layout(tensor=8, pipeline=1, zero_stage=2, recompute="selective"),
    Layout(tensor=8, pipeline=1, zero_stage=3, recompute="selective"),
)
"""The layouts tried, in order: tensor parallel in the node's eight GPUs, selective recompute (as
stacks/Pulumi.llm-train.yaml), ZeRO-2 across the nodes, then ZeRO-3. ZeRO-2 keeps each GPU's weight shard
resident and reduce-scatters the gradients once a step; ZeRO-3 re-gathers the weights over the interconnect for
every micro-batch (plan/throughput.py: llm-train's 70B at 16 nodes, 83.7 days at ZeRO-2 against 190 at ZeRO-3,
docs/planning.md), so it is the fallback where ZeRO-2's resident weights do not fit. ZeRO-1 is not tried: the step
model moves the same bytes a step at ZeRO-1 as at ZeRO-2 (plan/throughput.py _dp_seconds), and ZeRO-2 holds less.
Where neither fits, the planner's own proposal (plan/layout.py propose_layout: fewest pipeline stages, least
recomputation, smallest tensor parallel, lowest ZeRO stage) is taken."""
FIRST_CHOICE = "ZeRO-2 fits: ZeRO-3 would re-gather the weights over the interconnect for every micro-batch"
GB = 1e9
MAX_PASSES = 4
CENT = Decimal("0.01")


def _nodes(train: Train, plan: TrainingPlan) -> int:
    if train.nodes is not None:
        return train.nodes
    run = plan.run
    if train.deadline_days is not None and run is not None and run.meets_target is not None:
        return run.meets_target.nodes
    return plan.nodes


def planned_cluster(intent: IntentSpec, catalog: Catalog) -> tuple[TrainingPlan, TrainingSpec, str]:
    """The cluster at the first of FIRST_LAYOUTS that fits GPU memory at the node count it settles on, else at
    the planner's proposal; the last plan when nothing fits (its layout finding then says why). Returns why this
    layout."""
    train = intent.train or Train(tokens_billion=1)
    nodes = train.nodes or DEFAULT_NODES
    first = training_spec(intent, nodes, FIRST_INTERVAL_MINUTES, 1200, FIRST_LAYOUTS[-1])
    gib = lustre_gib(intent, plan_training(first, advice_org(), catalog).memory.total_bytes)
    refused: list[str] = []
    proposals: list[Layout] = []
    for layout in FIRST_LAYOUTS:
        plan, spec = _settled(intent, catalog, layout, gib)
        memory = plan.layout
        if memory is None or memory.fits:
            return plan, spec, "; ".join(refused) if refused else FIRST_CHOICE
        refused.append(_over(memory, plan.nodes))
        proposals += [memory.proposal] if memory.proposal is not None else []
    if proposals:  # the planner's proposal from the lowest ZeRO stage's layout (it never lowers the stage)
        plan, spec = _settled(intent, catalog, proposals[0], gib)
        refused.append(f"the planner proposes {proposals[0].describe()}")
    return plan, spec, "; ".join(refused)


def _over(memory: LayoutMemory, nodes: int) -> str:
    need = f"{memory.total_bytes / GB:,.1f} GB a GPU of {memory.gpu_bytes / GB:,.1f}"
    return f"{memory.layout.describe()} does not fit at {nodes} nodes ({need})"


def _settled(intent: IntentSpec, catalog: Catalog, layout: Layout, gib: int) -> tuple[TrainingPlan, TrainingSpec]:
    """The passes of the module docstring at one layout, repeated until the node count and the interval settle
    (each pass's sweep reads the checkpoint cost of its own interval and Lustre, and proposes only node counts
    where this layout fits)."""
    train = intent.train or Train(tokens_billion=1)
    org = advice_org()
    nodes, interval = train.nodes or DEFAULT_NODES, FIRST_INTERVAL_MINUTES
    spec = training_spec(intent, nodes, interval, gib, layout)
    plan = plan_training(spec, org, catalog)
    for _ in range(MAX_PASSES):
        settled = (_nodes(train, plan), _interval(plan))
        if settled == (nodes, interval):
            break
        nodes, interval = settled
        spec = training_spec(intent, nodes, interval, gib, layout)
        plan = plan_training(spec, org, catalog)
    return plan, spec


def _interval(plan: TrainingPlan) -> float:
    """The Young/Daly optimum, in whole minutes within what the spec takes."""
    if plan.checkpoint is None:
        return FIRST_INTERVAL_MINUTES
    return float(min(1440, max(5, round(plan.checkpoint.daly_interval_minutes))))


def train_rung(intent: IntentSpec, catalog: Catalog) -> tuple[TrainRung, TrainingSpec]:
    plan, spec, why = planned_cluster(intent, catalog)
    run, deadline = plan.run, intent.train.deadline_days if intent.train else None
    point = run.at_spec if run else None
    ownership, note = ownership_figures(intent, catalog, plan)
    rung = TrainRung(
        instance_type=plan.instance_type,
        nodes=plan.nodes,
        gpus=plan.gpus,
        days=point.days if point else None,
        gpu_hours=point.gpu_hours if point else None,
        cost_usd=point.cost_usd if point else None,
        deadline_days=deadline,
        meets_deadline=(point.days <= deadline) if point and point.days is not None and deadline else None,
        interconnect=spec.interconnect.type,
        efa_interfaces_per_node=plan.efa_interfaces_per_node,
        layout=plan.layout.layout.describe() if plan.layout else None,
        layout_gb=plan.layout.total_bytes / GB if plan.layout else None,
        gpu_gb=plan.layout.gpu_bytes / GB if plan.layout else None,
        layout_why=why,
        lustre_capacity_gib=plan.lustre_capacity_gib,
        lustre_throughput_mb_s=plan.lustre_throughput_mb_s,
        checkpoint_gb=plan.checkpoint.size_gb if plan.checkpoint else None,
        checkpoint_interval_minutes=plan.checkpoint.interval_minutes if plan.checkpoint else None,
        goodput=point.goodput if point else None,
        mfu=run.inputs.mfu if run else 0.0,
        mfu_source=run.inputs.mfu_source if run else "",
        price_sources=run.inputs.price_sources if run else [],
        notes=[*(run.notes if run else []), *([plan.run_note] if plan.run_note else [])],
        ownership=ownership,
        ownership_note=note,
    )
    return rung, spec


def ownership_figures(
    intent: IntentSpec, catalog: Catalog, plan: TrainingPlan
) -> tuple[OwnershipFigures | None, str | None]:
    """Owning the plan's nodes against renting them on demand, over the months they train (the intent's
    months_of_training, else the run's own days); plan/ownership.py does the arithmetic."""
    own = intent.constraints.ownership
    if own is None:
        return None, "not computed: give constraints.ownership (capex per node, life, power, colocation, PUE)"
    power = catalog.node_power(plan.instance_type)
    if power is None:
        return None, f"no published power figure for {plan.instance_type}: owning not priced"
    equivalent = own.aws_equivalent or plan.instance_type
    rates = node_rates(catalog, equivalent, own.aws_region)
    owned = ownership_plan(
        plan.nodes,
        own.capex_per_node_usd,
        own.life_years,
        plan.nodes * power.max_kw,
        own.power_draw_fraction,
        own.pue,
        own.power_usd_per_kwh,
        own.colocation_usd_per_kw_month,
        own.support_usd_per_node_year,
        equivalent,
        own.aws_region,
        {"on-demand": rates.on_demand},
        sorted({*rates.sources, power.source}),
    )
    train = intent.train
    days = plan.run.at_spec.days if plan.run else None
    months = train.months_of_training if train and train.months_of_training else (days or 0) * 24 / HOURS_PER_MONTH
    span = Decimal(repr(months))
    own_usd = (owned.total_monthly_usd * span).quantize(CENT)
    rental = owned.rentals[0]
    rent_usd = (rental.monthly_usd * span).quantize(CENT) if rental.monthly_usd is not None else None
    saving = float(1 - own_usd / rent_usd) if rent_usd else None
    figures = OwnershipFigures(
        months=months,
        own_usd=own_usd,
        rent_usd=rent_usd,
        saving_fraction=saving,
        break_even_month=rental.break_even_month,
        plan=owned,
    )
    return figures, None


__all__ = ["DEFAULT_NODES", "ownership_figures", "planned_cluster", "train_rung"]
