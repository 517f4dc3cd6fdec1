"""Slurm on AWS (AWS PCS): pinned node images, a region PCS serves, a cluster size PCS offers, a Capacity Block
that has not ended, and a Lustre file system that holds the dataset share, the kept checkpoints and headroom."""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterator

from gpuinfra.catalog import Catalog
from gpuinfra.clouds.aws.catalog.pcs import pcs_regions
from gpuinfra.plan import TrainingPlan
from gpuinfra.plan.pcs import LUSTRE_HEADROOM, PCS_SIZES, lustre_need_gib
from gpuinfra.plan.training import LOGIN_NODES
from gpuinfra.spec import TrainingSpec
from gpuinfra.validators.base import Failure, Level, rule
from gpuinfra.validators.images import image_problem

GB_PER_GIB = 1024**3 / 1e9


def _nearest(region: str, codes: frozenset[str] | set[str] | list[str] | tuple[str, ...]) -> str:
    """A region to suggest instead of `region`: the first on the same continent prefix (eu-, ap-, us-...), by name."""
    same = sorted(c for c in codes if c.split("-")[0] == region.split("-")[0])
    return (same or sorted(codes) or ["us-east-1"])[0]


def _pcs(spec: TrainingSpec) -> bool:
    return spec.provider == "aws" and spec.scheduler.type == "slurm"


@rule(Level.ERROR)
def image_not_pinned(spec: TrainingSpec) -> Iterator[Failure]:
    """Training nodes boot one pinned image: a node replaced mid-run must bring the driver, NCCL and EFA stack
    its peers have (AWS PCS node groups; EKS node groups pin their AMI release: eks-node-release-unknown)."""
    if spec.provider != "aws" or not _pcs(spec):
        return
    if spec.compute.image_id is None:
        yield Failure(
            "compute.image_id is required for AWS PCS nodes: an AMI with the PCS agent and Slurm",
            ("compute", "image_id"),
            "set an AMI id (e.g. from `aws ec2 describe-images --owners amazon --filters "
            "'Name=name,Values=aws-pcs-sample_ami-*'`), or resolve:ssm:<parameter>:<version>",
        )
        return
    problem = image_problem(spec.compute.image_id)
    if problem:
        yield Failure(
            f"compute.image_id is not pinned: {problem}",
            ("compute", "image_id"),
            "set an AMI id with the PCS agent and Slurm (e.g. from `aws ec2 describe-images --owners amazon "
            "--filters 'Name=name,Values=aws-pcs-sample_ami-*'`), or resolve:ssm:<parameter>:<version>",
        )


@rule(Level.ERROR)
def pcs_region_unsupported(spec: TrainingSpec) -> Iterator[Failure]:
    """AWS PCS runs in the regions its endpoints table lists (catalog data pcs.yaml, cited)."""
    regions = pcs_regions()
    if _pcs(spec) and spec.region and spec.region not in regions.codes:
        yield Failure(
            f"AWS PCS has no endpoint in {spec.region} (per {regions.source}, as of {regions.as_of})",
            ("region",),
            f"write a PCS region, e.g. `region: {_nearest(spec.region, regions.codes)}` (PCS serves "
            f"{', '.join(sorted(regions.codes))}), or `type: kubernetes` under scheduler",
        )


@rule(Level.ERROR)
def pcs_cluster_too_large(spec: TrainingSpec, plan: TrainingPlan) -> Iterator[Failure]:
    """The largest AWS PCS cluster manages 2,048 compute nodes (login nodes included)."""
    most = PCS_SIZES[-1][1]
    if _pcs(spec) and plan.pcs_size is None:
        yield Failure(
            f"{plan.nodes} nodes and {LOGIN_NODES} login node exceed the {most} nodes of a LARGE AWS PCS cluster",
            ("compute", "node_count"),
            f"write `node_count: {most - LOGIN_NODES}` (the most a cluster takes) under compute, or split the work "
            "over clusters",
        )


