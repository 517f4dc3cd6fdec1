"""The intent file (`gpuinfra:intent`): what a team wants from a model before anyone picks a cluster. The model,
its traffic, whether it must be adapted or trained, the corpus to prepare, the horizon and the constraints;
`gpuinfra advise` walks the decision ladder over it (docs/advise.md).

The file is YAML with one top-level key, `gpuinfra:intent`; it gets the stack files' errors (file, line, field,
hint; exit 2)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    ConfigDict,
    Field,
    JsonValue,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from gpuinfra.errors import FieldPath, InputError
from gpuinfra.spec.base import Invalid, Money, Name, Region, SpecModel
from gpuinfra.spec.finetune import BaseArchitecture, FinetuneMethod
from gpuinfra.spec.inference import LORA_RANKS, AcceleratorName, ServingPrecision
from gpuinfra.spec.org import Ownership
from gpuinfra.spec.problems import did_you_mean, shown, validation_problems
from gpuinfra.spec.yamlfile import YamlDocument, read_yaml

INTENT_KEY = "gpuinfra:intent"


class IntentArchitecture(BaseArchitecture):
    """The model's shape (its config.json), as a fine-tuning spec's base_model.architecture gives it."""

    head_dim: Annotated[int, Field(ge=8, le=1024)] | None = None
    """Default: hidden_size / attention_heads."""


class IntentModel(SpecModel):
    """The model the product runs on."""

    name: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]
    """Its name, e.g. llama-3.1-8b-instruct (the served model and the stacks `--init` writes use it)."""
    family: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]
    """Its family, e.g. llama-3.1: hosted models of the same size are what the managed-API rung compares."""
    parameters_billion: Annotated[float, Field(gt=0, le=100_000)]
    """Parameters in billions (8 for Llama 3.1 8B): sizes the weights, the training run and the hosted yardstick."""
    precision: ServingPrecision = "bf16"
    """Precision the weights are served at (fp8 halves the bytes a decode step reads on Ada and Hopper)."""
    kv_cache_precision: Literal["fp16", "bf16", "fp8"] | None = None
    """Default: fp8 with fp8 weights, else the weights' precision."""
    context_length_tokens: Annotated[int, Field(ge=256, le=2_097_152)] = 8192
    """The longest sequence a request may hold (prompt and answer): sizes the KV cache a replica reserves."""
    architecture: IntentArchitecture


def given(*fields: str) -> list[JsonValue]:
    """JSON Schema alternatives, one per field: the field written with a value, not null (what the model's
    validators ask of `None`-defaulted fields, told to an editor)."""
    return [
        {"required": [f], "properties": {f: {"not": {"type": "null"}, "description": f"{f}, given a value"}}}
        for f in fields
    ]


class Traffic(SpecModel):
    """What the product asks of the model once it is live."""

    model_config = ConfigDict(json_schema_extra={"oneOf": given("requests_per_day", "tokens_per_day_million")})

    requests_per_day: Annotated[float, Field(gt=0)] | None = None
    """Requests a day, over all regions (give this or tokens_per_day_million)."""
    tokens_per_day_million: Annotated[float, Field(gt=0)] | None = None
    """Input plus output tokens a day, in millions (give this or requests_per_day)."""
    input_tokens: Annotated[int, Field(ge=1, le=2_097_152)]
    """Mean prompt tokens per request (system prompt and history included)."""
    output_tokens: Annotated[int, Field(ge=1, le=2_097_152)]
    """Mean generated tokens per request."""
    peak_rps: Annotated[float, Field(gt=0)]
    """Requests per second at the busiest minute of the day, over all regions."""
    latency_target_seconds: Annotated[float, Field(gt=0, le=3600)]
    """End-to-end time to the last token a request may take."""
    regions: Annotated[list[Region], Field(min_length=1, max_length=16)]
    """Where users are served from; the traffic splits evenly over them."""
    gpu: AcceleratorName | None = None
    """Serve on this accelerator (L4, L40S...); default: the cheapest type that holds the model."""
    throughput_rps_per_replica: Annotated[float, Field(gt=0)] | None = None
    """Measured with `vllm bench serve` at this request shape; default: the planner's calibrated ceiling."""
    min_replicas_per_region: Annotated[int, Field(ge=1, le=1000)] = 2
    """Replicas kept in each region at the quietest hour: one per zone of two."""

    @model_validator(mode="after")
    def _one_volume(self) -> Traffic:
        if (self.requests_per_day is None) == (self.tokens_per_day_million is None):
            raise Invalid(
                "give the daily volume one way: requests_per_day or tokens_per_day_million",
                ("requests_per_day",),
                "keep exactly one of requests_per_day and tokens_per_day_million",
            )
        return self

    @property
    def daily_requests(self) -> float:
        if self.requests_per_day is not None:
            return self.requests_per_day
        assert self.tokens_per_day_million is not None
        return self.tokens_per_day_million * 1e6 / (self.input_tokens + self.output_tokens)


