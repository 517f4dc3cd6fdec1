"""A Kubernetes training pod's size and its JobSet's restart budget.

One training pod fills one node: it requests what the kubelet leaves allocatable, less room for the node's
daemons, so it is never the kubelet's first eviction target (a pod without requests is BestEffort) and
`/dev/shm` (memory-backed, counted against the pod's memory) is inside its limit.
"""

from __future__ import annotations

import math

from gpuinfra.plan.memory import Plain

EVICTION_HARD_MIB = 100
"""kubelet's default hard eviction threshold, memory.available<100Mi (Kubernetes docs, Node-pressure Eviction)."""
MAX_PODS_CAP = 250
"""Max pods the EKS AMI sets on a node with more than 30 vCPUs (awslabs/amazon-eks-ami max-pods-calculator:
110 at 30 vCPUs or fewer, else 250); the same cap bounds an on-premises kubelet's reserve from above."""
KERNEL_SHARE = 0.05
"""Share of the nominal memory the kernel and firmware keep (MemTotal is below the instance's nominal size)."""
DAEMONSET_MILLICORES = 2000
DAEMONSET_MIB = 8192
"""Headroom for the node's daemons (CNI, kube-proxy, device plugins, feature discovery, CSI node, Pod Identity
agent): an estimate from their charts' requests with room to spare, not a published figure."""
SHM_MAX_MIB = 256 * 1024
RESTART_QUANTILE = 0.99
"""The JobSet's restart budget covers the interruptions of a run with this probability (Poisson)."""


class PodSize(Plain):
    cpu_millicores: int
    memory_mib: int
    shm_mib: int
    """/dev/shm (emptyDir medium Memory) size limit, within memory_mib."""


def kube_reserved_millicores(vcpus: int) -> int:
    """EKS AMI kube-reserved CPU (awslabs/amazon-eks-ami, nodeadm kubelet config): 6% of the first core,
    1% of the second, 0.5% of the third and fourth, 0.25% of every core above four."""
    tiers = ((1, 60.0), (1, 10.0), (2, 5.0))
    left, reserved = vcpus, 0.0
    for cores, millis in tiers:
        used = min(left, cores)
        reserved += used * millis
        left -= used
    return math.ceil(reserved + max(left, 0) * 2.5)


def kube_reserved_mib(max_pods: int) -> int:
    """EKS AMI kube-reserved memory: 11 MiB per pod the node may run plus 255 MiB."""
    return 11 * max_pods + 255


def pod_size(vcpus: int, memory_gib: float, max_pods: int = MAX_PODS_CAP) -> PodSize:
    """What one node's training pod requests (and is limited to: Guaranteed QoS)."""
    cpu = vcpus * 1000 - kube_reserved_millicores(vcpus) - DAEMONSET_MILLICORES
    memory = (
        math.floor(memory_gib * 1024 * (1 - KERNEL_SHARE))
        - kube_reserved_mib(max_pods)
        - EVICTION_HARD_MIB
        - DAEMONSET_MIB
    )
    if cpu <= 0 or memory <= 0:
        raise ValueError(f"a {vcpus}-vCPU, {memory_gib:g} GiB node leaves nothing for a training pod")
    cpu = cpu // 1000 * 1000  # whole cores: the static CPU manager pins only integer requests
    memory = memory // 1024 * 1024
    return PodSize(cpu_millicores=cpu, memory_mib=memory, shm_mib=min(SHM_MAX_MIB, memory // 4 // 1024 * 1024))


def pod_size_from_allocatable(cpu_millicores: int, memory_mib: int) -> PodSize:
    """What one node's training pod requests when the site gives its nodes' allocatable (status.allocatable, which
    already excludes kube-reserved, system-reserved and the eviction threshold: Kubernetes, "Reserve Compute
    Resources for System Daemons"): that less the room for the node's daemons, whole cores and GiB."""
    cpu = (cpu_millicores - DAEMONSET_MILLICORES) // 1000 * 1000
    memory = (memory_mib - DAEMONSET_MIB) // 1024 * 1024
    if cpu <= 0 or memory <= 0:
        raise ValueError(f"allocatable {cpu_millicores}m CPU, {memory_mib} MiB leaves nothing for a training pod")
    return PodSize(cpu_millicores=cpu, memory_mib=memory, shm_mib=min(SHM_MAX_MIB, memory // 4 // 1024 * 1024))


def restart_budget(interruptions_per_hour: float, run_hours: float, quantile: float = RESTART_QUANTILE) -> int:
    """The smallest k with P(N <= k) >= quantile for N ~ Poisson(rate x run): each interruption restarts
    the whole JobSet once, so a budget below this ends the run early with that probability."""
    mean = interruptions_per_hour * run_hours
    if mean <= 0:
        return 1
    if mean > 600:  # exp(-mean) underflows; the normal approximation is exact enough there
        return math.ceil(mean + 2.33 * math.sqrt(mean))
    k, term = 0, math.exp(-mean)
    total = term
    while total < quantile:
        k += 1
        term *= mean / k
        total += term
    return max(k, 1)


__all__ = [
    "DAEMONSET_MIB",
    "DAEMONSET_MILLICORES",
    "EVICTION_HARD_MIB",
    "KERNEL_SHARE",
    "MAX_PODS_CAP",
    "PodSize",
    "kube_reserved_mib",
    "kube_reserved_millicores",
    "pod_size",
    "pod_size_from_allocatable",
    "restart_budget",
]
