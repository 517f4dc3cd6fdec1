"""The training cluster spec (``gpuinfra:training``): throughput-bound, tightly coupled, checkpointed."""

from __future__ import annotations

import datetime
import ipaddress
import re
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, ValidationInfo, field_validator, model_validator

from gpuinfra.spec.base import (
    NODE_NAME_PATTERN,
    AccountName,
    FlowLogDestination,
    InstanceTypeName,
    Invalid,
    K8sName,
    LogRetentionDays,
    Name,
    NodeName,
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
from gpuinfra.spec.words import SlurmValue

DEFAULT_EKS_NODE_IMAGE = (
    "resolve:ssm:/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"
)
"""What EKS training nodes boot when `compute.image_id` is unset: the AWS Deep Learning AMI (NVIDIA driver, EFA)."""

TrainingPrecision = Literal["fp32", "bf16", "fp16", "fp8"]
Optimizer = Literal["adam", "adamw", "sgd_momentum", "adafactor"]


class Capacity(SpecModel):
    """How the gang's nodes are bought: on-demand, spot above an on-demand base, an On-Demand Capacity Reservation,
    or a Capacity Block."""

    type: Literal["on_demand", "spot", "capacity_reservation", "capacity_block"] = Field(
        "on_demand", json_schema_extra=updates("replace")
    )
    """How the nodes are bought: on_demand, spot (only with checkpointing), capacity_reservation (an On-Demand
    Capacity Reservation, ODCR: on-demand nodes launched into capacity held for you, billed at the on-demand rate
    whether used or not) or capacity_block (an EC2 Capacity Block for ML, bought for fixed days). Changing it
    replaces the node groups."""
    on_demand_base: Annotated[int, Field(ge=0)] = 0
    """With type spot: this many nodes are always on-demand; the rest are spot."""
    capacity_reservation_id: Annotated[str, StringConstraints(pattern=r"^cr-[0-9a-f]{8,17}$")] | None = None
    """With type capacity_reservation or capacity_block: the reservation (cr-...) the nodes launch into. A targeted
    ODCR of the instance type in the stack's zone, for at least node_count instances (EC2 User Guide, "Launch
    instances into an existing Capacity Reservation"); created in the stack's placement group, it holds the nodes
    close as well (EC2 User Guide, placement group rules)."""
    block_end: Annotated[datetime.datetime, Field(strict=False)] | None = None
    """With type capacity_block: when the block ends (UTC, ISO 8601, e.g. 2027-01-14T11:30:00Z). EC2 starts
    terminating the block's instances 30 minutes before; the nodes checkpoint and drain ahead of that."""

    @model_validator(mode="after")
    def _block_needs_reservation(self) -> Capacity:
        reserved = self.type in ("capacity_reservation", "capacity_block")
        if reserved and self.capacity_reservation_id is None:
            raise Invalid(
                f"{self.type} needs capacity_reservation_id (the cr-... of the reservation)",
                ("capacity_reservation_id",),
                "write `capacity_reservation_id: cr-<id>` under compute.capacity (the reservation's, or the purchased "
                "block's: `aws ec2 describe-capacity-block-offerings` sells one)",
            )
        if self.type == "capacity_block" and self.block_end is None:
            raise Invalid(
                "capacity_block needs block_end (when the purchased block ends, UTC)",
                ("block_end",),
                "write `block_end: 2027-01-14T11:30:00Z` (the block's end, UTC) under compute.capacity",
            )
        if not reserved and self.capacity_reservation_id is not None:
            raise Invalid(
                "capacity_reservation_id only applies to type capacity_reservation or capacity_block",
                ("type",),
                "write `type: capacity_reservation` (an ODCR) or `type: capacity_block` under compute.capacity, or "
                "remove `capacity_reservation_id`",
            )
        if self.type != "capacity_block" and self.block_end is not None:
            raise Invalid(
                "block_end only applies to type capacity_block",
                ("block_end",),
                "remove `block_end`, or write `type: capacity_block` under compute.capacity",
            )
        if self.type != "spot" and self.on_demand_base:
            raise Invalid(
                "on_demand_base only applies to type spot (every node is on-demand otherwise)",
                ("on_demand_base",),
                "remove `compute.capacity.on_demand_base`, or write `type: spot` under compute.capacity",
            )
        return self


class Elastic(SpecModel):
    """Spot nodes beside the gang, for the jobs that are not the gang (evaluations, data preparation, debugging):
    their own Slurm partition, scaled from none up to max_nodes as jobs queue and back after 10 idle minutes. A
    reclaim there stops one small job, never the gang's."""

    partition: SlurmValue = "elastic"
    """The Slurm partition (an AWS PCS queue) of the elastic nodes; not the gang's (scheduler.partition)."""
    max_nodes: Annotated[int, Field(ge=1, le=1024)]
    """The most spot nodes the partition runs at once (each of compute.instance_type)."""


class Compute(SpecModel):
    """The accelerator nodes."""

    instance_type: InstanceTypeName = Field(json_schema_extra=updates("drain"))
    node_count: Annotated[int, Field(ge=1, le=4096)]
    """Nodes in the cluster at full size."""
    capacity: Capacity = Capacity()
    image_id: str | None = None
    """The node image: an AMI id (ami-...), or an SSM parameter at an explicit version,
    `resolve:ssm:<name>:<version>`. Required for Slurm (AWS PCS) nodes, which need an AMI with the PCS agent and
    Slurm installed (AWS's PCS sample AMIs, or one built from them; a `latest` image is refused). On EKS, when
    unset, the nodes boot the Deep Learning AMI's `latest` parameter (a warning: pin one)."""
    root_volume_gib: Annotated[int, Field(ge=64, le=16384)] = 512
    """Root EBS volume per node, GiB."""
    elastic: Elastic | None = None
    """Spot nodes in a partition of their own, beside the gang (Slurm on AWS PCS): where spot belongs when the gang
    runs on reserved or on-demand capacity."""


class Interconnect(SpecModel):
    """The GPU-to-GPU fabric between nodes."""

    type: Literal["efa", "infiniband", "none"] = Field(json_schema_extra=updates("drain"))
    """efa on AWS; infiniband for on-premises racks."""
    hcas: list[Annotated[str, StringConstraints(pattern=r"^[a-z0-9_]+(:[0-9]+)?$")]] = []
    """The compute rails' InfiniBand HCAs NCCL may use (NCCL_IB_HCA, matched exactly), e.g. mlx5_0; not the
    storage or in-band ports. Empty lets NCCL choose."""
    netdevs: list[Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,15}$")]] = []
    """The compute rails' network interfaces (`ibdev2netdev`), e.g. ibp24s0: the only ones the RDMA device
    plugin hands to training pods (its ifNames selector)."""
    gpudirect_rdma: bool = True
    """Let the HCAs read and write GPU memory directly (GPUDirect RDMA)."""


class PinnedPackage(SpecModel):
    """A package a node downloads at boot and runs as root, pinned by content."""

    url: Annotated[str, StringConstraints(pattern=r"^https://[^\s'\"`$]+$")]
    """Where the nodes fetch it (HTTPS)."""
    sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
    """The SHA-256 of its content (`sha256sum <file>`): a download that differs is not run."""


class Lustre(SpecModel):
    """FSx for Lustre, linked to S3 for the dataset and the checkpoints."""

    deployment_type: Literal["SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2"] = Field(json_schema_extra=updates("replace"))
    """FSx for Lustre deployment type; changing it replaces the file system (and its data)."""
    storage_capacity_gib: Annotated[int, Field(ge=1200, le=2_000_000)]
    """Requested capacity; rounded up to the next valid FSx increment."""
    throughput_mb_s_per_tib: Literal[50, 100, 125, 200, 250, 500, 1000] | None = None
    """Per-unit throughput tier (PERSISTENT only; SCRATCH_2 has a fixed 200 MB/s/TiB baseline)."""
    import_path: S3Uri
    """Dataset location, imported lazily into the file system."""
    export_path: S3Uri
    """Checkpoint location; the stack creates this bucket and exports checkpoints to it."""
    mount_path: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9/_-]*$")] = "/fsx"
    """Where the nodes mount Lustre."""
    dataset_gib: Annotated[float, Field(gt=0)] | None = None
    """How much of the dataset lives on Lustre at once (imported lazily from import_path); sizes the file
    system with the checkpoints it keeps (lustre-too-small)."""
    code_path: S3Uri | None = None
    """S3 prefix of the training code, linked at <mount_path>/code: objects put there appear on Lustre (and deleted
    ones disappear) without a copy step, so job.script can live under code/."""
    efa: bool | None = Field(None, json_schema_extra=updates("replace"))
    """Serve the file system over EFA (and GPUDirect Storage) as well as TCP. Default (unset): on for a
    PERSISTENT_2 file system of more than 10 GB/s mounted by Slurm nodes of a family the FSx guide names as an EFA
    client (p5, p5e, p5en, p6-b200, p6e-gb200), off otherwise. Why: a TCP client reads through one ENA interface,
    an EFA client through 8 of its EFA interfaces (FSx for Lustre User Guide, "Configuring EFA clients"), and the
    guide recommends EFA above 10 GBps of file-system throughput; below it EFA's coarser capacity steps cost more
    than the clients gain. EFA can only be chosen at creation (changing it replaces
    the file system), fixes the throughput tier, needs a metadata configuration (AUTOMATIC is set) and makes the
    capacity a whole number of the tier's EFA steps (FSx for Lustre User Guide, "Working with EFA-enabled file
    systems")."""

    efa_client_package: PinnedPackage | None = None
    """With efa: the FSx for Lustre User Guide's configure-efa-fsx-lustre-client package the nodes run at their first
    boot, pinned by URL and SHA-256 (a copy in your own bucket, or AWS's at a digest you checked). Default (unset): the
    catalog's pin (catalog/data/downloads.yaml, with the date its digest was taken). A node whose download does not
    match runs nothing and mounts over TCP."""

    preload: bool | None = None
    """Restore the whole dataset (everything under import_path) into Lustre before the first job, from the login node
    (`lfs hsm_restore`; FSx for Lustre User Guide, "Preloading files into your file system"): the data repository
    association imports only metadata, so without it the first epoch reads each file from S3 on first access.
    Default (unset): on when dataset_gib is set, the size lustre-too-small checks the file system holds; set false
    when import_path holds more than fits (FSx loads only as much as the file system has room for)."""

    @model_validator(mode="after")
    def _efa_needs_persistent_2(self) -> Lustre:
        if self.efa and self.deployment_type != "PERSISTENT_2":
            raise Invalid(
                f"efa needs deployment_type PERSISTENT_2 (FSx serves EFA only there), not {self.deployment_type}",
                ("efa",),
                "write `deployment_type: PERSISTENT_2` under lustre, or `efa: false`",
            )
        return self

    @model_validator(mode="after")
    def _tier_fits_type(self) -> Lustre:
        tiers = {"PERSISTENT_1": (50, 100, 200), "PERSISTENT_2": (125, 250, 500, 1000)}
        if self.deployment_type == "SCRATCH_2":
            if self.throughput_mb_s_per_tib is not None:
                raise Invalid(
                    "SCRATCH_2 has a fixed throughput",
                    ("throughput_mb_s_per_tib",),
                    "remove `lustre.throughput_mb_s_per_tib`",
                )
        elif self.throughput_mb_s_per_tib not in tiers[self.deployment_type]:
            allowed = tiers[self.deployment_type]
            given = self.throughput_mb_s_per_tib or 0
            near = min(allowed, key=lambda t: (abs(t - given), t))
            raise Invalid(
                f"{self.deployment_type} needs throughput_mb_s_per_tib in {{{', '.join(map(str, allowed))}}}",
                ("throughput_mb_s_per_tib",),
                f"write `throughput_mb_s_per_tib: {near}` under lustre (the nearest tier)",
            )
        return self