@rule(Level.ERROR)
def capacity_block_over(spec: TrainingSpec, plan: TrainingPlan) -> Iterator[Failure]:
    """A Capacity Block whose last checkpoint time has passed gives the cluster no time to run."""
    at = plan.block_checkpoint_at
    if at is not None and at <= datetime.datetime.now(datetime.UTC):
        yield Failure(
            f"the capacity block's nodes must checkpoint and drain at {at:%Y-%m-%d %H:%M} UTC, which has passed",
            ("compute", "capacity", "block_end"),
            "buy a new block and write its `capacity_reservation_id` and `block_end` under compute.capacity, or "
            "`type: on_demand` under compute.capacity",
        )


@rule(Level.ERROR)
def elastic_partition_unsupported(spec: TrainingSpec) -> Iterator[Failure]:
    """Elastic spot nodes are a partition of their own beside the gang: built for Slurm on AWS (a PCS queue over a
    spot node group scaled from none), under a name that is not the gang's."""
    elastic = spec.compute.elastic
    if elastic is None:
        return
    if not _pcs(spec):
        yield Failure(
            "compute.elastic is built for Slurm on AWS (AWS PCS) only",
            ("compute", "elastic"),
            "remove `compute.elastic`; on Kubernetes run the side jobs from another Kueue LocalQueue of the cluster",
        )
    elif elastic.partition == spec.scheduler.partition:
        yield Failure(
            f"compute.elastic.partition {elastic.partition!r} is the gang's partition (scheduler.partition)",
            ("compute", "elastic", "partition"),
            "write `partition: elastic` under compute.elastic",
        )


@rule(Level.ERROR)
def lustre_too_small(spec: TrainingSpec, plan: TrainingPlan, catalog: Catalog) -> Iterator[Failure]:
    """Lustre must hold the dataset share, the kept checkpoints plus the one being written, and headroom:
    nothing else prunes it."""
    lustre, ckpt, capacity = spec.lustre, spec.checkpointing, plan.lustre_capacity_gib
    if lustre is None or ckpt is None or ckpt.target != "lustre" or capacity is None:
        return
    checkpoint_gib = ckpt.size_gib or plan.memory.total_bytes / 1024**3
    need = lustre_need_gib(lustre.dataset_gib or 0.0, checkpoint_gib, ckpt.keep_last)
    if need > capacity:
        efa_tier = lustre.throughput_mb_s_per_tib if plan.lustre_efa else None
        next_size = catalog.fsx_capacity_gib(math.ceil(need), efa_tier)
        dataset = f"{lustre.dataset_gib:,.0f} GiB of dataset, " if lustre.dataset_gib else ""
        yield Failure(
            f"Lustre needs {need:,.0f} GiB ({dataset}{ckpt.keep_last} + 1 checkpoints of {checkpoint_gib:,.0f} GiB, "
            f"{LUSTRE_HEADROOM:.0%} headroom) but has {capacity:,} GiB",
            ("lustre", "storage_capacity_gib"),
            f"write `storage_capacity_gib: {next_size}` (the next size FSx takes above {math.ceil(need)}) under "
            "lustre, or lower checkpointing.keep_last",
        )


@rule(Level.WARNING)
def lustre_dataset_share_unknown(spec: TrainingSpec) -> Iterator[Failure]:
    """Without the dataset share, Lustre is sized for checkpoints alone."""
    if spec.provider == "aws" and spec.lustre is not None and spec.lustre.dataset_gib is None:
        yield Failure(
            "lustre.dataset_gib is not set: the file system is checked for checkpoints and headroom only",
            ("lustre", "dataset_gib"),
            "write `dataset_gib: <GiB>` under lustre: the part of the dataset held on Lustre at once",
        )


__all__ = [
    "capacity_block_over",
    "elastic_partition_unsupported",
    "image_not_pinned",
    "lustre_dataset_share_unknown",
    "lustre_too_small",
    "pcs_cluster_too_large",
    "pcs_region_unsupported",
]
