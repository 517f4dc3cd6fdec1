"""Data preparation: the workers write only where the spec declares, never into the raw corpus; a GPU dedup stage
runs only on the Ray engine (NeMo Curator's GPU stages are Ray's)."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.plan import DataprepPlan
from gpuinfra.spec import DataprepSpec
from gpuinfra.validators.base import Failure, Level, rule


def _inside(child: str, parent: str) -> bool:
    return child.rstrip("/").startswith(parent.rstrip("/") + "/") or child.rstrip("/") == parent.rstrip("/")


@rule(Level.ERROR)
def dataprep_writes_outside_the_corpus(spec: DataprepSpec, plan: DataprepPlan) -> Iterator[Failure]:
    """The raw corpus is read only: an output or scratch prefix inside it (or holding it) would overwrite it."""
    corpus = spec.corpus.uri
    for field, uri in (("output", spec.output.uri), ("scratch", spec.scratch.uri)):
        if _inside(uri, corpus) or _inside(corpus, uri):
            yield Failure(
                f"{field}.uri {uri} overlaps the raw corpus {corpus}: the workers would write into it",
                (field, "uri"),
                f"write `uri: s3://<bucket>/<prefix>/` under {field}: a prefix of its own, outside {corpus}",
            )


@rule(Level.ERROR)
def dataprep_gpu_stage_needs_ray(spec: DataprepSpec, plan: DataprepPlan) -> Iterator[Failure]:
    """A GPU dedup stage (NeMo Curator) runs on Ray; the Slurm engine's node groups are CPU only."""
    if plan.gpu and spec.engine != "datatrove-ray":
        yield Failure(
            "stages.dedup.accelerator gpu runs on the Ray engine; the Slurm engine launches CPU workers only",
            ("stages", "dedup", "accelerator"),
            "write `engine: datatrove-ray`, or `accelerator: cpu` under stages.dedup",
        )