class SiteLustre(SpecModel):
    """An existing on-premises Lustre file system, mounted as a static volume."""

    mgs_nids: Annotated[str, StringConstraints(min_length=3)]
    """Management server NIDs, e.g. 10.10.0.1@o2ib."""
    fs_name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,8}$")]
    """The site Lustre file system's name (its fsname, up to 8 characters)."""
    capacity_tib: Annotated[float, Field(gt=0)]
    """The site Lustre file system's capacity, TiB."""
    write_bandwidth_gb_s: Annotated[float, Field(gt=0)]
    """Aggregate write bandwidth the checkpoint interval is computed from."""
    mount_path: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9/_-]*$")] = "/lustre"
    """Where the GPU nodes mount the site's Lustre."""


class Checkpointing(SpecModel):
    """Where and how often training state is saved."""

    target: Literal["lustre", "s3"] = "lustre"
    """Write to Lustre (exported to S3) or straight to the checkpoint bucket."""
    interval_minutes: Annotated[float, Field(gt=0, le=1440)]
    """Minutes between checkpoints; the plan compares it with the Young/Daly optimum."""
    retention_days: Annotated[int, Field(ge=1, le=3650)] = 14
    """Days a superseded checkpoint stays in the bucket after the pruner marks it; never applied by age alone,
    so a paused run's last good checkpoint is never deleted."""
    keep_last: Annotated[int, Field(ge=1, le=1000)] = 3
    """Checkpoints of each run kept on Lustre and in the bucket: the newest N (plus milestones)."""
    milestone_marker: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._-]{1,64}$")] = "MILESTONE"
    """A checkpoint directory holding a file of this name is a milestone: never pruned, never expired."""
    size_gib: Annotated[float, Field(gt=0)] | None = None
    """Size of one checkpoint; default: full training state (weights and optimizer)."""
    write_bandwidth_gb_s: Annotated[float, Field(gt=0)] | None = None
    """Aggregate write bandwidth; default: the Lustre file system's throughput."""