class Adapt(SpecModel):
    """The model must be adapted (a tone, a domain, a format) before it serves."""

    method: FinetuneMethod = "qlora"
    """lora or qlora (one GPU node is tried first, as the ladder says); full is training."""
    dataset_tokens_million: Annotated[float, Field(gt=0, le=10_000_000)]
    """Tokens of the fine-tuning set (one epoch)."""
    epochs: Annotated[float, Field(gt=0, le=1000)] = 1
    """Passes over the fine-tuning set a run."""
    iterations: Annotated[int, Field(ge=1, le=1000)] = 3
    """Runs expected before the adapter is right (data fixes, hyper-parameters)."""
    lora_rank: Annotated[int, Field(ge=1, le=512)] = 16
    """The adapter's rank: one vLLM can serve (--max-lora-rank takes 1, 8, 16, 32, 64, 128, 256, 320 or 512)."""
    sequence_length: Annotated[int, Field(ge=128, le=2_097_152)] = 2048
    """Tokens a training sequence (the fine-tuning batch's)."""
    region: Region | None = None
    """Where the runs go; default: the first traffic region, else us-east-1."""

    @field_validator("lora_rank")
    @classmethod
    def _served_rank(cls, rank: int) -> int:
        if rank not in LORA_RANKS:
            raise ValueError(f"vLLM serves LoRA ranks {', '.join(map(str, LORA_RANKS))}; {rank} is not one")
        return rank


class Train(SpecModel):
    """The model must be (pre)trained: no existing checkpoint will do."""

    tokens_billion: Annotated[float, Field(gt=0, le=1_000_000)]
    """Tokens the run trains on, in billions (1,000 for 1T)."""
    deadline_days: Annotated[float, Field(gt=0, le=3650)] | None = None
    """Wall-clock days the run must finish in; the planner names the node count that meets it."""
    instance_type: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.-]*$")] = "p5.48xlarge"
    """The training node type (catalog name); the planner picks how many."""
    region: Region = "us-east-1"
    nodes: Annotated[int, Field(ge=1, le=4096)] | None = None
    """Nodes to plan at; default: the fewest that meet the deadline (8 without one)."""
    sequence_length: Annotated[int, Field(ge=128, le=2_097_152)] = 8192
    """Tokens a training sequence; the global batch stays at 4M tokens (plan/advise/specs.py BATCH_TOKENS)."""
    mfu: Annotated[float, Field(gt=0, le=1)] | None = None
    """Model FLOPs utilization if measured; default: the planner's step model."""
    months_of_training: Annotated[float, Field(gt=0, le=120)] | None = None
    """How long the cluster keeps training (successive runs), for owning versus renting; default: the run."""


class Corpus(SpecModel):
    """Raw data to turn into training tokens before the first run."""

    raw_tb: Annotated[float, Field(gt=0, le=1_000_000)]
    """Raw data to prepare, in TB (10^12 bytes) as stored: WARC, compressed, like one Common Crawl snapshot."""
    description: Annotated[str, StringConstraints(max_length=200)] | None = None
    """What the corpus is (for the reader; the planner does not read it)."""


