"""The datatrove pipeline a dataprep stack runs, rendered from the spec (templates/dataprep/pipeline.py.j2): one
program for every executor (local, Slurm, Ray), so what `gpuinfra dataprep run --local` runs on a sample is what
the cluster runs on the corpus. Only the locations and the task counts differ."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuinfra.spec.dataprep import DataprepSpec
from gpuinfra.templating import renderer

render = renderer("dataprep")

SLURM_STAGES: dict[str, dict[str, Any]] = {
    "filter": {"cpus_per_task": 1, "mem_per_cpu_gb": 2, "time": "10:00:00"},
    "minhash-signatures": {"cpus_per_task": 1, "mem_per_cpu_gb": 2, "time": "5:00:00"},
    "minhash-buckets": {"cpus_per_task": 3, "mem_per_cpu_gb": 4, "time": "02:00:00"},
    "minhash-cluster": {"cpus_per_task": 8, "mem_per_cpu_gb": 25, "time": "30:00:00"},
    "minhash-filter": {"cpus_per_task": 1, "mem_per_cpu_gb": 4, "time": "5:00:00"},
    "tokenize": {"cpus_per_task": 1, "mem_per_cpu_gb": 2, "time": "10:00:00"},
}
"""Per stage, FineWeb's sbatch resources (huggingface/datatrove examples/fineweb.py; tokenize: tokenize_c4.py)."""
BUCKET_TASKS_PER_BUCKET = 50
"""FineWeb runs the buckets stage as `num_buckets * 50` tasks (the task count must be a multiple of the buckets)."""
RANDOMIZE_START_SECONDS = 180
"""fineweb.py: 'don't hit the bucket all at once with the list requests'."""
BYTES_PER_TOKEN = 4
DATATROVE_DEDUP = {"buckets", "hashes_per_bucket", "n_grams", "precision"}
"""The dedup fields datatrove's MinhashConfig takes."""


@dataclass(frozen=True)
class Where:
    """Where a run reads and writes, and how wide it is."""

    input: str
    scratch: str
    output: str
    work: str
    """Local working folder (the tokenizer's shuffle space)."""
    files: int
    """Input files: the first stage's task count (datatrove reads whole files per task)."""
    input_glob: str | None = None
    lid_model: str | None = None
    tokenizer: str | None = None
    """Overrides the spec's tokenizer (a tokenizer.json path for offline runs)."""
    local_workers: int = 1
    bucket_tasks_per_bucket: int = BUCKET_TASKS_PER_BUCKET
    partition: str = "dataprep"
    slurm_logs: str = "/home/dataprep/slurm_logs/"
    venv_activate: str = "/opt/dataprep/venv/bin/activate"
    qos: str = "normal"
    randomize_start_seconds: int = RANDOMIZE_START_SECONDS
    slurm_cpus_cap: int | None = None
    """Cap every stage's cpus_per_task (a small test node)."""
    slurm_mem_per_cpu_gb: int | None = None


def gpu_dedup(spec: DataprepSpec) -> bool:
    """Dedup runs on NeMo Curator's GPU stages (curator_dedup.py), not datatrove's MinHash stages."""
    return spec.stages.dedup is not None and spec.stages.dedup.accelerator == "gpu"


def task_counts(spec: DataprepSpec, where: Where) -> dict[str, int]:
    """Tasks per datatrove stage: the filter stage one per input file, at most 1000 after it (fineweb.py), the
    buckets a multiple of the buckets, the cluster one."""
    first = where.files
    later = max(1, min(first, 1000))
    counts = {"filter": first}
    dedup = spec.stages.dedup
    if dedup is not None and not gpu_dedup(spec):
        counts |= {
            "minhash-signatures": later,
            "minhash-buckets": dedup.buckets * where.bucket_tasks_per_bucket,
            "minhash-cluster": 1,
            "minhash-filter": later,
        }
    counts["tokenize"] = later
    return counts


def _slurm(where: Where, names: list[str]) -> dict[str, Any]:
    stages = {}
    for name in names:
        res = dict(SLURM_STAGES[name])
        if where.slurm_cpus_cap is not None:
            res["cpus_per_task"] = min(res["cpus_per_task"], where.slurm_cpus_cap)
        if where.slurm_mem_per_cpu_gb is not None:
            res["mem_per_cpu_gb"] = where.slurm_mem_per_cpu_gb
        stages[name] = res
    return {
        "partition": where.partition,
        "logs": where.slurm_logs,
        "venv_activate": where.venv_activate,
        "qos": where.qos,
        "randomize_start_seconds": where.randomize_start_seconds,
        "stages": stages,
    }