class Architecture(SpecModel):
    """The transformer's shape and the batch, for per-GPU activation memory (Korthikanti et al. 2022)."""

    layers: Annotated[int, Field(ge=1, le=1024)]
    """Transformer layers (L): 80 for Llama-3-70B."""
    hidden_size: Annotated[int, Field(ge=64, le=262_144)]
    """Model width (h): 8192 for Llama-3-70B."""
    attention_heads: Annotated[int, Field(ge=1, le=1024)]
    """Attention heads (a); tensor parallelism must divide them."""
    sequence_length: Annotated[int, Field(ge=128, le=2_097_152)] = 4096
    """Tokens per training sequence (s)."""
    micro_batch_size: Annotated[int, Field(ge=1, le=1024)] = 1
    """Sequences per GPU per forward/backward pass (b)."""
    recompute: Literal["none", "selective", "full"] = "selective"
    """Activation recomputation: selective (attention only, as FlashAttention does) drops the s^2 term; full keeps
    only each layer's input."""
    global_batch_size: Annotated[int, Field(ge=1, le=1_048_576)] | None = None
    """Sequences per optimizer step, fixed whatever the node count (the run plan's other counts keep it, so the
    pipeline bubble and the exposed data-parallel time grow as GPUs are added); default: one micro-batch per
    data-parallel rank at the spec's node count."""
    vocab_size: Annotated[int, Field(ge=1, le=4_194_304)] | None = None
    """Vocabulary size: the input embedding (vocab x hidden parameters) sits on the first pipeline stage besides its
    layers; default: the embedding is spread with the layers."""
    experts: Annotated[int, Field(ge=1, le=4096)] = 1
    """Mixture of experts: routed experts per MoE layer (1: dense)."""
    experts_per_token: Annotated[int, Field(ge=1, le=64)] = 1
    """Mixture of experts: experts each token is routed to (top-k)."""
    moe_layers: Annotated[int, Field(ge=0, le=1024)] | None = None
    """Mixture of experts: layers with routed experts; default: every layer when experts > 1, else none."""


