"""The stack specs an intent implies, built as the stack files would write them, so the existing planners answer
each rung (plan_inference, plan_finetune, plan_training) and `advise --init` writes the same specs out.

Values a deployment must make its own (certificate, hosted zone, AMI, buckets) are placeholders of the form
`gpuinfra init` writes (the stack files `advise --init` writes say so); the planners never read them. Training and
serving get separate accounts: rung 5 of the ladder, which the policy pack enforces (docs/policies.md)."""

from __future__ import annotations

import math
from typing import Any, TypeVar

from pydantic import ValidationError

from gpuinfra.catalog.engines import Engine
from gpuinfra.plan.layout import Layout
from gpuinfra.plan.pcs import lustre_need_gib
from gpuinfra.spec import DataprepSpec, FinetuneSpec, InferenceSpec, Organization, TrainingSpec
from gpuinfra.spec.intent import IntentSpec, Train

TRAINING_ACCOUNT = "ml-training"
SERVING_ACCOUNT = "ml-inference"
"""The two accounts of the organization skeleton `gpuinfra init` writes (templates/init/org.yaml.j2)."""
DATAPREP_ACCOUNT = "ml-dataprep"
"""Data preparation's own account (purpose dataprep): the raw text and its CPU fleet stay out of training."""
WARC_FILES_PER_TB = 90_000 / 60
"""Input files a TB when an intent gives only the corpus's size: one Common Crawl snapshot is about 60 TB of
compressed WARC in 90,000 files (stacks/Pulumi.corpus-prep.yaml cites both), about 0.67 GB a file."""
DATAPREP_DEADLINE_HOURS = 720
"""Wall time the preparation may take when the intent names none: a month, the corpus-prep example's deadline; the
planner then picks the cheapest worker count that meets it."""
DIGEST = "sha256:" + "0" * 64
"""A digest placeholder: a trainer image is pinned by digest (the spec refuses a tag alone)."""
VLLM_MAX_NUM_SEQS = 256
"""vLLM's default max_num_seqs (EngineArgs): the most sequences a replica batches unless told otherwise."""
INT32_TOKEN_BYTES = 4
"""Bytes per token id on disk: Megatron's indexed dataset stores ids as int32 once the vocabulary passes 65,500
(megatron/core/datasets/indexed_dataset.py DType.optimal_dtype); Llama 3's is 128,256."""
CHECKPOINTS_KEPT = 3
"""Checkpoints kept on Lustre (the keep_last of stacks/Pulumi.llm-train.yaml), besides the one being written."""
GIB = 2**30
BATCH_TOKENS = 4 * 2**20
"""Tokens a training step: Llama 3 405B began pre-training at 4M tokens a step (Dubey et al. 2024, "The Llama 3
Herd of Models", section 3.4.1); the global batch stays fixed at every node count the planner tries."""


class IntentProblem(ValueError):
    """Something in the intent no stack can be built from (a name the catalog lacks; a fleet past 10,000
    replicas, Lustre past 2 PiB): `at` is the intent's part it is about, for the error the command reports
    (file, line, field, hint)."""

    def __init__(self, message: str, at: tuple[str | int, ...], hint: str) -> None:
        super().__init__(message)
        self.at = at
        self.hint = hint


M = TypeVar("M", InferenceSpec, FinetuneSpec, TrainingSpec, DataprepSpec)
BEYOND_HINT = "ask for less here, or split it (more regions, a smaller model, fewer tokens a run)"


def _built(model: type[M], data: dict[str, Any], at: tuple[str, ...]) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        message = f"the {model.__name__} this implies is out of bounds: {where}: {first['msg']}"
        raise IntentProblem(message, at, BEYOND_HINT) from None


def stack_name(intent: IntentSpec, suffix: str) -> str:
    """`<intent>-<suffix>` within the spec's 32-character name."""
    base = intent.name[: 31 - len(suffix)].rstrip("-")
    return f"{base}-{suffix}"


def advice_org() -> Organization:
    """The organization the planners see: one training and one inference account (no quotas, no budget set
    aside), as `gpuinfra init`'s skeleton has them."""
    account = {"role_arn": "arn:aws:iam::{id}:role/gpuinfra-deploy", "monthly_budget_usd": 1_000_000}
    accounts = {
        name: {**account, "id": ident, "role_arn": str(account["role_arn"]).format(id=ident), "purpose": purpose}
        for name, ident, purpose in (
            (TRAINING_ACCOUNT, "111111111111", "training"),
            (SERVING_ACCOUNT, "222222222222", "inference"),
            (DATAPREP_ACCOUNT, "444444444444", "dataprep"),
        )
    }
    return Organization.model_validate({"name": "advice", "accounts": accounts})


def _head_dim(intent: IntentSpec) -> int:
    arch = intent.model.architecture
    return arch.head_dim or arch.hidden_size // arch.attention_heads


