"""A replica's cold start, stage by stage: what a scale-out waits before the new replica serves.

Stages of a fresh launch: boot, server image pull, weights from the region's registry replica (at the
instance's *baseline* network bandwidth, capped by the root volume's throughput, which they are written to),
the server reading the weights from the root volume, and vLLM's engine start (torch.compile, JIT kernels and
CUDA-graph capture). The image pull is the slower of its bandwidth bound and the measured seconds per GB:
pulling a multi-GB image is bound by decompressing and writing its layers, not by the network (catalog
image_pull_seconds_per_gb). The engine starts cold unless the spec says its compile caches ship with the image
or volume (cold_start.compile_cache). A warm-pool instance resumed from Stopped has image and weights on its
root volume already: it pays boot, the weights read and the engine start. Figures come from the catalog
(serving.yaml, with sources); a measured value in the spec replaces the model.
"""

from __future__ import annotations

from gpuinfra.catalog import Catalog, InstanceType
from gpuinfra.plan.memory import Plain

ROOT_VOLUME_THROUGHPUT_MIB_S = 500
"""gp3 throughput the replicas' launch template provisions (gp3 allows 125-1,000 MiB/s; EBS user guide)."""
GB = 1e9


class ColdStart(Plain):
    boot_seconds: float
    image_pull_seconds: float
    weights_download_seconds: float
    weights_read_seconds: float
    engine_init_seconds: float
    engine_cached_seconds: float = 0.0
    """The engine start with compile caches on disk: what cold_start.compile_cache would make of it."""
    compile_cache: bool = False
    total_seconds: float
    """Fresh launch to healthy (or the measured value)."""
    resume_seconds: float
    """Warm-pool instance (Stopped) to healthy: boot, weights read, engine start."""
    measured: bool
    download_gb_s: float


def volume_gb_s() -> float:
    return ROOT_VOLUME_THROUGHPUT_MIB_S * 2**20 / GB


def cold_start(
    info: InstanceType,
    weights_bytes: int,
    catalog: Catalog,
    download_gb_s: float | None = None,
    measured_seconds: float | None = None,
    compile_cache: bool = False,
) -> ColdStart:
    """The modelled cold start of `info` for `weights_bytes` of weights (or the measured one)."""
    network = info.network_baseline_gbps / 8
    rate = min(download_gb_s or network, volume_gb_s())
    boot = catalog.serving_figure("boot_seconds").value
    image_gb = catalog.serving_figure("server_image_gb").value
    image = image_gb * max(catalog.serving_figure("image_pull_seconds_per_gb").value, 1 / rate)
    download = weights_bytes / GB / rate
    read = weights_bytes / GB / volume_gb_s()
    cached = catalog.serving_figure("engine_init_cached_seconds").value
    engine = cached if compile_cache else catalog.serving_figure("engine_init_seconds").value
    modelled = boot + image + download + read + engine
    resume = boot + read + engine
    return ColdStart(
        boot_seconds=boot,
        image_pull_seconds=image,
        weights_download_seconds=download,
        weights_read_seconds=read,
        engine_init_seconds=engine,
        engine_cached_seconds=cached,
        compile_cache=compile_cache,
        total_seconds=measured_seconds if measured_seconds is not None else modelled,
        resume_seconds=min(resume, measured_seconds) if measured_seconds is not None else resume,
        measured=measured_seconds is not None,
        download_gb_s=rate,
    )


__all__ = ["ROOT_VOLUME_THROUGHPUT_MIB_S", "ColdStart", "cold_start", "volume_gb_s"]