class Parallelism(SpecModel):
    """How the model is split: tensor parallel inside the NVLink domain, pipeline and data parallel across nodes."""

    tensor: Annotated[int, Field(ge=1, le=72)] | None = None
    """Tensor-parallel degree; default: the GPUs of one node (the NVLink domain)."""
    pipeline: Annotated[int, Field(ge=1, le=1024)] = 1
    """Pipeline stages across nodes; must divide the layers."""
    zero_stage: Literal[0, 1, 2, 3] = 3
    """ZeRO stage over the data-parallel group: 1 shards optimizer states, 2 also gradients, 3 also weights (FSDP)."""
    sequence_parallel: bool = True
    """Shard the layer-norm and dropout activations over the tensor-parallel group (Megatron-LM --sequence-parallel)."""
    context: Annotated[int, Field(ge=1, le=1024)] = 1
    """Context-parallel degree: split each sequence's activations over this many GPUs (Megatron-LM
    --context-parallel-size); for long sequences (Llama 3 405B used 16 at 128K tokens)."""
    grad_accumulation: Literal["fp32", "low"] = "fp32"
    """Gradient accumulation and reduction dtype: fp32 (Megatron-LM's default for bf16, 4 bytes a parameter) or the
    training precision's own bytes (`low`: 2 for bf16)."""
    expert: Annotated[int, Field(ge=1, le=4096)] = 1
    """Expert-parallel degree (mixture of experts): GPUs the experts are spread over (Megatron-LM
    --expert-model-parallel-size); tokens reach them by all-to-all."""
    reserve_fraction: Annotated[float, Field(ge=0, lt=1)] = 0.10
    """GPU memory kept for the CUDA context, NCCL buffers and allocator fragmentation (an assumption: no
    published figure holds for every stack; measure with torch.cuda.max_memory_reserved and set it)."""