def serving_spec(
    intent: IntentSpec,
    throughput_rps: float,
    max_sequences: int,
    engine: Engine,
    adapter_parameters: int | None = None,
) -> InferenceSpec:
    """A fleet in each traffic region, sized for the region's share of the peak at `throughput_rps` a replica, on
    `engine`'s image at its pin (its engines.yaml row); with `adapter_parameters`, the intent's LoRA adapter served
    beside its base (vLLM --enable-lora)."""
    traffic = intent.traffic
    assert traffic is not None, "only an intent with traffic is served"
    model, arch = intent.model, intent.model.architecture
    peak = traffic.peak_rps / len(traffic.regions)
    floor = traffic.min_replicas_per_region
    regions = [
        {
            "region": r,
            "min_replicas": floor,
            "max_replicas": max(floor, math.ceil(peak / throughput_rps)),
            "peak_rps": peak,
            "certificate_arn": f"arn:aws:acm:{r}:222222222222:certificate/00000000-0000-0000-0000-000000000000",
        }
        for r in traffic.regions
    ]
    kv_precision = model.kv_cache_precision or ("fp8" if model.precision == "fp8" else None)
    data: dict[str, Any] = {
        "name": stack_name(intent, "serve"),
        "account": SERVING_ACCOUNT,
        "model": {
            "name": model.name,
            "parameters_billion": model.parameters_billion,
            "precision": model.precision,
            "context_length_tokens": model.context_length_tokens,
            "kv_cache": {"layers": arch.layers, "kv_heads": arch.kv_heads, "head_dim": _head_dim(intent)}
            | ({"precision": kv_precision} if kv_precision else {}),
            "attention_heads": arch.attention_heads,
            "max_concurrent_sequences": max_sequences,
            "weights_prefix": f"{model.name}/v1/",
        }
        | _adapters(intent, adapter_parameters),
        "instance": {"type": "auto"} | ({"gpu": traffic.gpu} if traffic.gpu else {}),
        "requests": {
            "input_tokens": traffic.input_tokens,
            "output_tokens": traffic.output_tokens,
            "latency_target_seconds": traffic.latency_target_seconds,
        },
        "throughput_rps_per_replica": throughput_rps,
        "image_id": "ami-0123456789abcdef0",
        "server_image": engine.image,
        "server_image_digest": engine.image_digest,
        "regions": regions,
        "autoscaling": {"target_queue_depth_per_replica": max(1, max_sequences // 2)},
        "global_routing": {
            "type": "route53_latency",
            "domain_name": f"{intent.name}.example.com",
            "hosted_zone_id": "Z0000000000000",
        },
    }
    return _built(InferenceSpec, data, ("traffic",))


def _adapters(intent: IntentSpec, parameters: int | None) -> dict[str, Any]:
    if intent.adapt is None or parameters is None:
        return {}
    adapter = {
        "name": intent.name,
        "weights_prefix": f"adapters/{stack_name(intent, 'finetune')}/v1/",
        "rank": intent.adapt.lora_rank,
        "parameters_million": parameters / 1e6,
        "base_model": intent.model.name,
    }
    return {"adapters": [adapter]}


def finetune_spec(intent: IntentSpec) -> FinetuneSpec:
    """One fine-tuning run of the intent's adapter on one node (`auto`: the cheapest that fits, per run)."""
    adapt = intent.adapt
    assert adapt is not None, "only an intent that adapts is fine-tuned"
    model, arch = intent.model, intent.model.architecture
    region = adapt.region or (intent.traffic.regions[0] if intent.traffic else "us-east-1")
    precision = model.precision if model.precision in ("fp32", "bf16", "fp16") else "bf16"
    name = stack_name(intent, "finetune")
    data: dict[str, Any] = {
        "name": name,
        "account": TRAINING_ACCOUNT,
        "region": region,
        "availability_zones": [f"{region}a", f"{region}b"],
        "method": adapt.method,
        "base_model": {
            "name": model.name,
            "weights_prefix": f"{model.name}/v1/",
            "version": "v1",
            "parameters_billion": model.parameters_billion,
            "precision": precision,
            "architecture": {
                "layers": arch.layers,
                "hidden_size": arch.hidden_size,
                "attention_heads": arch.attention_heads,
                "kv_heads": arch.kv_heads,
                "intermediate_size": arch.intermediate_size,
            },
        },
        "lora": {"rank": adapt.lora_rank, "alpha": 2 * adapt.lora_rank},
        "batch": {"sequence_length": adapt.sequence_length},
        "dataset": {"uri": f"s3://{name}-datasets/train/", "version": "v1"},
        "eval_set": {"uri": f"s3://{name}-datasets/eval/", "version": "v1"},
        "run": {"tokens_million_per_epoch": adapt.dataset_tokens_million, "epochs": adapt.epochs},
        "capacity": {"type": "on_demand", "on_demand_fallback": False},
        "image": f"123456789012.dkr.ecr.{region}.amazonaws.com/{name}/trainer@{DIGEST}",
        "adapter_prefix": f"adapters/{name}/",
    }
    return _built(FinetuneSpec, data, ("adapt",))


def training_tokens_billion(intent: IntentSpec) -> float:
    """The pre-training run's tokens, or a full fine-tune's (which is training: every weight, its optimizer)."""
    if intent.train is not None:
        return intent.train.tokens_billion
    assert intent.adapt is not None
    return intent.adapt.dataset_tokens_million * intent.adapt.epochs / 1000


def training_spec(
    intent: IntentSpec, nodes: int, interval_minutes: float, lustre_gib: int, layout: Layout
) -> TrainingSpec:
    """A Slurm (AWS PCS) cluster on EFA with FSx for Lustre at `layout` (plan/advise/train.py picks it: tensor
    parallel inside the node and ZeRO-2 across, as stacks/Pulumi.llm-train.yaml is, where that fits); on demand
    (the advice prices the run without spot's discount)."""
    train = intent.train or Train(tokens_billion=training_tokens_billion(intent))
    model, arch = intent.model, intent.model.architecture
    name = stack_name(intent, "train")
    data: dict[str, Any] = {
        "name": name,
        "account": TRAINING_ACCOUNT,
        "region": train.region,
        "availability_zone": f"{train.region}a",
        "compute": {
            "instance_type": train.instance_type,
            "node_count": nodes,
            "image_id": "ami-0123456789abcdef0",
            "capacity": {"type": "on_demand"},
        },
        "interconnect": {"type": "efa"},
        "lustre": {
            "deployment_type": "PERSISTENT_2",
            "storage_capacity_gib": lustre_gib,
            "throughput_mb_s_per_tib": 250,
            "import_path": f"s3://{name}-datasets/train/",
            "dataset_gib": max(0.1, round(corpus_gib(intent), 1)),
            "export_path": f"s3://{name}-checkpoints/checkpoints/",
        },
        "checkpointing": {"target": "lustre", "interval_minutes": interval_minutes, "keep_last": CHECKPOINTS_KEPT},
        "model": {
            "name": model.name,
            "parameters_billion": model.parameters_billion,
            "precision": "bf16",
            "optimizer": "adamw",
            "architecture": {
                "layers": arch.layers,
                "hidden_size": arch.hidden_size,
                "attention_heads": arch.attention_heads,
                "sequence_length": train.sequence_length,
                "micro_batch_size": 1,
                "recompute": layout.recompute,
                "global_batch_size": max(1, BATCH_TOKENS // train.sequence_length),
            },
            "parallelism": {"tensor": layout.tensor, "pipeline": layout.pipeline, "zero_stage": layout.zero_stage}
            | ({"context": layout.context} if layout.context > 1 else {}),
        },
        "scheduler": {"type": "slurm", "partition": "train", "slurm_version": "25.05"},
        "run": {"tokens_billion": train.tokens_billion}
        | ({"target_days": train.deadline_days} if train.deadline_days else {})
        | ({"mfu": train.mfu} if train.mfu else {}),
    }
    return _built(TrainingSpec, data, ("train",) if intent.train else ("adapt",))


def dataprep_spec(intent: IntentSpec) -> DataprepSpec:
    """The corpus through FineWeb's stages (the spec's defaults: extract, language and quality filters, MinHash
    dedup, PII, tokenize) with datatrove on an AWS PCS CPU cluster of spot workers, in the training region, as
    stacks/Pulumi.corpus-prep.yaml is; WARC input, its file count from the corpus's size (WARC_FILES_PER_TB)."""
    assert intent.corpus is not None
    name = stack_name(intent, "prep")
    region = intent.train.region if intent.train else "us-east-1"
    data: dict[str, Any] = {
        "name": name,
        "account": DATAPREP_ACCOUNT,
        "region": region,
        "availability_zone": f"{region}a",
        "engine": "datatrove-slurm",
        "image_id": "ami-0123456789abcdef0",
        "corpus": {
            "uri": f"s3://{name}-raw/",
            "format": "warc",
            "size_tb": intent.corpus.raw_tb,
            "files": max(1, math.ceil(intent.corpus.raw_tb * WARC_FILES_PER_TB)),
        },
        "output": {"uri": f"s3://{name}-tokens/train/", "readers": [TRAINING_ACCOUNT]},
        "scratch": {"uri": f"s3://{name}-scratch/run/"},
        "deadline_hours": DATAPREP_DEADLINE_HOURS,
    }
    return _built(DataprepSpec, data, ("corpus",))


def corpus_gib(intent: IntentSpec) -> float:
    """The tokenized corpus on Lustre: its token ids as int32."""
    return training_tokens_billion(intent) * 1e9 * INT32_TOKEN_BYTES / GIB


def lustre_gib(intent: IntentSpec, checkpoint_bytes: float) -> int:
    """What the cluster needs on Lustre (plan/pcs.py lustre_need_gib: the corpus, the kept checkpoints and the one
    being written, headroom); FSx rounds it up to a size it takes."""
    return max(1200, math.ceil(lustre_need_gib(corpus_gib(intent), checkpoint_bytes / GIB, CHECKPOINTS_KEPT)))


__all__ = [
    "DATAPREP_ACCOUNT",
    "SERVING_ACCOUNT",
    "TRAINING_ACCOUNT",
    "IntentProblem",
    "advice_org",
    "corpus_gib",
    "dataprep_spec",
    "finetune_spec",
    "lustre_gib",
    "serving_spec",
    "stack_name",
    "training_spec",
    "training_tokens_billion",
]
