"""The fine-tuning spec (``gpuinfra:finetune``): a parameter-efficient adaptation of a registry model, one node.

LoRA (Hu et al. 2021) freezes the base and trains rank-r matrices beside chosen projections; QLoRA (Dettmers
et al. 2023) also stores the frozen base in 4-bit NormalFloat. Both usually fit one node; `full` fine-tuning is
training and belongs in a training stack (the planner says so).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from gpuinfra.spec.base import (
    AccountName,
    FlowLogDestination,
    InstanceTypeName,
    Invalid,
    K8sName,
    LogRetentionDays,
    Name,
    Region,
    RuleId,
    S3Uri,
    SpecModel,
    Tags,
    Zone,
    updates,
    zone_problem,
)
from gpuinfra.spec.target import Target
from gpuinfra.spec.words import KeyPrefix

FinetuneMethod = Literal["lora", "qlora", "full"]
BasePrecision = Literal["fp32", "bf16", "fp16", "fp8"]
"""fp8: an FP8 checkpoint (one byte a weight) trained under LoRA with FP8 matmuls (Ada, Hopper, Blackwell)."""
TargetModule = Literal["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
"""The linear projections of a Llama-style decoder layer, as Hugging Face PEFT's `target_modules` names them."""
DIGEST_IMAGE = r"^[a-z0-9][a-z0-9.:/_-]*@sha256:[0-9a-f]{64}$"
DataVersion = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/@+=-]{0,255}$")]
"""An S3 object version id, a manifest hash (sha256:...), or a DVC/lakeFS reference (lakefs://repo/commit)."""


class BaseArchitecture(SpecModel):
    """The base model's shape (its config.json): adapter sizes and per-layer activations come from it."""

    layers: Annotated[int, Field(ge=1, le=1024)]
    """num_hidden_layers: 80 for Llama-3-70B, 32 for Llama-3-8B."""
    hidden_size: Annotated[int, Field(ge=64, le=262_144)]
    """hidden_size (h): 8192 for Llama-3-70B."""
    attention_heads: Annotated[int, Field(ge=1, le=1024)]
    """num_attention_heads: head_dim = hidden_size / attention_heads."""
    kv_heads: Annotated[int, Field(ge=1, le=1024)]
    """num_key_value_heads: k_proj and v_proj project to kv_heads x head_dim."""
    intermediate_size: Annotated[int, Field(ge=64, le=1_048_576)]
    """intermediate_size of the MLP (gate/up/down projections): 28672 for Llama-3-70B."""
    vocab_size: Annotated[int, Field(ge=1, le=4_194_304)] | None = None
    """vocab_size: the input embedding and output layer (vocab x hidden each), which an FP8 checkpoint keeps in 16
    bit. Default: unknown, every weight counted at the base's precision."""

    @model_validator(mode="after")
    def _heads(self) -> BaseArchitecture:
        if self.hidden_size % self.attention_heads:
            raise Invalid(
                "attention_heads must divide hidden_size (head_dim = hidden_size / attention_heads)",
                ("attention_heads",),
                f"write `attention_heads: {nearest_divisor(self.hidden_size, self.attention_heads)}` (the nearest "
                "divisor; the base's config.json num_attention_heads)",
            )
        if self.attention_heads % self.kv_heads:
            raise Invalid(
                "kv_heads must divide attention_heads (grouped-query attention)",
                ("kv_heads",),
                f"write `kv_heads: {nearest_divisor(self.attention_heads, self.kv_heads)}` (the nearest divisor; the "
                "base's config.json num_key_value_heads)",
            )
        return self


def nearest_divisor(whole: int, near: int) -> int:
    """The divisor of `whole` closest to `near` (the smaller on a tie): a head count to write."""
    divisors = [d for d in range(1, whole + 1) if whole % d == 0]
    return min(divisors, key=lambda d: (abs(d - near), d))


class BaseModelRef(SpecModel):
    """The frozen base: a registry entry at a version, and what its memory depends on."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    """A name for the base, e.g. llama-3.1-70b."""
    weights_prefix: KeyPrefix
    """Path of the base weights under the registry's model prefix, e.g. llama-3.1-70b/v3/."""
    version: DataVersion
    """The base's version as the registry records it (recorded in every adapter's manifest)."""
    parameters_billion: Annotated[float, Field(gt=0, le=100_000)]
    """Parameters of the base, in billions: the frozen weights' memory and the run's FLOPs."""
    active_parameters_billion: Annotated[float, Field(gt=0, le=100_000)] | None = None
    """Mixture of experts: parameters each token passes through, the run's FLOPs; the frozen weights in memory stay
    all of them. Default: all parameters (dense)."""
    precision: BasePrecision = "bf16"
    """Precision the base is held in for LoRA and computed in for QLoRA (whose stored weights are 4-bit)."""
    architecture: BaseArchitecture

    @model_validator(mode="after")
    def _active_within_total(self) -> BaseModelRef:
        if self.active_parameters_billion is not None and self.active_parameters_billion > self.parameters_billion:
            raise Invalid(
                "active_parameters_billion cannot exceed parameters_billion",
                ("active_parameters_billion",),
                f"write `active_parameters_billion: {self.parameters_billion:g}` (at most) under base_model",
            )
        return self


