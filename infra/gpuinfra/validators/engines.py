"""Serving engines: the fleet runs the engine the planner assumed, and only what that engine can do as launched
(the catalog's engines.yaml holds each engine's facts and their sources; docs/serving-engines.md quotes them)."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.catalog import Catalog
from gpuinfra.catalog.engines import Engine
from gpuinfra.spec import InferenceSpec
from gpuinfra.validators.base import Failure, Level, rule


def _pin(engine: Engine) -> str:
    return f"`server_image: {engine.image}` and `server_image_digest: {engine.image_digest}`"


@rule(Level.ERROR)
def engine_image_mismatch(spec: InferenceSpec, catalog: Catalog) -> Iterator[Failure]:
    """server_image is another engine's official image: the launch command would be handed to the wrong server
    (an image of a repository no engine owns is taken as your own build of the named engine)."""
    engine = catalog.engine(spec.engine)
    owner = catalog.engine_table.owner_of(spec.server_image)
    if owner is not None and owner.name != engine.name:
        yield Failure(
            f"engine {engine.name} with server_image {spec.server_image}, {owner.label}'s image: the fleet would "
            f"start {owner.label} with {engine.label}'s command line",
            ("server_image",),
            f"write {_pin(engine)} (its official image at the pin), or `engine: {owner.name}`",
        )


@rule(Level.ERROR)
def engine_queue_metric_mismatch(spec: InferenceSpec, catalog: Catalog) -> Iterator[Failure]:
    """kubernetes.queue_metric names another engine's series: the autoscaler's query would find no series and read
    an empty result, never scaling out."""
    chosen = spec.kubernetes.queue_metric if spec.kubernetes else None
    engine = catalog.engine(spec.engine)
    others = {e.waiting_metric: e for e in catalog.engine_table.engines if e.name != engine.name}
    if chosen in others:
        yield Failure(
            f"queue_metric {chosen} is {others[chosen].label}'s, and the fleet runs {engine.label}",
            ("kubernetes", "queue_metric"),
            f"delete `queue_metric` (the engine's own, {engine.waiting_metric}, is the default)",
        )


@rule(Level.ERROR)
def engine_api_key(spec: InferenceSpec, catalog: Catalog) -> Iterator[Failure]:
    """auth api_key hands the server its key through the environment (vLLM's VLLM_API_KEY), never on the command
    line, where `ps` and `docker inspect` show it; SGLang takes it only as --api-key and trtllm-serve has no key."""
    engine = catalog.engine(spec.engine)
    if spec.access.auth == "api_key" and engine.api_key_env is None:
        yield Failure(
            f"{engine.label} cannot be given the API key outside its command line (access.auth api_key)",
            ("access", "auth"),
            "write `auth: none` with `scheme: internal` under access (the fleet then answers only inside the VPC), "
            "or `engine: vllm`",
        )


@rule(Level.ERROR)
def engine_adapters(spec: InferenceSpec) -> Iterator[Failure]:
    """LoRA adapters are launched with vLLM's multi-LoRA flags (engine.lora_flags); other engines are launched
    without them, so the adapters would not be served."""
    if spec.model.adapters and spec.engine != "vllm":
        yield Failure(
            f"{len(spec.model.adapters)} LoRA adapter(s) with engine {spec.engine}: the fleet launches adapters "
            "with vLLM's flags only",
            ("model", "adapters"),
            "write `engine: vllm`, or serve the adapters merged into the weights",
        )


@rule(Level.ERROR)
def engine_server_kind(spec: InferenceSpec) -> Iterator[Failure]:
    """A Neuron server is a build of vLLM; SGLang's and TensorRT-LLM's images drive NVIDIA GPUs only."""
    if spec.server_kind != "cuda" and spec.engine != "vllm":
        yield Failure(
            f"server_kind {spec.server_kind} with engine {spec.engine}, whose image runs on NVIDIA GPUs only",
            ("engine",),
            "write `engine: vllm` (a Neuron build of vLLM), or `server_kind: cuda` on a GPU instance type",
        )


__all__ = [
    "engine_adapters",
    "engine_api_key",
    "engine_image_mismatch",
    "engine_queue_metric_mismatch",
    "engine_server_kind",
]
