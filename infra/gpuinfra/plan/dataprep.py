"""The data preparation plan: hours and cost per datatrove stage from cited throughputs, the single MinHash cluster
step's memory and node, scratch storage (signatures per document), S3 requests, spot interruption, and the
cheapest worker count that meets the deadline (or the fastest within the budget).

Pure: `plan_dataprep(spec, org, catalog)` is a function of its arguments, so `gpuinfra advise` and the report can
call it freely. Every figure comes from CALIBRATION, whose rows name their source; figures that are Slurm time
limits of the FineWeb recipe rather than measurements are marked `limit` (an upper bound: the plan errs long).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Literal

from gpuinfra.catalog import Catalog
from gpuinfra.clouds import cloud_of
from gpuinfra.plan.interruption import DEFAULT_MONTHLY
from gpuinfra.plan.memory import Plain
from gpuinfra.plan.quotas import InstanceDemand, QuotaNeed, needs_in
from gpuinfra.spec import Organization
from gpuinfra.spec.dataprep import DataprepSpec

Kind = Literal["measured", "limit", "derived"]


class Calibration(Plain):
    key: str
    value: float
    unit: str
    kind: Kind
    source: str


FINEWEB = "huggingface/datatrove@a649de7 examples/fineweb.py"
CURATOR = "NVIDIA-NeMo/Curator@1e2e427 fern/versions/main/pages/about/concepts/"
DUMP_TB = 60.0
"""Compressed WARC of one Common Crawl snapshot (NeMo Framework user guide, pretraining datasets: "60 TB of
compressed WARC files"): the per-dump limits of the FineWeb recipe are scaled per TB with it."""


def _row(key: str, value: float, unit: str, kind: Kind, source: str) -> Calibration:
    return Calibration(key=key, value=value, unit=unit, kind=kind, source=source)


CALIBRATION: dict[str, Calibration] = {
    c.key: c
    for c in (
        _row("extract_filter_warc", 8000 * 10 / DUMP_TB, "core-hours per TB of WARC", "limit",
             f"{FINEWEB}: base processing, 8000 tasks x 1 CPU x time 10:00:00 per dump, / {DUMP_TB:g} TB"),
        _row("filter_text", 122.0, "core-hours per TB of text", "measured",
             "allenai/dolma@669f534 configs/c4-replication/README.md: '122 CPU Hours per TB' (fasttext language id + "
             "C4 heuristics, c6a.4xlarge)"),
        _row("text_survival", 0.52 / 2.8 / 0.504, "share of input bytes kept by extract + filters", "derived",
             "NeMo Curator key-features.mdx '2.8TB raw to 0.52TB' (after dedup) / the dedup keep share below"),
        _row("dedup_keep", 0.504, "share of text bytes kept by MinHash dedup", "measured",
             "Cerebras SlimPajama blog: dedup 'removed 49.6% of bytes'"),
        _row("minhash_signatures", 2000.0, "core-hours per TB of text", "measured",
             "huggingface/datatrove#106: 'with 1T data, we can calculate the hash values in 2h with 1k cores'"),
        _row("minhash_buckets", 700 * 3 * 2 / (DUMP_TB * 0.52 / 2.8 / 0.504), "core-hours per TB of text", "limit",
             f"{FINEWEB}: buckets, 14 x 50 tasks x cpus_per_task 3 x time 02:00:00 per dump"),
        _row("minhash_cluster_hours", 7.0, "hours per TB of text (one task)", "measured",
             "huggingface/datatrove#106: 'the cluster stage takes more than 7h' for 1T data (a floor)"),
        _row("minhash_cluster_memory", 8 * 25 / (DUMP_TB * 0.52 / 2.8 / 0.504), "GB per TB of text", "limit",
             f"{FINEWEB}: cluster, cpus_per_task 8 x mem_per_cpu_gb 25 per dump"),
        _row("minhash_filter", 1000 * 5 / (DUMP_TB * 0.52 / 2.8 / 0.504), "core-hours per TB of text", "limit",
             f"{FINEWEB}: filter + PIIFormatter + write, 1000 tasks x time 05:00:00 per dump"),
        _row("tokenize_mb_s", 4.21, "MB/s per thread", "measured",
             "huggingface/tokenizers PR #1584: 'num_threads: 1 ... huggingface 4.21 MB / s' (llama-3.1 tokenizer)"),
        _row("bytes_per_token", 4.0, "bytes per token", "measured",
             "openai/tiktoken README: 'each token corresponds to about 4 bytes'"),
        _row("warc_bytes_per_page", DUMP_TB * 1e12 / 2.64e9, "compressed WARC bytes per page", "derived",
             f"{DUMP_TB:g} TB per snapshot / 2.64 billion pages (Common Crawl blog, December 2024 crawl archive)"),
        _row("text_bytes_per_document", 1658.55, "bytes per document", "measured",
             "huggingface/tokenizers PR #1584: 'documents: 10000 Length: 1658.55' (XNLI)"),
        _row("curator_fuzzy_tb_node_hour", 8 / 2.05, "TB of text per 8 x H100 node-hour", "measured",
             f"{CURATOR} throughput.mdx: fuzzy dedup of 8 TB RedPajama v2 on 1x H100 80 GB node 2.05 hours "
             "(2x 1.01, 4x 0.50: linear)"),
        _row("curator_tb_per_node", 8.0, "TB of text one 8 x H100 node held", "measured",
             f"{CURATOR} throughput.mdx: the 8 TB benchmark ran on one H100 80 GB node (the most per node measured)"),
    )
}  # fmt: skip
"""The planner's figures, one per key, with their sources (docs/dataprep.md shows the table)."""
SERIAL_STAGES = frozenset({"minhash-cluster"})
GPU_STAGE = "curator-fuzzy-dedup"
"""NeMo Curator's fuzzy dedup (MinHash, LSH, connected components) on GPU nodes: its hours do not shrink with the
CPU workers (they are timed on the plan's GPU nodes)."""
GPU_REMOVAL = "curator-removal"
"""Curator's removal workflow ("The removal workflow is CPU only", Curator PR #1242): it runs in the GPU stage's
RayJob, so on the GPU nodes' CPUs, timed at datatrove's dedup-filter rate (the same work: read, drop the listed
ids, write)."""
MB = 1e6
TB = 1e12
HOURS_A_MONTH = 730
LOGIN_TYPE = "m7i.xlarge"
"""The PCS login node (where datatrove submits from), or on the Ray engine the system node (the KubeRay operator
and the Ray heads): on-demand, for the run's length."""


class StagePlan(Plain):
    stage: str
    input_tb: float
    """Bytes the stage reads (TB): the corpus for the first stage, the survivors of the stages before it after."""
    core_hours: float
    tasks: int
    """datatrove tasks: at most this many run at once."""
    serial: bool
    hours: float
    figure: str
    accelerated: bool = False
    """Runs on the GPU nodes (timed and billed there, not on the CPU workers)."""
    node_hours: bool = False
    """core_hours holds GPU node-hours (the GPU stage's figure is per node-hour)."""
    """The CALIBRATION key the hours come from."""


class ClusterStep(Plain):
    memory_gb: float
    instance_type: str | None
    """The node the one cluster task runs on; None: no catalog CPU type holds it (see `why`)."""
    usd_per_hour: Decimal | None
    why: str | None = None


class Scratch(Plain):
    signature_bytes_per_document: int
    """datatrove MinhashDedupSignature: per bucket `struct.calcsize(<{hashes}{Q|I}I)`, times the buckets."""
    signatures_gb: float
    intermediate_gb: float
    """Filtered text, signatures and deduplicated text, held until the lifecycle expiry."""
    storage_usd: Decimal | None
    get_requests: int
    put_requests: int
    requests_usd: Decimal | None


class DataprepPlan(Plain):
    workload: Literal["dataprep"] = "dataprep"
    engine: str
    instance_type: str
    vcpus_per_node: int
    memory_gib_per_node: int
    nodes: int
    """Worker nodes: the cheapest count that meets the deadline (or the fastest within the budget)."""
    spot: bool
    usd_per_node_hour: Decimal | None
    documents: int
    tokens: int
    stages: list[StagePlan]
    cluster: ClusterStep
    scratch: Scratch
    interruption_monthly: float
    retry_overhead: float
    """Share of task work redone after spot reclaims (lost half-task on average)."""
    hours: float
    serial_hours: float
    """The floor more worker nodes cannot lower: the cluster step, and the stages on the GPU nodes."""
    compute_usd: Decimal | None
    cost_usd: Decimal | None
    meets_deadline: bool | None
    within_budget: bool | None
    gpu: bool
    """A stage asks for GPUs (the GPU dedup stage)."""
    gpu_nodes: int = 0
    """GPU nodes of the GPU dedup stage: the fewest that hold the text (more shorten it at the same cost)."""
    gpu_instance_type: str | None = None
    gpu_usd_per_node_hour: Decimal | None = None
    gpu_hours: float = 0.0
    quotas: list[QuotaNeed]


def documents_of(spec: DataprepSpec) -> int:
    """The corpus's documents: as given, else its bytes over the calibration's bytes per page (or per document)."""
    if spec.corpus.documents is not None:
        return spec.corpus.documents
    per = "warc_bytes_per_page" if spec.corpus.format == "warc" else "text_bytes_per_document"
    return max(1, round(spec.corpus.size_tb * TB / CALIBRATION[per].value))


def stage_rows(spec: DataprepSpec) -> list[StagePlan]:
    """Each datatrove job of the pipeline with its input and core-hours (hours are set when nodes are known)."""
    c = {k: v.value for k, v in CALIBRATION.items()}
    size, files = spec.corpus.size_tb, spec.corpus.files
    warc = spec.corpus.format == "warc"
    first = "extract_filter_warc" if warc else "filter_text"
    text = size * c["text_survival"]
    rows = [_stage("filter", size, size * c[first], files, first)]
    dedup = spec.stages.dedup
    if dedup is not None and dedup.accelerator == "gpu":
        nodes = gpu_nodes(text)
        rows += [
            _stage(GPU_STAGE, text, text / c["curator_fuzzy_tb_node_hour"], nodes, "curator_fuzzy_tb_node_hour"),
            _stage(GPU_REMOVAL, text, text * c["minhash_filter"], nodes, "minhash_filter"),
        ]
        text *= c["dedup_keep"]
    elif dedup is not None:
        tasks = max(1, min(files, 1000))
        rows += [
            _stage("minhash-signatures", text, text * c["minhash_signatures"], tasks, "minhash_signatures"),
            _stage("minhash-buckets", text, text * c["minhash_buckets"], dedup.buckets * 50, "minhash_buckets"),
            _stage("minhash-cluster", text, text * c["minhash_cluster_hours"], 1, "minhash_cluster_hours"),
            _stage("minhash-filter", text, text * c["minhash_filter"], tasks, "minhash_filter"),
        ]
        text *= c["dedup_keep"]
    per_tb = TB / (c["tokenize_mb_s"] * MB) / 3600
    rows.append(_stage("tokenize", text, text * per_tb, max(1, min(files, 1000)), "tokenize_mb_s"))
    return rows


def gpu_nodes(text_tb: float) -> int:
    """GPU dedup nodes: the fewest that hold the text at the most one node was measured with (cost is the same at
    any count: the throughput scales linearly)."""
    return max(1, math.ceil(text_tb / CALIBRATION["curator_tb_per_node"].value - 1e-9))


def _stage(stage: str, input_tb: float, core_hours: float, tasks: int, figure: str) -> StagePlan:
    serial = stage in SERIAL_STAGES
    accelerated = stage in (GPU_STAGE, GPU_REMOVAL)
    return StagePlan(
        stage=stage,
        input_tb=input_tb,
        core_hours=core_hours,
        tasks=tasks,
        serial=serial,
        hours=core_hours if serial else core_hours / tasks if stage == GPU_STAGE else 0.0,
        figure=figure,
        accelerated=accelerated,
        node_hours=stage == GPU_STAGE,
    )


def stage_hours(rows: list[StagePlan], cores: int, overhead: float) -> list[StagePlan]:
    """Hours of each stage on `cores` worker cores: a parallel stage runs min(cores, tasks) tasks at once and
    redoes `overhead` of its work after reclaims; the serial step runs alone, on its own node."""
    out = []
    for row in rows:
        if row.serial or row.accelerated:
            out.append(row)
            continue
        width = max(1, min(cores, row.tasks))
        out.append(row.model_copy(update={"hours": row.core_hours / width * (1 + overhead)}))
    return out


def signature_bytes(spec: DataprepSpec) -> int:
    """Bytes of MinHash signatures per document: datatrove writes, per bucket, `hashes_per_bucket` hashes of
    `precision` bits and a 4-byte document id (struct format `<{n}QI` or `<{n}II`); NeMo Curator's MinHashStage
    one row per document, its `buckets x hashes_per_bucket` hashes and an int64 id (`_curator_dedup_id`)."""
    dedup = spec.stages.dedup
    if dedup is None:
        return 0
    if dedup.accelerator == "gpu":
        return dedup.buckets * dedup.hashes_per_bucket * dedup.precision // 8 + 8
    return dedup.buckets * (dedup.hashes_per_bucket * dedup.precision // 8 + 4)


def cluster_step(spec: DataprepSpec, catalog: Catalog, text_tb: float | None) -> ClusterStep:
    """The one-task cluster step's memory (FineWeb's per-dump allowance, per TB of text) and the node for it: the
    spec's, else the cheapest CPU type in the region's prices with that much memory. `text_tb` None: the pipeline
    has no CPU cluster step (no dedup, or dedup on GPUs), so no node."""
    if text_tb is None:
        return ClusterStep(memory_gb=0.0, instance_type=None, usd_per_hour=None, why="no MinHash cluster step on CPU")
    need = text_tb * CALIBRATION["minhash_cluster_memory"].value
    gib = need * 1e9 / 2**30
    if spec.workers.cluster_instance_type is not None:
        name = spec.workers.cluster_instance_type
        price = catalog.on_demand(name, spec.region)
        return ClusterStep(memory_gb=need, instance_type=name, usd_per_hour=price.usd_per_hour if price else None)
    fits = [
        (price.usd_per_hour, t.name)
        for t in catalog.instance_types
        if t.accelerator is None and t.memory_gib >= gib and (price := catalog.on_demand(t.name, spec.region))
    ]
    if not fits:
        largest = max((t.memory_gib for t in catalog.instance_types if t.accelerator is None), default=0)
        why = f"no CPU type priced in {spec.region} has {gib:,.0f} GiB (the largest holds {largest} GiB)"
        return ClusterStep(memory_gb=need, instance_type=None, usd_per_hour=None, why=why)
    usd, name = min(fits)
    return ClusterStep(memory_gb=need, instance_type=name, usd_per_hour=usd)


def scratch(spec: DataprepSpec, catalog: Catalog, documents: int, rows: list[StagePlan], hours: float) -> Scratch:
    """Intermediates on S3 (filtered text, signatures, deduplicated text) for the run plus the expiry, and the
    requests: one GET per input file and a PUT per task output and completion marker."""
    per_doc = signature_bytes(spec)
    kept = documents * CALIBRATION["text_survival"].value
    signatures_gb = kept * per_doc / 1e9
    text_gb = sum(r.input_tb for r in rows if r.stage in ("minhash-signatures", GPU_STAGE, "tokenize")) * 1000
    intermediate = signatures_gb + text_gb
    months = (hours / 24 + spec.scratch.expire_days) / (HOURS_A_MONTH / 24)
    gb_month = catalog.service("s3/standard")
    storage = Decimal(repr(intermediate * months)) * gb_month.usd if gb_month else None
    gets = spec.corpus.files + sum(r.tasks for r in rows)
    puts = 2 * sum(r.tasks for r in rows)
    tier1, tier2 = catalog.service("s3/requests_tier1"), catalog.service("s3/requests_tier2")
    requests = (tier1.usd * puts + tier2.usd * gets) / 1000 if tier1 and tier2 else None
    return Scratch(
        signature_bytes_per_document=per_doc,
        signatures_gb=signatures_gb,
        intermediate_gb=intermediate,
        storage_usd=storage,
        get_requests=gets,
        put_requests=puts,
        requests_usd=requests,
    )


def retry_overhead(rows: list[StagePlan], monthly: float) -> float:
    """Work redone after reclaims: a reclaimed task restarts from scratch (datatrove's unit of resume is the task),
    losing half a task on average; a node is reclaimed at `monthly` per 730 hours."""
    parallel = [r for r in rows if not r.serial and not r.accelerated and r.core_hours > 0]
    if not parallel:
        return 0.0
    longest = max(r.core_hours / r.tasks for r in parallel)
    return monthly / HOURS_A_MONTH * longest / 2


class _Point(Plain):
    nodes: int
    hours: float
    compute_usd: Decimal | None


class Gpu(Plain):
    """The GPU dedup stage's nodes, their vCPUs and on-demand rate (None: unpriced)."""

    nodes: int
    instance_type: str | None
    usd_per_node_hour: Decimal | None
    vcpus: int = 0

    def timed(self, row: StagePlan) -> StagePlan:
        """The removal's hours on the GPU nodes' CPUs (the fuzzy dedup's are set from its node-hours)."""
        if row.stage != GPU_REMOVAL or not self.nodes or not self.vcpus:
            return row
        return row.model_copy(update={"hours": row.core_hours / (self.nodes * self.vcpus)})


def point(
    rows: list[StagePlan],
    nodes: int,
    vcpus: int,
    rate: Decimal | None,
    cluster: ClusterStep,
    o: float,
    gpu: Gpu,
    static: bool = True,
) -> _Point:
    """Wall hours and compute cost at `nodes` workers: the workers are billed for the whole run but the GPU RayJob's
    stages (its own Ray cluster: the CPU one is gone); `static` (PCS: node groups hold their size) through the
    serial cluster step too, else (Ray: the autoscaler removes idle workers, `idleTimeoutSeconds` 60 by default,
    and Karpenter their empty nodes) not. The cluster node is billed for the serial step, the GPU nodes for theirs."""
    timed = stage_hours(rows, nodes * vcpus, o)
    hours = sum(r.hours for r in timed)
    serial = sum(r.hours for r in timed if r.serial)
    on_gpu = sum(r.hours for r in timed if r.accelerated)
    if rate is None or (serial and cluster.usd_per_hour is None) or (on_gpu and gpu.usd_per_node_hour is None):
        return _Point(nodes=nodes, hours=hours, compute_usd=None)
    busy = hours - on_gpu - (0.0 if static else serial)
    usd = rate * nodes * Decimal(repr(busy)) + (cluster.usd_per_hour or Decimal(0)) * Decimal(repr(serial))
    usd += (gpu.usd_per_node_hour or Decimal(0)) * gpu.nodes * Decimal(repr(on_gpu))
    return _Point(nodes=nodes, hours=hours, compute_usd=usd)


def choose(spec: DataprepSpec, points: list[_Point]) -> _Point:
    """The cheapest count within the deadline; else (budget only) the fastest within the budget; else the
    fastest. Unknown cost: the fewest nodes that meet the deadline."""
    if spec.deadline_hours is not None:
        meets = [p for p in points if p.hours <= spec.deadline_hours]
        if meets:
            priced = [p for p in meets if p.compute_usd is not None]
            return min(priced, key=lambda p: (p.compute_usd, p.nodes)) if priced else meets[0]
        return min(points, key=lambda p: (p.hours, p.nodes))
    within = [p for p in points if p.compute_usd is not None and spec.budget_usd and p.compute_usd <= spec.budget_usd]
    return min(within or points, key=lambda p: (p.hours, p.nodes))


def plan_dataprep(spec: DataprepSpec, org: Organization, catalog: Catalog) -> DataprepPlan:
    """The run's plan: stages, the chosen worker count, hours, cost, scratch, requests and quota needs."""
    worker = catalog.instance(spec.workers.instance_type)
    vcpus = worker.vcpu if worker else 1
    memory = worker.memory_gib if worker else 1
    spot = spec.workers.capacity == "spot"
    rate = _rate(catalog, spec, spot)
    documents = documents_of(spec)
    rows = stage_rows(spec)
    text_tb = next((r.input_tb for r in rows if r.stage == "minhash-cluster"), None)
    cluster = cluster_step(spec, catalog, text_tb)
    gpu = gpu_of(spec, catalog, rows)
    rows = [gpu.timed(r) for r in rows]
    monthly = DEFAULT_MONTHLY if spot else 0.0
    overhead = retry_overhead(rows, monthly)
    static = spec.engine == "datatrove-slurm"
    points = [point(rows, n, vcpus, rate, cluster, overhead, gpu, static) for n in range(1, spec.workers.max_nodes + 1)]
    best = choose(spec, points)
    timed = stage_hours(rows, best.nodes * vcpus, overhead)
    store = scratch(spec, catalog, documents, timed, best.hours)
    total = _total(best.compute_usd, store)
    return DataprepPlan(
        engine=spec.engine,
        instance_type=spec.workers.instance_type,
        vcpus_per_node=vcpus,
        memory_gib_per_node=memory,
        nodes=best.nodes,
        spot=spot,
        usd_per_node_hour=rate,
        documents=documents,
        tokens=round(rows[-1].input_tb * TB / CALIBRATION["bytes_per_token"].value),
        stages=timed,
        cluster=cluster,
        scratch=store,
        interruption_monthly=monthly,
        retry_overhead=overhead,
        hours=best.hours,
        serial_hours=sum(r.hours for r in timed if r.serial or r.accelerated),
        compute_usd=best.compute_usd,
        cost_usd=total,
        meets_deadline=None if spec.deadline_hours is None else best.hours <= spec.deadline_hours,
        within_budget=None if spec.budget_usd is None or total is None else total <= spec.budget_usd,
        gpu=gpu.nodes > 0,
        gpu_nodes=gpu.nodes,
        gpu_instance_type=gpu.instance_type,
        gpu_usd_per_node_hour=gpu.usd_per_node_hour,
        gpu_hours=sum(r.hours for r in timed if r.accelerated),
        quotas=_quotas(spec, org, catalog, best.nodes, cluster, gpu),
    )


def gpu_of(spec: DataprepSpec, catalog: Catalog, rows: list[StagePlan]) -> Gpu:
    """The GPU dedup stage's nodes (its row's tasks) and their on-demand price: NeMo Curator's GPU stages resume
    no task, so they run on-demand."""
    row = next((r for r in rows if r.node_hours), None)
    if row is None or spec.stages.dedup is None:
        return Gpu(nodes=0, instance_type=None, usd_per_node_hour=None)
    name = spec.stages.dedup.gpu_instance_type
    price = catalog.on_demand(name, spec.region)
    info = catalog.instance(name)
    return Gpu(
        nodes=row.tasks,
        instance_type=name,
        usd_per_node_hour=price.usd_per_hour if price else None,
        vcpus=info.vcpu if info else 0,
    )


def _rate(catalog: Catalog, spec: DataprepSpec, spot: bool) -> Decimal | None:
    """USD per worker node-hour: on-demand, less the catalog's spot discount for spot workers."""
    od = catalog.on_demand(spec.workers.instance_type, spec.region)
    if od is None:
        return None
    if not spot:
        return od.usd_per_hour
    return od.usd_per_hour * (Decimal(1) - catalog.spot_discount(spec.workers.instance_type, spec.region).discount)


def _total(compute: Decimal | None, store: Scratch) -> Decimal | None:
    if compute is None or store.storage_usd is None or store.requests_usd is None:
        return None
    return compute + store.storage_usd + store.requests_usd


def _quotas(
    spec: DataprepSpec, org: Organization, catalog: Catalog, nodes: int, cluster: ClusterStep, gpu: Gpu
) -> list[QuotaNeed]:
    """The workers; the PCS login node or the Ray engine's system node (operator and head), both LOGIN_TYPE on
    demand; the cluster step's node; the GPU stage's nodes."""
    account = org.accounts.get(spec.account)
    if account is None:
        return []
    purchase: Literal["spot", "on_demand"] = "spot" if spec.workers.capacity == "spot" else "on_demand"
    demands = [
        InstanceDemand(spec.region, spec.workers.instance_type, purchase, nodes),
        InstanceDemand(spec.region, LOGIN_TYPE, "on_demand", 1),
    ]
    if cluster.instance_type is not None:
        demands.append(InstanceDemand(spec.region, cluster.instance_type, "on_demand", 1))
    if gpu.instance_type is not None:
        demands.append(InstanceDemand(spec.region, gpu.instance_type, "on_demand", gpu.nodes))
    return needs_in(cloud_of(spec), demands, catalog, spec.account, account.id, account.quotas)


__all__ = [
    "CALIBRATION",
    "GPU_REMOVAL",
    "GPU_STAGE",
    "LOGIN_TYPE",
    "Calibration",
    "ClusterStep",
    "DataprepPlan",
    "Gpu",
    "Scratch",
    "StagePlan",
    "cluster_step",
    "documents_of",
    "gpu_nodes",
    "plan_dataprep",
    "signature_bytes",
    "stage_rows",
]