class Lora(SpecModel):
    """The adapter: its rank and which projections it sits beside (Hu et al. 2021, section 4)."""

    rank: Annotated[int, Field(ge=1, le=1024)] = 16
    """r: each adapted d_in x d_out projection gains r x (d_in + d_out) trainable parameters."""
    alpha: Annotated[float, Field(gt=0)] = 32
    """LoRA's scaling numerator (the update is scaled by alpha / r); no effect on memory."""
    target_modules: Annotated[list[TargetModule], Field(min_length=1)] = [
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "gate_proj",
        "up_proj",
        "down_proj",
    ]
    """Projections that get an adapter; QLoRA adapts all linear layers to match full fine-tuning (section 4)."""

    @model_validator(mode="after")
    def _unique(self) -> Lora:
        if len(set(self.target_modules)) != len(self.target_modules):
            once = list(dict.fromkeys(self.target_modules))
            raise Invalid(
                "target_modules lists a projection twice",
                ("target_modules",),
                f"write `target_modules: [{', '.join(once)}]`",
            )
        return self


class Batch(SpecModel):
    """What the activations depend on."""

    sequence_length: Annotated[int, Field(ge=128, le=2_097_152)] = 2048
    """Tokens per training sequence (s): activations grow with it."""
    micro_batch_size: Annotated[int, Field(ge=1, le=1024)] = 1
    """Sequences per GPU per forward/backward pass."""
    gradient_checkpointing: bool = True
    """Keep only each layer's input and recompute the rest in the backward pass (one more forward)."""


class VersionedData(SpecModel):
    """An S3 location with the version that pins what a run read."""

    uri: S3Uri
    """The data's S3 prefix, s3://bucket/prefix/."""
    version: DataVersion
    """The version that pins what a run read: an object version id, a manifest hash or a DVC/lakeFS reference."""


class FinetuneRun(SpecModel):
    """One run: how many tokens, and the utilisation it is planned at."""

    tokens_million_per_epoch: Annotated[float, Field(gt=0, le=10_000_000)]
    """Tokens of the dataset seen in one epoch (after packing), in millions."""
    epochs: Annotated[float, Field(gt=0, le=1000)] = 1
    """Passes over the dataset: tokens of the run = tokens per epoch x epochs."""
    mfu: Annotated[float, Field(gt=0, le=1)] | None = None
    """Model FLOPs utilisation; default: the planner's calibrated value for the precision (plan/flops.py)."""


class FinetuneCapacity(SpecModel):
    """How the job's instance is bought."""

    type: Literal["on_demand", "spot"] = Field("spot", json_schema_extra=updates("replace"))
    """spot: the job checkpoints to S3 and AWS Batch retries it on a reclaim; on_demand: no interruptions."""
    on_demand_fallback: bool = True
    """With spot: the job queue falls back to an on-demand compute environment when spot has no capacity."""


class FinetuneKueue(SpecModel):
    """Run on the existing training cluster instead of AWS Batch: a Kueue LocalQueue and a Job template."""

    kubeconfig_key: Annotated[str, StringConstraints(pattern=r"^[a-z][a-zA-Z0-9:_-]*$")]
    """Config key holding the kubeconfig of a cluster the organization file registers with purpose training."""
    namespace: K8sName = "training"
    """The namespace the LocalQueue and the job template live in (it must exist)."""
    cluster_queue: K8sName
    """The training cluster's Kueue ClusterQueue the LocalQueue submits to (the training stack's, e.g. train)."""
    queue: K8sName = "finetune"
    """Name of the LocalQueue this stack creates."""
    gpu_resource: Annotated[str, StringConstraints(pattern=r"^[a-z0-9.-]+/[a-z0-9.-]+$")] | None = None
    """The extended resource the job's pod requests its accelerators as (the device plugin's); unset, the
    catalog's for the planned instance type (`nvidia.com/gpu`, `aws.amazon.com/neuron`)."""
    checkpoint_uri: S3Uri
    """Where the job checkpoints (s3://bucket/prefix/): this variant creates no AWS resources."""