def settings(spec: DataprepSpec, where: Where) -> dict[str, Any]:
    """The template's one constant: every value the pipeline reads, as Python literals."""
    st = spec.stages
    tasks = task_counts(spec, where)
    shard_tokens = st.tokenize.shard_size_mb * 1_000_000 // BYTES_PER_TOKEN
    return {
        "name": spec.name,
        "format": spec.corpus.format,
        "input": where.input,
        "input_glob": where.input_glob,
        "scratch": where.scratch,
        "output": where.output,
        "work": where.work,
        "extract": st.extract,
        "languages": list(st.language.languages),
        "threshold": repr(st.language.threshold),
        "lid_model": where.lid_model or st.language.model_uri,
        "quality": st.quality.model_dump(),
        "dedup": None if st.dedup is None or gpu_dedup(spec) else st.dedup.model_dump(include=DATATROVE_DEDUP),
        "deduplicated": deduplicated(spec),
        "pii": None if st.pii is None else st.pii.model_dump(),
        "tokenize": {
            "tokenizer": where.tokenizer or st.tokenize.tokenizer,
            "eos_token": st.tokenize.eos_token,
            "max_tokens_per_file": shard_tokens,
            "shuffle": st.tokenize.shuffle,
        },
        "tasks": tasks,
        "local_workers": where.local_workers,
        "slurm": _slurm(where, list(tasks)),
        "ray": {n: {"cpus_per_task": r["cpus_per_task"], "mem_per_cpu_gb": r["mem_per_cpu_gb"]}
                for n, r in _slurm(where, list(tasks))["stages"].items()},
    }  # fmt: skip


def deduplicated(spec: DataprepSpec) -> str | None:
    """Under the scratch prefix, what dedup keeps and tokenize reads: datatrove's dedup filter output, Curator's
    removal output, or nothing (no dedup: tokenize reads the filtered text)."""
    if spec.stages.dedup is None:
        return None
    return CURATOR_OUT if gpu_dedup(spec) else "deduped"


def render_pipeline(spec: DataprepSpec, where: Where) -> str:
    return str(render("pipeline.py.j2", settings=settings(spec, where)))


CURATOR_OUT = "curator/deduplicated/"
"""Under the scratch prefix: the documents Curator's removal keeps, which datatrove's tokenize stage reads."""
CURATOR_BLOCKSIZE = "1GiB"
"""Curator's default input_blocksize; its docs: "512MiB-1.5GiB and reduce if running into OOMs during MinHash"."""
CURATOR_CHAR_NGRAMS = 24
"""Curator's default shingle: character 24-grams ("Using a value of at least 20 for char_ngrams is recommended":
fewer give ~5% false positives). datatrove's word n-grams have no Curator counterpart."""


def curator_settings(spec: DataprepSpec, where: Where) -> dict[str, Any]:
    """The GPU dedup program's constant: the filter stage's output in, the kept documents out, the spec's bands
    (buckets x hashes per bucket) and hash width."""
    dedup = spec.stages.dedup
    assert dedup is not None and dedup.accelerator == "gpu"
    return {
        "input": where.scratch + "filtered/",
        "cache": where.scratch + "curator/cache/",
        "ids": where.scratch + "curator/ids/",
        "output": where.scratch + CURATOR_OUT,
        "extensions": [".jsonl.gz"],  # datatrove's JsonlWriter: "${rank}.jsonl" gzip-compressed
        "blocksize": CURATOR_BLOCKSIZE,
        "seed": 42,
        "char_ngrams": CURATOR_CHAR_NGRAMS,
        "num_bands": dedup.buckets,
        "minhashes_per_band": dedup.hashes_per_bucket,
        "use_64_bit_hash": dedup.precision == 64,
    }


def render_curator(spec: DataprepSpec, where: Where) -> str:
    return str(render("curator_dedup.py.j2", settings=curator_settings(spec, where)))


__all__ = [
    "CURATOR_OUT",
    "SLURM_STAGES",
    "Where",
    "curator_settings",
    "gpu_dedup",
    "render_curator",
    "render_pipeline",
    "settings",
    "task_counts",
]
