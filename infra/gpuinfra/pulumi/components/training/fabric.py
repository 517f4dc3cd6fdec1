"""The NCCL / libfabric environment for a fabric: one function, used by the Slurm task prolog (AWS PCS) and the
Kubernetes job template, so both set the same variables.

EFA follows aws-ofi-nccl's own `doc/efa-env-var.md`: with libfabric >= 1.18 and aws-ofi-nccl >= 1.7 the plugin
configures libfabric itself, so FI_PROVIDER (only for aws-ofi-nccl <= 1.5.0), FI_EFA_USE_DEVICE_RDMA and
FI_EFA_FORK_SAFE ("not needed anymore") are not set. NCCL_NET_PLUGIN is not forced either: NCCL loads
`libnccl-net-<name>.so` for a name, and the EFA installer's plugin is `libnccl-net-ofi.so`, registered with the
loader; a wrong name falls back to sockets silently (NCCL environment variables, NCCL_NET_PLUGIN).
"""

from __future__ import annotations

from collections.abc import Sequence

SOCKET_IFNAME = "^docker,lo,veth"
"""NCCL's bootstrap and socket traffic: any interface but loopback and container bridges (awsome-distributed-
training's setting); the data path is EFA or InfiniBand."""


def nccl_environment(fabric: str, hcas: Sequence[str] = (), gpudirect_rdma: bool = True) -> dict[str, str]:
    env: dict[str, str] = {}
    if fabric == "infiniband":
        # NCCL env docs: NCCL_IB_HCA is prefix-matched ("mlx5_1" also selects mlx5_10, mlx5_11) unless it starts
        # with "=", so the compute rails are listed for exact match. NCCL picks GPUDirect RDMA from the PCI
        # topology itself: the level is only forced off (LOC) when the spec disables it.
        env = {"NCCL_IB_DISABLE": "0"}
        if not gpudirect_rdma:
            env["NCCL_NET_GDR_LEVEL"] = "LOC"
        if hcas:
            env["NCCL_IB_HCA"] = "=" + ",".join(hcas)
    elif fabric != "efa":
        env = {"NCCL_IB_DISABLE": "1"}
    env["NCCL_SOCKET_IFNAME"] = SOCKET_IFNAME
    env["NCCL_DEBUG"] = "WARN"
    return env


__all__ = ["SOCKET_IFNAME", "nccl_environment"]
