"""Storage: Lustre capacity increments and the buckets training reads and writes."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.plan import TrainingPlan
from gpuinfra.spec import TrainingSpec
from gpuinfra.validators.base import Failure, Level, rule


def bucket_of(uri: str) -> str:
    return uri.removeprefix("s3://").split("/", 1)[0]


@rule(Level.INFO)
def lustre_capacity_rounded(spec: TrainingSpec, plan: TrainingPlan) -> Iterator[Failure]:
    """FSx for Lustre only takes 1,200 GiB, 2,400 GiB, then 2,400 GiB steps."""
    if spec.lustre and plan.lustre_capacity_gib and plan.lustre_capacity_gib != spec.lustre.storage_capacity_gib:
        yield Failure(
            f"storage_capacity_gib {spec.lustre.storage_capacity_gib} is not a valid FSx size; "
            f"{plan.lustre_capacity_gib} GiB will be created",
            ("lustre", "storage_capacity_gib"),
            f"set storage_capacity_gib: {plan.lustre_capacity_gib}",
        )


@rule(Level.ERROR)
def export_bucket_is_dataset_bucket(spec: TrainingSpec) -> Iterator[Failure]:
    """The stack creates the checkpoint bucket; it cannot be the (existing) dataset bucket."""
    if spec.lustre and bucket_of(spec.lustre.import_path) == bucket_of(spec.lustre.export_path):
        yield Failure(
            f"import_path and export_path share bucket {bucket_of(spec.lustre.import_path)!r}",
            ("lustre", "export_path"),
            "export checkpoints to their own bucket (it is created, versioned and expired by this stack)",
        )


@rule(Level.WARNING)
def no_parallel_file_system(spec: TrainingSpec) -> Iterator[Failure]:
    """Training reads its dataset through a parallel file system; without one, GPUs wait on S3."""
    if spec.lustre is None and spec.site_lustre is None:
        yield Failure("no Lustre file system configured", (), "add lustre (aws) or site_lustre (onprem)")


__all__ = ["bucket_of", "export_bucket_is_dataset_bucket", "lustre_capacity_rounded", "no_parallel_file_system"]
