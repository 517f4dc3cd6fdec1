"""What `gpuinfra advise` answers: each rung's figures, where the ladder stopped and why, the lifetime bill. Plain
data (JSON as it stands); unknown is None with a note saying what is missing, never zero."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Literal

from gpuinfra.plan.memory import Plain
from gpuinfra.plan.ownership import OwnershipPlan


class ApiOption(Plain):
    """A hosted model comparable to the intent's, priced at the intent's traffic."""

    provider: str
    model: str
    input_usd_per_mtok: Decimal
    output_usd_per_mtok: Decimal
    monthly_usd: Decimal
    """Input and output tokens of an average month (730 hours) at the listed prices."""
    blended_usd_per_mtok: Decimal
    """Its price per million tokens of the intent's mix of input and output."""
    eligible: bool
    why_not: str | None = None
    source: str
    source_url: str
    as_of: datetime.date | None
    read_on: datetime.date


class ManagedRung(Plain):
    options: list[ApiOption]
    cheapest: ApiOption | None
    """The cheapest eligible option at this traffic (None: none is priced, or none qualifies)."""


class ServingRung(Plain):
    instance_type: str | None
    accelerator: str | None = None
    gpus_per_replica: int = 0
    regions: list[str]
    max_sequences: int = 0
    """Sequences a replica batches: the most whose decode still meets the latency target."""
    generation_seconds: float | None = None
    """Decoding one answer at that batch (the calibrated ceiling): the latency floor."""
    throughput_rps_per_replica: float | None = None
    throughput_source: str = ""
    replicas_floor: int = 0
    replicas_mean: int = 0
    """Replicas over all regions at the day's mean load (never below the floor): what a month is billed for."""
    replicas_peak: int = 0
    """Replicas the peak needs over all regions (before the fleet's own maximum and failover headroom)."""
    hourly_usd: dict[str, Decimal | None] = {}
    """On-demand price of one replica per region (catalog)."""
    monthly_usd: Decimal | None = None
    usd_per_mtok_output: Decimal | None = None
    """A replica's price per million output tokens at the planned rate (plan/tokens.py)."""
    usd_per_mtok_blended: Decimal | None = None
    """The month's bill over the month's input and output tokens (the utilization the floor and the mean allow)."""
    cold_start_seconds: float | None = None
    warm_resume_seconds: float | None = None
    break_even_tokens_per_day: float | None = None
    """Daily tokens from which this fleet costs less than the cheapest eligible hosted API (None: never, or no
    eligible API to compare)."""
    price_sources: list[str] = []
    note: str | None = None


class AdaptRung(Plain):
    method: str
    instance_type: str | None
    gpus: int
    hours_per_run: float | None
    cost_per_run_usd: Decimal | None
    iterations: int
    cost_usd: Decimal | None
    """Cost per run x the runs the intent expects."""
    mfu: float
    mfu_source: str
    price_sources: list[str] = []
    refusal: str | None = None
    adapter_parameters: int | None = None
    """Trainable parameters of the adapter (plan/adapters.py): the fleet serves it beside the base."""


class OwnershipFigures(Plain):
    """Owning the training nodes against renting them on demand, over the months they train."""

    months: float
    own_usd: Decimal
    """Capital (straight-line over the nodes' life, for the months used) plus power, colocation and support."""
    rent_usd: Decimal | None
    saving_fraction: float | None
    break_even_month: int | None
    plan: OwnershipPlan


class TrainRung(Plain):
    instance_type: str
    nodes: int
    gpus: int
    days: float | None
    gpu_hours: float | None
    cost_usd: Decimal | None
    deadline_days: float | None
    meets_deadline: bool | None
    interconnect: str
    efa_interfaces_per_node: int
    layout: str | None
    """The parallel layout planned (plan/layout.py Layout.describe), None without the model's architecture."""
    layout_gb: float | None
    """Its bytes a GPU (weights, gradients, optimizer states, activations, buffers, reserve), in GB."""
    gpu_gb: float | None
    layout_why: str
    """Why this ZeRO stage: the lower ones tried and what they need, or that the first fits."""
    lustre_capacity_gib: int | None
    lustre_throughput_mb_s: float | None
    checkpoint_gb: float | None
    checkpoint_interval_minutes: float | None
    goodput: float | None
    mfu: float
    mfu_source: str
    price_sources: list[str] = []
    notes: list[str] = []
    ownership: OwnershipFigures | None = None
    ownership_note: str | None = None


class DataPrep(Plain):
    raw_tb: float
    planned: bool
    hours: float | None = None
    cost_usd: Decimal | None = None
    note: str


class Rung(Plain):
    number: int
    title: str
    applies: bool
    """Whether the intent reaches this question at all (rung 2 only when it adapts...)."""
    answer: bool
    """The first honest answer: the ladder stops at the first rung where this is true."""
    why: str


class BillLine(Plain):
    what: str
    kind: Literal["one-off", "recurring"]
    usd: Decimal | None
    """One-off: the whole; recurring: a month."""
    basis: str


class Bill(Plain):
    horizon_months: int
    lines: list[BillLine]
    one_off_usd: Decimal
    """Known one-off costs (a line whose cost is unknown is listed in `unknown`, not counted as zero)."""
    recurring_monthly_usd: Decimal
    total_usd: Decimal
    complete: bool
    """False when a line is unknown: the total is then a lower bound."""
    unknown: list[str] = []
    recurring_share: float | None = None
    """Share of the total that the recurring (serving) part is: it usually dominates."""


class Curve(Plain):
    """One option's cumulative cost, month by month over the horizon (month 0: the one-off costs)."""

    option: str
    one_off_usd: Decimal
    monthly_usd: Decimal
    cumulative_usd: list[Decimal]


class Accounts(Plain):
    """Rung 5: training and serving never share an account (the policy pack refuses it)."""

    training: str | None
    serving: str | None
    rule: str
    dataprep: str | None = None
    """Where the named corpus is prepared: raw text (PII) stays out of training too."""


class Advice(Plain):
    intent: str
    horizon_months: int
    stopped_at: int
    answer: str
    rungs: list[Rung]
    managed: ManagedRung | None
    serving: ServingRung | None
    adapt: AdaptRung | None
    train: TrainRung | None
    dataprep: DataPrep | None
    accounts: Accounts
    bill: Bill
    curves: list[Curve]
    movers: list[str]
    """What would move the answer, with the figure at which it would."""


__all__ = [
    "Accounts",
    "AdaptRung",
    "Advice",
    "ApiOption",
    "Bill",
    "BillLine",
    "Curve",
    "DataPrep",
    "ManagedRung",
    "OwnershipFigures",
    "Rung",
    "ServingRung",
    "TrainRung",
]