class TrainedModel(SpecModel):
    """The model being trained, to check it fits in GPU memory."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    """A name for the model, e.g. llama-70b-pretrain."""
    parameters_billion: Annotated[float, Field(gt=0, le=100_000)]
    """Parameters, in billions (all experts for a mixture of experts)."""
    precision: TrainingPrecision = "bf16"
    """Training precision: the accelerator's dense peak and the default MFU."""
    optimizer: Optimizer = "adamw"
    """Optimizer: the bytes of optimizer state per parameter (adam/adamw in mixed precision: 16 bytes in all)."""
    activation_headroom_fraction: Annotated[float, Field(ge=0, lt=1)] = 0.25
    """Share of GPU memory kept free for activations and buffers; used only without `architecture` (with it,
    activations are computed per layer)."""
    active_parameters_billion: Annotated[float, Field(gt=0, le=100_000)] | None = None
    """Mixture of experts: parameters active per token (compute is 6 x active x tokens); default: all of them."""
    architecture: Architecture | None = None
    parallelism: Parallelism = Parallelism()

    @model_validator(mode="after")
    def _active_within_total(self) -> TrainedModel:
        if self.active_parameters_billion is not None and self.active_parameters_billion > self.parameters_billion:
            raise ValueError("active_parameters_billion cannot exceed parameters_billion")
        return self


class TrainingRun(SpecModel):
    """One training run the cluster is for: how many tokens, by when, and the efficiency assumptions."""

    tokens_billion: Annotated[float, Field(gt=0, le=1_000_000)]
    """Tokens to train on (e.g. 15,600 for Llama 3 405B)."""
    target_days: Annotated[float, Field(gt=0, le=3650)] | None = None
    """Wall-clock days the run must finish in; the planner names the node count that meets it."""
    mfu: Annotated[float, Field(gt=0, le=1)] | None = None
    """Model FLOPs utilization within one node (NVLink domain); default per precision, see plan/runtime.py."""
    scaling_per_doubling: Annotated[float, Field(gt=0, le=1)] | None = None
    """Share of per-GPU throughput kept each time the node count doubles; default per fabric (plan/runtime.py)."""
    restart_minutes: Annotated[float, Field(ge=0, le=10_080)] | None = None
    """Measured time lost per interruption besides rework (detect, replace the node, start, load the checkpoint,
    warm up); default: derived from the cluster's size and the checkpoint's read bandwidth (plan/restart.py)."""


class Racks(SpecModel):
    """Physical racks: their power budget and cooling."""

    power_budget_kw: Annotated[float, Field(gt=0, le=500)]
    """Power a rack may draw, kW: the plan fits nodes under it."""
    cooling: Literal["air", "direct_liquid", "immersion"]
    """How the racks are cooled (air, direct_liquid or immersion): caps the power per rack."""
    pue: Annotated[float, Field(ge=1.0, le=3.0)] = 1.3
    """Power usage effectiveness of the facility (total facility power / IT power)."""
    max_nodes_per_rack: Annotated[int, Field(ge=1, le=64)] | None = None
    """At most this many nodes per rack (space or ports), whatever the power budget allows."""


class TrainingJob(SpecModel):
    """The training job the Kubernetes job template runs (scheduler kubernetes)."""

    image: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.:/_-]*(:[A-Za-z0-9_.-]+|@sha256:[0-9a-f]{64})$")]
    """The trainer image, pinned by tag or digest. On AWS it must carry libfabric and aws-ofi-nccl (an
    EFA-ready image, e.g. an AWS Deep Learning Container or one built on the EFA installer)."""
    script: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$")]
    """The training script, relative to the shared file system's mount (code must be where every node sees it)."""
    args: list[Annotated[str, StringConstraints(max_length=1024)]] = []
    """Arguments after the script."""
    run_days: Annotated[float, Field(gt=0, le=365)] = 30
    """Expected wall-clock length of the run: sizes the JobSet's restart budget from the expected interruptions."""
    spot: bool = False
    """The job may run on spot nodes (it checkpoints and resumes): it gets the spot flavor and queue."""


