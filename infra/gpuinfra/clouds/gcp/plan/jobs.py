"""The trainer pod on a GKE node: what one node's pod may request, from GKE's node allocatable rather than the EKS
AMI's reservations (plan/jobs.py), and the JobSet's restart budget from the same interruption rate the planner
uses for checkpoints.

GKE reserves for the kubelet and the system, per node (GKE docs, "Standard cluster architecture", Node allocatable
resources): memory 25% of the first 4 GiB, 20% of the next 4 GiB, 10% of the next 8 GiB, 6% of the next 112 GiB
and 2% above 128 GiB, plus a 100 MiB eviction threshold; CPU 6% of the first core, 1% of the next, 0.5% of the
next 2 and 0.25% of every core above 4."""

from __future__ import annotations

import math
from typing import Any

from gpuinfra.clouds.gcp.spec.training import GcpTrainingSpec
from gpuinfra.plan.checkpoint import mean_time_between_interruptions
from gpuinfra.plan.jobs import pod_size_from_allocatable, restart_budget

MEMORY_RESERVED = ((4, 0.25), (4, 0.20), (8, 0.10), (112, 0.06), (float("inf"), 0.02))
"""(GiB in the band, share reserved), from the first GiB up."""
CPU_RESERVED = ((1, 0.06), (1, 0.01), (2, 0.005), (float("inf"), 0.0025))
"""(cores in the band, share reserved), from the first core up."""
EVICTION_MIB = 100
SYSTEM_POD_SECONDS = 15
"""Of a Spot node's notice, what GKE's kubelet keeps for system pods: on a best-effort basis non-system pods get the
first 15 s of the 30 s, critical system pods the last 15 (GKE docs, concepts "Spot VMs", Termination and graceful
shutdown of Spot VMs; GKE 1.35 lets a node system configuration stretch the period to 120 s, not used here). A
trainer's terminationGracePeriodSeconds is cut to its share."""
SIGNAL_MARGIN_SECONDS = 5
"""Of the trainer's share, what the checkpoint window leaves for SIGTERM to reach the ranks through torchrun before
the kubelet kills the pod. A choice: torchrun's own 30 s shutdown cannot fit in a 15 s share."""


def _reserved(total: float, bands: tuple[tuple[float, float], ...]) -> float:
    reserved, left = 0.0, total
    for width, share in bands:
        taken = min(left, width)
        reserved += taken * share
        left -= taken
    return reserved


def gke_allocatable(vcpus: int, memory_gib: float) -> tuple[int, int]:
    """A GKE node's allocatable (millicores, MiB): its capacity less GKE's reservations and eviction threshold."""
    cpu = vcpus * 1000 - round(_reserved(vcpus, CPU_RESERVED) * 1000)
    memory = int(memory_gib * 1024 - _reserved(memory_gib, MEMORY_RESERVED) * 1024) - EVICTION_MIB
    return cpu, memory


def spot_stop(write_seconds: float | None, notice_seconds: int) -> tuple[int, int]:
    """(checkpoint window, terminationGracePeriodSeconds) of a trainer on Spot nodes: the grace is the pod's share
    of the notice, the window the planner's checkpoint write time within that share less the signal margin, so the
    deadline the preStop hook writes is one the pod can meet. A checkpoint longer than the window cannot finish (the
    validator gcp-checkpoint-past-spot-notice says so): the trainer falls back to its last periodic checkpoint."""
    grace = notice_seconds - SYSTEM_POD_SECONDS
    budget = grace - SIGNAL_MARGIN_SECONDS
    if budget < 1:
        raise ValueError(f"a {notice_seconds} s notice leaves no checkpoint window after GKE's system pods' share")
    window = budget if write_seconds is None else max(1, min(budget, math.ceil(write_seconds)))
    return window, grace


def job_fields(
    spec: GcpTrainingSpec, vcpus: int, memory_gib: float, spot_nodes: int, spot_rate: float
) -> dict[str, Any]:
    """The plan's job_pod and job_max_restarts (None without a job section)."""
    if spec.job is None:
        return {"job_pod": None, "job_max_restarts": None}
    pod = pod_size_from_allocatable(*gke_allocatable(vcpus, memory_gib))
    hours = mean_time_between_interruptions(
        spec.compute.node_count, spot_nodes, spec.failure.node_mtbf_hours, spot_rate
    )
    return {"job_pod": pod, "job_max_restarts": restart_budget(1.0 / hours, spec.job.run_days * 24)}


__all__ = [
    "CPU_RESERVED",
    "EVICTION_MIB",
    "MEMORY_RESERVED",
    "SIGNAL_MARGIN_SECONDS",
    "SYSTEM_POD_SECONDS",
    "gke_allocatable",
    "job_fields",
    "spot_stop",
]
