"""The NCCL / libfabric environment for a fabric: one function, used by the node bootstrap (Slurm) and
the Kubernetes job template, so both set the same variables."""

from __future__ import annotations

from collections.abc import Sequence


def nccl_environment(fabric: str, hcas: Sequence[str] = (), gpudirect_rdma: bool = True) -> dict[str, str]:
    if fabric == "efa":
        env = {
            "FI_PROVIDER": "efa",
            "FI_EFA_USE_DEVICE_RDMA": "1",
            "FI_EFA_FORK_SAFE": "1",
            "NCCL_NET_PLUGIN": "aws-ofi",
        }
    elif fabric == "infiniband":
        # NCCL env docs: NCCL_IB_HCA is prefix-matched ("mlx5_1" also selects mlx5_10, mlx5_11) unless it starts
        # with "=", so the compute rails are listed for exact match. NCCL picks GPUDirect RDMA from the PCI
        # topology itself: the level is only forced off (LOC) when the spec disables it.
        env = {"NCCL_IB_DISABLE": "0"}
        if not gpudirect_rdma:
            env["NCCL_NET_GDR_LEVEL"] = "LOC"
        if hcas:
            env["NCCL_IB_HCA"] = "=" + ",".join(hcas)
    else:
        env = {"NCCL_IB_DISABLE": "1"}
    env["NCCL_SOCKET_IFNAME"] = "^lo,docker"
    env["NCCL_DEBUG"] = "WARN"
    return env


__all__ = ["nccl_environment"]