class ApiAccess(SpecModel):
    """Who reaches the EKS API server: always the VPC; from outside only the listed CIDRs."""

    public_cidrs: list[Annotated[str, StringConstraints(min_length=9, max_length=43)]] = []
    """Empty: the endpoint is private (deploy from inside the VPC). Never 0.0.0.0/0."""

    @model_validator(mode="after")
    def _cidrs(self) -> ApiAccess:
        for cidr in self.public_cidrs:
            try:
                net = ipaddress.ip_network(cidr, strict=True)
            except ValueError as e:
                raise ValueError(f"public_cidrs: {cidr} is not a CIDR block ({e})") from None
            if net.prefixlen == 0:
                raise ValueError(f"public_cidrs: {cidr} opens the cluster API to the whole internet")
        return self


SSH_PUBLIC_KEY = r"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)) [A-Za-z0-9+/]+={0,2}( [^\x00-\x1f'\"`$\\]*)?$"
"""One authorized_keys line: key type, base64 key, an optional comment without quotes, `$` or control characters."""


class ClusterUser(SpecModel):
    """A user of a Slurm cluster on AWS, created on every node with one UID (Slurm needs a uniform UID and GID space
    across the cluster: SchedMD/slurm doc/html/quickstart_admin.shtml), the job group as primary group, and a home
    directory on the shared /home."""

    name: Annotated[str, StringConstraints(pattern=r"^[a-z_][a-z0-9_-]{0,31}$")]
    """The login name (useradd(8): lower case, at most 32 characters)."""
    uid: Annotated[int, Field(ge=1000, le=58999)]
    """The same on every node, and in the files Lustre and EFS store. From your directory or HR system; in
    login.defs(5)'s user range (UID_MIN 1000), below the ids the cluster's own groups use (59000)."""
    ssh_public_key: Annotated[str, StringConstraints(pattern=SSH_PUBLIC_KEY)] | None = None
    """An OpenSSH public key (one line of authorized_keys) put in the user's ~/.ssh/authorized_keys."""


class Scheduler(SpecModel):
    """What places jobs on nodes."""

    type: Literal["slurm", "kubernetes"] = Field(json_schema_extra=updates("replace"))
    """slurm (an AWS PCS cluster on AWS) or kubernetes (EKS on AWS; an existing cluster on premises). Changing it
    replaces the cluster."""
    partition: SlurmValue = "train"
    """Slurm partition, or the team's Kueue LocalQueue name."""
    namespace: K8sName = "training"
    """Kubernetes namespace of the team's queue and job template (scheduler kubernetes)."""
    slurm_version: Literal["24.11", "25.05"] = Field("25.05", json_schema_extra=updates("in_place"))
    """Slurm version of the AWS PCS cluster (PCS upgrades the controller in place; node images must match)."""
    login_instance_type: InstanceTypeName = "m7i.2xlarge"
    """The on-demand login node users submit jobs from (scheduler slurm on AWS)."""
    kubernetes_version: Annotated[str, StringConstraints(pattern=r"^1\.[0-9]{2}$")] = "1.35"
    """EKS version (scheduler kubernetes on AWS); the default is in standard support until 2027-03-27 (catalog
    eks.yaml: validate warns when standard support ends before the job's run_days are over)."""
    api_access: ApiAccess = ApiAccess()
    """EKS API endpoint exposure (scheduler kubernetes on AWS)."""
    users: list[ClusterUser] = Field(default_factory=list, max_length=16)
    """The cluster's users (scheduler slurm on AWS), each with one UID on every node and a home on the shared /home;
    at most 16: they and their keys travel in the nodes' user data, which EC2 caps at 16 KB (about 90 bytes a user
    with a key on the login node; preflight refuses a launch template past the cap). Empty, or for more: create
    them yourself with the same UID on every node and the group gpuinfra-train (a directory service through SSSD, or
    the AMI)."""

    @model_validator(mode="after")
    def _users_unique(self) -> Scheduler:
        for what in ("name", "uid"):
            values = [getattr(u, what) for u in self.users]
            twice = sorted({v for v in values if values.count(v) > 1}, key=str)
            if twice:
                raise ValueError(f"users: {what} {', '.join(map(str, twice))} given more than once")
        return self


LocationName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")]
"""A rack, cooling-loop or power-domain name as the site's inventory spells it (a Kubernetes label value)."""


class NodeLocation(SpecModel):
    """Where one system is, as the site's inventory (DCIM, e.g. a NetBox export) records it."""

    node: Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")]
    """The Kubernetes node name."""
    rack: LocationName
    """The rack the node is in (from the site's inventory)."""
    cooling_loop: LocationName
    """The cooling loop that serves the node's rack."""
    power_domain: LocationName
    """The PDU or power feed the system draws from."""


