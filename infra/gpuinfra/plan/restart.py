"""The time one interruption costs besides rework, from its parts: noticing the failure, replacing the node,
starting the processes again, reading the last checkpoint back, and the first step's warm-up.

restart = detection + replacement + process start (grows with the GPUs) + checkpoint read (checkpoint bytes over
the file system's aggregate read bandwidth, capped by the nodes' network) + warm-up. Each part is a default with
its source below; `run.restart_minutes` replaces the sum with a measured figure.

Read once: MegaScale's recovery has one worker of each data-parallel group read the state from HDFS and broadcast
it to the others (Jiang et al., NSDI 2024), as Megatron-LM's fully parallel load does, so the file system serves
the checkpoint's size, not a copy per data-parallel replica.
"""

from __future__ import annotations

from gpuinfra.plan.memory import Plain

DETECTION_SECONDS = 300.0
"""Until the scheduler marks a dead node DOWN: Slurm's SlurmdTimeout default ("The interval, in seconds, that the
Slurm controller waits for slurmd to respond before configuring that node's state to DOWN ... The default value is
300 seconds", slurm.conf(5)). A crashed process is seen sooner, a hung collective later (PyTorch's default NCCL
process-group timeout, 10 minutes); MegaScale (Jiang et al., NSDI 2024) reports detection plus diagnostic tests
within 10 minutes."""
DETECTION_SOURCE = (
    "Slurm slurm.conf(5) SlurmdTimeout default 300 s; MegaScale (NSDI 2024): detect and diagnose < 10 min"
)

START_SECONDS_PER_GPU = 30.0 / 12_288
"""Process start and communicator set-up grow with the GPUs: MegaScale (Jiang et al., NSDI 2024) brought job
initialization to 5 s on 2,048 GPUs and about 30 s on more than 10,000 (12,288 in its runs); 30 s / 12,288 GPUs
also gives 5.0 s at 2,048. That is a tuned stack (non-blocking store, fewer global barriers); the same paper measured
1,047 s on 2,048 GPUs before the change, so a stock stack can take far longer: measure and set run.restart_minutes."""
START_SOURCE = "MegaScale (NSDI 2024): job init 5 s on 2,048 GPUs, ~30 s on >10,000 GPUs (tuned; 1,047 s before)"

WARMUP_SOURCE = (
    "stand-in: catalog serving.yaml engine_init_cached_seconds (an 8B vLLM engine's start with its compile and JIT "
    "caches on disk, as a restarted trainer finds them on shared storage); no published training first-step figure"
)
REPLACEMENT_SOURCE = "catalog serving.yaml boot_seconds: a replacement instance boots (RunInstances to a booted OS)"


class RestartParts(Plain):
    """The parts a restart is derived from, each with where it came from."""

    detection_seconds: float = DETECTION_SECONDS
    replacement_seconds: float
    start_seconds_per_gpu: float = START_SECONDS_PER_GPU
    warmup_seconds: float
    checkpoint_gb: float
    filesystem_read_gb_s: float
    """Aggregate read bandwidth of the file system the checkpoint lives on (FSx: throughput per TiB x capacity)."""
    node_network_gb_s: float
    """One node's network bandwidth, GB/s: n nodes read at most n times it."""
    sources: list[str] = []


class RestartTime(Plain):
    """One interruption's restart at a node count, part by part (or the spec's measured figure)."""

    nodes: int
    detection_seconds: float
    replacement_seconds: float
    process_start_seconds: float
    checkpoint_read_seconds: float
    read_gb_s: float
    """The read bandwidth the checkpoint came back at: the file system's, or the nodes' network when lower."""
    warmup_seconds: float
    total_seconds: float
    measured: bool = False
    """run.restart_minutes replaced the derived sum."""


def restart_time(parts: RestartParts, nodes: int, gpus_per_node: int) -> RestartTime:
    """The derived restart on `nodes`. Per node-hour lost it never falls as nodes grow (the read time falls only
    while the nodes' network, not the file system, is the cap), which the run sweep's early stop relies on."""
    read_gb_s = min(parts.filesystem_read_gb_s, nodes * parts.node_network_gb_s)
    start = parts.start_seconds_per_gpu * nodes * gpus_per_node
    read = parts.checkpoint_gb / read_gb_s
    total = parts.detection_seconds + parts.replacement_seconds + start + read + parts.warmup_seconds
    return RestartTime(
        nodes=nodes,
        detection_seconds=parts.detection_seconds,
        replacement_seconds=parts.replacement_seconds,
        process_start_seconds=start,
        checkpoint_read_seconds=read,
        read_gb_s=read_gb_s,
        warmup_seconds=parts.warmup_seconds,
        total_seconds=total,
    )


def measured_restart(minutes: float, nodes: int) -> RestartTime:
    """The spec's own restart time: no parts, the whole figure."""
    return RestartTime(
        nodes=nodes,
        detection_seconds=0.0,
        replacement_seconds=0.0,
        process_start_seconds=0.0,
        checkpoint_read_seconds=0.0,
        read_gb_s=0.0,
        warmup_seconds=0.0,
        total_seconds=minutes * 60.0,
        measured=True,
    )


__all__ = [
    "DETECTION_SECONDS",
    "DETECTION_SOURCE",
    "REPLACEMENT_SOURCE",
    "START_SECONDS_PER_GPU",
    "START_SOURCE",
    "WARMUP_SOURCE",
    "RestartParts",
    "RestartTime",
    "measured_restart",
    "restart_time",
]