class FinetuneSpec(SpecModel):
    """A fine-tuning workload: LoRA/QLoRA runs on an AWS Batch queue in a training account."""

    @property
    def target(self) -> Target:
        return Target("aws", self.account, (self.region,))

    name: Name
    account: AccountName
    """Account (purpose: training) from the organization file: fine-tuning shares training's separation."""
    region: Region = Field(json_schema_extra=updates("replace"))
    availability_zones: Annotated[list[Zone], Field(min_length=1, max_length=6)] = Field(
        json_schema_extra=updates("replace")
    )
    """Zones of the private subnets the compute environment launches into (no EFA: one node needs no fabric)."""
    base_model: BaseModelRef
    method: FinetuneMethod = "qlora"
    """lora (frozen base at its precision), qlora (frozen base in 4-bit NF4) or full (refused: a training stack)."""
    lora: Lora = Lora()
    batch: Batch = Batch()
    dataset: VersionedData
    eval_set: VersionedData
    run: FinetuneRun
    instance_type: InstanceTypeName | Literal["auto"] = "auto"
    """auto: the cheapest catalog instance per run that fits; or a type (it must fit)."""
    capacity: FinetuneCapacity = FinetuneCapacity()
    image: Annotated[str, StringConstraints(max_length=255, pattern=DIGEST_IMAGE)]
    """The trainer image, pinned by digest (repo@sha256:...): the digest goes into every adapter's manifest."""
    adapter_prefix: KeyPrefix
    """Where runs write adapters, under the registry's upload prefix, e.g. adapters/support-bot/."""
    checkpoint_minutes: Annotated[float, Field(gt=0, le=1440)] = 30
    """Minutes between adapter checkpoints to S3; a spot reclaim loses at most this much."""
    reserve_fraction: Annotated[float, Field(ge=0, lt=1)] = 0.10
    """GPU memory kept for the CUDA context and allocator fragmentation (as training's parallelism.reserve_fraction)."""
    kueue: FinetuneKueue | None = None
    """Run on the existing training cluster's Kueue instead of an AWS Batch queue."""
    root_volume_gib: Annotated[int, Field(ge=64, le=16384)] = 512
    """Root EBS volume of each instance, GiB: the image, the base's weights (bf16 before QLoRA quantizes them)."""
    max_vcpus: Annotated[int, Field(ge=1, le=100_000)] | None = None
    """Ceiling of the compute environment; default: one instance of the chosen type (one run at a time)."""
    tags: Tags = {}
    log_retention_days: LogRetentionDays = 365
    """Days the stack keeps its VPC flow logs (see `flow_logs`)."""
    flow_logs: FlowLogDestination = "s3"
    """Where the VPC flow logs go: a bucket of the stack's own whose objects expire after `log_retention_days`
    (the default: vended-log delivery to S3 costs half of CloudWatch Logs ingestion), or `cloud-watch-logs`, a
    log group with that retention, to query with Logs Insights."""
    suppress: list[RuleId] = []
    """Rule ids of warnings to silence for this stack."""
    protect_data: bool = True
    """Pulumi `protect` and `retainOnDelete` on the checkpoint bucket and its KMS key. Set false only for scratch
    stacks."""

    @model_validator(mode="after")
    def _zones(self) -> FinetuneSpec:
        for i, zone in enumerate(self.availability_zones):
            wrong = zone_problem(zone, self.region)
            if wrong:
                raise Invalid(wrong, ("availability_zones", i), f"use a zone of {self.region}, e.g. {self.region}a")
        if len(set(self.availability_zones)) != len(self.availability_zones):
            once = list(dict.fromkeys(self.availability_zones))
            raise Invalid(
                "availability_zones lists a zone twice",
                ("availability_zones",),
                f"write `availability_zones: [{', '.join(once)}]`",
            )
        return self

    @model_validator(mode="after")
    def _qlora_computes_in_16_bit(self) -> FinetuneSpec:
        if self.method == "qlora" and self.base_model.precision == "fp8":
            raise Invalid(
                "QLoRA stores the base in 4-bit NF4 and dequantizes it to 16 bit for its matmuls: fp8 is not its "
                "compute precision",
                ("base_model", "precision"),
                "use method: lora for an FP8 checkpoint, or precision: bf16 with qlora",
            )
        return self


__all__ = [
    "BaseArchitecture",
    "BaseModelRef",
    "Batch",
    "FinetuneCapacity",
    "FinetuneKueue",
    "FinetuneMethod",
    "FinetuneRun",
    "FinetuneSpec",
    "Lora",
    "TargetModule",
    "VersionedData",
]
