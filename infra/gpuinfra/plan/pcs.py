"""AWS PCS facts the planner derives from the spec: the controller size a node count needs, when a Capacity
Block's nodes must checkpoint and drain, and how much Lustre the checkpoints it keeps take.

Sizes: AWS PCS API Reference, Cluster.size ("SMALL: 32 compute nodes and 256 jobs; MEDIUM: 512 compute nodes and
8192 jobs; LARGE: 2048 compute nodes and 16,384 jobs",
https://docs.aws.amazon.com/pcs/latest/APIReference/API_Cluster.html).
NCCL acceptance: nccl-tests doc/PERFORMANCE.md (NVIDIA/nccl-tests): all-reduce bus bandwidth is
busbw = algbw * 2(n-1)/n, "comparable with the hardware peak bandwidth, independently of the number of ranks"; in a
ring that crosses every node once per channel, the channels' inter-node legs share the node's network, so its rate
bounds busbw across nodes.
Capacity Blocks: EC2 User Guide, "Capacity Blocks for ML" (EC2 begins terminating the block's instances 30 minutes
before the block's end time, https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-using.html).
"""

from __future__ import annotations

import datetime
import math

PCS_SIZES: tuple[tuple[str, int], ...] = (("SMALL", 32), ("MEDIUM", 512), ("LARGE", 2048))
"""(size, most compute nodes it manages), smallest first."""
BLOCK_RECLAIM_LEAD = datetime.timedelta(minutes=30)
"""EC2 starts terminating a Capacity Block's instances this long before the block ends."""
BLOCK_DRAIN_MARGIN = datetime.timedelta(minutes=10)
"""Slack between the last checkpoint finishing and EC2's first termination."""
LUSTRE_HEADROOM = 0.2
"""Share of the file system kept free beyond dataset and checkpoints: the checkpoint being written while the
oldest kept one still exists is already counted; this covers logs, lazily imported files and the slowdown of
nearly full OSTs (our margin, not an AWS figure)."""

ACCEPTANCE_SHARE = 0.6
"""Share of the network's line rate the NCCL acceptance job must reach as all-reduce bus bandwidth at its largest
message size. gpuinfra's threshold, not an AWS figure: a healthy EFA fabric gets close to line rate at 8 GiB, while a
missing EFA device, NCCL falling back to sockets or one slow node lands far below it."""


def busbw_ceiling_gb_s(network_gbps: float) -> float:
    """The most all-reduce bus bandwidth a multi-node ring reaches per rank: the node's network rate, in GB/s (the
    unit nccl-tests prints, 1e9 bytes per second)."""
    return network_gbps / 8


def acceptance_floor_gb_s(network_gbps: float) -> float:
    """The bus bandwidth below which the acceptance job fails the fabric (one decimal, as nccl-tests prints it)."""
    return round(busbw_ceiling_gb_s(network_gbps) * ACCEPTANCE_SHARE, 1)


def cluster_size(nodes: int) -> str | None:
    """The smallest PCS size that manages `nodes` compute nodes (login nodes included); None past LARGE."""
    for size, most in PCS_SIZES:
        if nodes <= most:
            return size
    return None


def block_checkpoint_at(block_end: datetime.datetime, write_seconds: float) -> datetime.datetime:
    """When the nodes of a Capacity Block must start their last checkpoint: EC2's reclaim lead, the time one
    checkpoint takes to write and a margin before the block's end."""
    end = block_end if block_end.tzinfo else block_end.replace(tzinfo=datetime.UTC)
    return end - BLOCK_RECLAIM_LEAD - BLOCK_DRAIN_MARGIN - datetime.timedelta(seconds=math.ceil(write_seconds))


def lustre_need_gib(dataset_gib: float, checkpoint_gib: float, kept: int) -> float:
    """Lustre a cluster needs: the dataset share, the kept checkpoints plus the one being written, and headroom."""
    return (dataset_gib + checkpoint_gib * (kept + 1)) / (1 - LUSTRE_HEADROOM)


__all__ = [
    "ACCEPTANCE_SHARE",
    "BLOCK_DRAIN_MARGIN",
    "BLOCK_RECLAIM_LEAD",
    "LUSTRE_HEADROOM",
    "PCS_SIZES",
    "acceptance_floor_gb_s",
    "block_checkpoint_at",
    "busbw_ceiling_gb_s",
    "cluster_size",
    "lustre_need_gib",
]
