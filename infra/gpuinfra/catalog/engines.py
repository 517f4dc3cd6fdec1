"""What each serving engine is, as the fleet runs it: its official image at the pin, the command the image runs,
where it answers metrics and which Prometheus series count its queue. The facts are catalog data
(data/engines.yaml, every row citing its sources and their dates), read with the rest of the catalog; this module
is their typed view and the file's own checks. The validators, the EC2 scripts and the Kubernetes Deployment and
autoscaler read one row, so a flag or a metric name is written once."""

from __future__ import annotations

import datetime
from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict

from gpuinfra.catalog.models import Entry, Source

FILE = "engines.yaml"


class Engine(Entry):
    """One model server's facts as the fleet uses them (`source`: where they were read; `as_of`: its date)."""

    name: str
    """The spec's `engine:` value (spec/inference.py ServingEngine)."""
    label: str
    """How its project writes its name."""
    admission: str
    """Its KV admission rule in a phrase, as the report and the quantization table state it."""
    image: str
    """The official image, repository:tag at the pin."""
    image_digest: str
    """The pinned tag's digest (what `server_image_digest` should hold with `image`)."""
    digest_source: str
    """The source id the digest was read from (the file's `sources:`)."""
    launcher: tuple[str, ...]
    """argv before the flags; empty: the image's own entrypoint takes the flags (vLLM)."""
    metrics_path: str
    waiting_metric: str
    """The gauge of requests queued for a slot, which the autoscaler counts (each engine here exports one at its
    pin; one that did not could not be autoscaled, and is not offered)."""
    running_metric: str
    """The gauge of requests being generated."""
    ttft_histogram: str
    """Time to first token, seconds."""
    itl_histograms: tuple[str, ...]
    """Time between output tokens, seconds: the first the server exports is read."""
    api_key_env: str | None
    """The variable the server reads its API key from (kept off the command line); None: the launch cannot hand it
    a key without putting it in argv, so api_key auth is refused (engine-api-key)."""
    memory_flag: str
    """The flag `model.gpu_memory_utilization` becomes (each engine reads it by its own KV rule,
    plan/roofline.py kv_memory_bytes)."""
    cites: tuple[str, ...] = ()
    """Further sources of some facts (the file's `sources:`)."""

    @property
    def repository(self) -> str:
        return image_repository(self.image)

    @property
    def sources(self) -> tuple[str, ...]:
        """Every source id the row names: its facts', its digest's and the further ones."""
        return (self.source, self.digest_source, *self.cites)


class EngineTable(BaseModel):
    """data/engines.yaml: its sources and one row per engine."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sources: dict[str, Source] = {}
    engines: tuple[Engine, ...] = ()

    def engine(self, name: str) -> Engine:
        """The row a spec names (the load refuses a file that lacks an engine the spec admits)."""
        found = next((e for e in self.engines if e.name == name), None)
        if found is None:
            raise KeyError(f"{FILE} has no engine {name!r} (it has {sorted(self.names)})")
        return found

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.engines)

    def owner_of(self, image: str) -> Engine | None:
        """The engine whose official repository `image` is (any tag or digest), None for anyone else's image."""
        repository = image_repository(image)
        return next((e for e in self.engines if e.repository == repository), None)


def image_repository(image: str) -> str:
    """An image reference without tag, digest or Docker Hub's own host names (docker.io/vllm/vllm-openai:v1 and
    vllm/vllm-openai@sha256:... are both vllm/vllm-openai), so two spellings of one repository compare equal."""
    path = image.split("@", 1)[0]
    first, _, rest = path.partition("/")
    if rest and first in ("docker.io", "index.docker.io", "registry-1.docker.io"):
        path = rest
    last = path.rsplit("/", 1)[-1]
    return path.rsplit(":", 1)[0] if ":" in last else path


def table_problems(table: EngineTable) -> Iterator[str]:
    """What the catalog refuses in the file: a row naming a source the file does not list, a row dated otherwise
    than its source (null when the source gives no date), two rows of one engine."""
    unknown = sorted({f"{e.name}: {s}" for e in table.engines for s in e.sources if s not in table.sources})
    if unknown:
        yield f"{FILE}: rows name sources the file does not list: {', '.join(unknown)}"
    misdated = sorted(
        f"{e.name} as_of {e.as_of} (source {e.source}: {table.sources[e.source].date})"
        for e in table.engines
        if e.source in table.sources and e.as_of != table.sources[e.source].date
    )
    if misdated:
        yield f"{FILE}: rows whose as_of is not their source's date: {', '.join(misdated)}"
    repeated = sorted({n for n in table.names if table.names.count(n) > 1})
    if repeated:
        yield f"{FILE}: engines listed twice: {', '.join(repeated)}"


def age_days(engine: Engine, today: datetime.date) -> int | None:
    """How old the row's facts are by its source's date; None when the source gives none (unknown, not new)."""
    return None if engine.as_of is None else (today - engine.as_of).days


__all__ = ["FILE", "Engine", "EngineTable", "age_days", "image_repository", "table_problems"]