class OnPremNodes(SpecModel):
    """The existing Kubernetes cluster and nodes of an on-premises site."""

    kubeconfig_key: Annotated[str, StringConstraints(pattern=r"^[a-z][a-zA-Z0-9:_-]*$")]
    """Pulumi config key holding the cluster's kubeconfig (a secret)."""
    node_names: Annotated[list[NodeName], Field(max_length=4096)] = []
    """Kubernetes node names, in rack order; or give node_name_pattern."""
    node_name_pattern: (
        Annotated[str, StringConstraints(max_length=200, pattern=r"^[a-z0-9.-]*\{index(:0?[1-9]?d)?\}[a-z0-9.-]*$")]
        | None
    ) = Field(
        None,
        description="Node names from an index: lower-case letters, digits, dashes and dots around one {index} or "
        "{index:0Nd} (N at most 9), e.g. dgx-{index:03d} -> dgx-000, dgx-001, ...",
    )
    racks_per_cooling_loop: Annotated[int, Field(ge=1)] = 2
    """Racks that share a cooling loop in the plan's own rack layout (loop = rack index // this)."""
    racks_per_power_domain: Annotated[int, Field(ge=1)] = 1
    """Racks that share a power domain in the plan's own rack layout (domain = rack index // this)."""
    inventory: list[NodeLocation] = []
    """Every node's rack, cooling loop and power domain from the site's inventory: the labels Kubernetes
    places by. Node names and the planner's rack order are a power plan, not where the systems are."""

    @model_validator(mode="after")
    def _names(self) -> OnPremNodes:
        given = [bool(self.node_names), bool(self.node_name_pattern), bool(self.inventory)]
        if sum(given) != 1:
            raise ValueError("give exactly one of inventory, node_names or node_name_pattern")
        if self.node_name_pattern is not None:
            for name in self.names(1):  # the pattern's own form bounds the rest: digits only grow the index
                if not re.fullmatch(NODE_NAME_PATTERN, name) or len(name) > 63:
                    raise Invalid(
                        f"the pattern gives node names such as {name!r}, which Kubernetes refuses",
                        ("node_name_pattern",),
                        "pad with zeros ({index:03d}, not {index:3d}); lower-case letters, digits, dashes and dots, "
                        "starting and ending with a letter or digit, at most 63 characters",
                    )
        return self

    def names(self, count: int) -> list[str]:
        if self.inventory:
            return [n.node for n in self.inventory]
        if self.node_names:
            return list(self.node_names)
        assert self.node_name_pattern is not None
        return [self.node_name_pattern.format(index=i) for i in range(count)]


class Failure(SpecModel):
    """Failure assumptions that size the checkpoint interval."""

    node_mtbf_hours: Annotated[float, Field(gt=0)] = 5000.0
    """Mean time between failures of one node (hardware, driver, network)."""
    spot_interruption_rate_monthly: Annotated[float, Field(ge=0, le=1)] | None = None
    """Share of spot nodes interrupted per month; default: the upper bound of the Spot Instance Advisor's band for
    the type and region in the catalog (`gpuinfra catalog TYPE`), else 0.05."""