class OwnedNodes(Ownership):
    """The organization file's ownership figures for a site (spec/org.py Ownership), and the site's PUE."""

    pue: Annotated[float, Field(ge=1, le=3)]
    """Facility power over IT power at the site (the training stack's racks.pue)."""


class Constraints(SpecModel):
    """What rules options out whatever they cost."""

    managed_api: bool = True
    """false: the data may not go to any hosted model API."""
    managed_providers: list[Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]+$")]] | None = None
    """Only these providers (catalog data/managed_apis.yaml names them) are acceptable; default: any."""
    data_residency: list[Region] | None = None
    """Data stays in these regions: a provider qualifies only if the catalog says it serves from them."""
    custom_serving: bool = False
    """The product needs serving of its own (own weights, a latency or isolation a hosted API cannot give)."""
    monthly_budget_usd: Annotated[Money, Field(gt=0)] | None = None
    """The most the answer may cost a month: a bill above it is named among what would move the answer."""
    ownership: OwnedNodes | None = None
    """Figures for owning the training nodes (capex, power, colocation): owning versus renting over the horizon."""


class IntentSpec(SpecModel):
    """What the team wants; `gpuinfra advise` says what to build for it and what it costs."""

    model_config = ConfigDict(json_schema_extra={"anyOf": given("traffic", "adapt", "train")})

    name: Name
    model: IntentModel
    traffic: Traffic | None = None
    """None: nothing is served (a research model)."""
    adapt: Adapt | None = None
    train: Train | None = None
    corpus: Corpus | None = None
    horizon_months: Annotated[int, Field(ge=1, le=120)] = 24
    """Months the lifetime bill covers."""
    constraints: Constraints = Constraints()

    @model_validator(mode="after")
    def _something(self) -> IntentSpec:
        if self.traffic is None and self.adapt is None and self.train is None:
            raise Invalid(
                "the intent asks for nothing: no traffic, no adaptation, no training",
                ("traffic",),
                "add traffic (what the model serves), adapt or train",
            )
        return self


@dataclass(frozen=True)
class IntentDocument:
    path: Path
    spec: IntentSpec
    doc: YamlDocument


def read_intent(path: Path) -> IntentDocument:
    """Parse an intent file; every shape error at once, each with file, line and field path."""
    doc = read_yaml(path, "intent file")
    return parse_intent(doc)


def parse_intent(doc: YamlDocument) -> IntentDocument:
    data = doc.data
    if not isinstance(data, dict):
        raise InputError([doc.problem(f"an intent file is a mapping with one key, {INTENT_KEY}", hint=HINT)])
    unknown = [k for k in data if k != INTENT_KEY]
    if unknown:
        raise InputError(
            [
                doc.problem(
                    f"unknown top-level key {shown(k)} in an intent file",
                    (k,),
                    did_you_mean(str(k), [INTENT_KEY]) or f"an intent file holds one key, {INTENT_KEY}",
                )
                for k in unknown
            ]
        )
    if INTENT_KEY not in data:
        raise InputError([doc.problem(f"an intent file is a mapping with one key, {INTENT_KEY}", hint=HINT)])
    prefix: FieldPath = (INTENT_KEY,)
    if not isinstance(data[INTENT_KEY], dict):
        raise InputError([doc.problem(f"{INTENT_KEY} must be a mapping of the intent's fields", prefix, HINT)])
    try:
        spec = IntentSpec.model_validate(data[INTENT_KEY])
    except ValidationError as exc:
        raise InputError(validation_problems(exc, IntentSpec, doc, prefix)) from None
    return IntentDocument(path=doc.path, spec=spec, doc=doc)


HINT = "see docs/advise.md for the intent's fields, or an example under stacks/intents/"

__all__ = [
    "INTENT_KEY",
    "Adapt",
    "Constraints",
    "Corpus",
    "IntentArchitecture",
    "IntentDocument",
    "IntentModel",
    "IntentSpec",
    "OwnedNodes",
    "Traffic",
    "Train",
    "parse_intent",
    "read_intent",
]