class TrainingSpec(SpecModel):
    """A training cluster: accelerators, fabric, file system, checkpointing, racks, scheduler."""

    @property
    def target(self) -> Target:
        return Target(self.provider, self.account, (self.region,) if self.region else ())

    name: Name
    account: AccountName
    """Account (purpose: training) from the organization file."""
    provider: Literal["aws", "onprem"] = "aws"
    """aws (EC2 in an account of the organization file) or onprem (your racks, behind an existing Kubernetes
    cluster)."""
    region: Region | None = Field(None, json_schema_extra=updates("replace"))
    """AWS region (provider aws)."""
    availability_zone: Zone | None = Field(None, json_schema_extra=updates("replace"))
    """The one zone the cluster lives in: EFA traffic cannot cross zones."""
    site: AccountName | None = None
    """On-premises site from the organization file (provider onprem)."""
    onprem: OnPremNodes | None = None
    """The site's cluster and node names (provider onprem)."""
    compute: Compute
    interconnect: Interconnect
    lustre: Lustre | None = None
    site_lustre: SiteLustre | None = None
    checkpointing: Checkpointing | None = None
    model: TrainedModel
    racks: Racks | None = None
    """On premises only: on EC2 the customer has no racks; locality is the placement group and EC2's instance
    topology."""
    scheduler: Scheduler
    job: TrainingJob | None = None
    """What the Kubernetes job template runs (required with scheduler kubernetes)."""
    failure: Failure = Failure()
    run: TrainingRun | None = None
    """A training run to plan wall-clock days, GPU-hours and cost for."""
    tags: Tags = {}
    log_retention_days: LogRetentionDays = 365
    """Days the stack keeps its VPC flow logs (see `flow_logs`), WAF logs (CloudWatch Logs) and load balancer access
    logs (S3). One of the retentions CloudWatch Logs accepts, so either flow-log destination takes it."""
    flow_logs: FlowLogDestination = "s3"
    """Where the VPC flow logs go: a bucket of the stack's own whose objects expire after `log_retention_days`
    (the default: vended-log delivery to S3 costs half of CloudWatch Logs ingestion), or `cloud-watch-logs`, a
    log group with that retention, to query with Logs Insights."""
    suppress: list[RuleId] = []
    """Rule ids of warnings to silence for this stack."""
    protect_data: bool = True
    """Pulumi `protect` and `retainOnDelete` on the Lustre file system, the checkpoint bucket and the KMS key, so a
    replacement or deletion stops `pulumi up` instead of destroying data. Set false only for scratch stacks."""

    @field_validator("racks", mode="after")
    @classmethod
    def _racks_on_premises(cls, value: Racks | None, info: ValidationInfo) -> Racks | None:
        if value is not None and info.data.get("provider", "aws") == "aws":
            raise ValueError(
                "racks are for provider onprem: on AWS the customer has no racks, power or cooling to plan; "
                "remove racks (locality on EC2 is the cluster placement group and EC2's instance topology)"
            )
        return value

    @model_validator(mode="after")
    def _provider_fields(self) -> TrainingSpec:
        if self.provider == "aws":
            missing = [f for f in ("region", "availability_zone") if getattr(self, f) is None]
            if missing:
                example = {"region": "us-east-1", "availability_zone": f"{self.region or 'us-east-1'}a"}
                snippet = ", ".join(f"`{f}: {example[f]}`" for f in missing)
                raise Invalid(f"provider aws needs {' and '.join(missing)}", (), f"add {snippet} (yours)")
            if self.site is not None or self.site_lustre is not None or self.onprem is not None:
                raise ValueError("site, site_lustre and onprem are for provider onprem; use lustre on aws")
            wrong = self.availability_zone and self.region and zone_problem(self.availability_zone, self.region)
            if wrong:
                raise Invalid(wrong, ("availability_zone",), f"use a zone of {self.region}, e.g. {self.region}a")
            if self.scheduler.api_access.public_cidrs and self.scheduler.type != "kubernetes":
                raise ValueError("scheduler.api_access is the EKS endpoint's; it applies to scheduler kubernetes")
        else:
            if self.scheduler.api_access.public_cidrs:
                raise ValueError("scheduler.api_access is the EKS endpoint's; on premises the cluster exists already")
            if self.site is None or self.onprem is None:
                raise ValueError(
                    "provider onprem needs site (an onprem_sites entry of the organization file) "
                    "and onprem (kubeconfig_key and the node names)"
                )
            if self.scheduler.type != "kubernetes":
                raise ValueError(
                    "on premises gpuinfra schedules with Kubernetes (Kueue): set scheduler.type kubernetes"
                )
            if self.lustre is not None:
                raise ValueError("lustre is FSx for Lustre on aws; on premises use site_lustre")
            if self.racks is None:
                raise ValueError("provider onprem needs racks (power_budget_kw, cooling) to lay the nodes out")
        if self.scheduler.type == "kubernetes" and self.job is None:
            raise ValueError("scheduler kubernetes needs job (image, script under the shared file system, run_days)")
        if self.job is not None and self.lustre is None and self.site_lustre is None:
            raise ValueError("job.script lives on the shared file system: give lustre (aws) or site_lustre (onprem)")
        if self.scheduler.type != "kubernetes" and self.job is not None:
            raise ValueError("job is the Kubernetes job template's; Slurm jobs are submitted with sbatch")
        return self


__all__ = [
    "ApiAccess",
    "Architecture",
    "Capacity",
    "Checkpointing",
    "ClusterUser",
    "Compute",
    "Elastic",
    "Failure",
    "Interconnect",
    "Lustre",
    "NodeLocation",
    "OnPremNodes",
    "Optimizer",
    "Parallelism",
    "PinnedPackage",
    "Racks",
    "Scheduler",
    "SiteLustre",
    "TrainedModel",
    "TrainingJob",
    "TrainingPrecision",
    "TrainingRun",
    "TrainingSpec",
]
