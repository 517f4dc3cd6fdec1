"""Storage: Lustre capacity increments and the buckets training reads and writes."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.catalog import Catalog
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
            f"write `storage_capacity_gib: {plan.lustre_capacity_gib}` under lustre",
        )


@rule(Level.ERROR)
def export_bucket_is_dataset_bucket(spec: TrainingSpec) -> Iterator[Failure]:
    """The stack creates the checkpoint bucket; it cannot be the (existing) dataset bucket."""
    if spec.lustre and bucket_of(spec.lustre.import_path) == bucket_of(spec.lustre.export_path):
        yield Failure(
            f"import_path and export_path share bucket {bucket_of(spec.lustre.import_path)!r}",
            ("lustre", "export_path"),
            f"write `export_path: s3://{spec.name}-checkpoints/checkpoints/` under lustre: a bucket of their own (the "
            "stack creates, versions and expires it)",
        )


@rule(Level.ERROR)
def lustre_efa_without_efa_nodes(spec: TrainingSpec, plan: TrainingPlan, catalog: Catalog) -> Iterator[Failure]:
    """An EFA-enabled file system is for nodes that mount it over EFA: the compute nodes must carry EFA
    interfaces (an EFA instance type on interconnect efa) and be of a family FSx serves over EFA (Nitro v4 or later,
    not trn2: FSx for Lustre User Guide, "Working with EFA-enabled file systems", prerequisites). Otherwise the
    nodes reach it over TCP only, and EFA buys nothing but fixes the throughput tier and coarsens the capacity."""
    if spec.lustre is None or not spec.lustre.efa:
        return
    info = catalog.instance(spec.compute.instance_type)
    family = info.family if info else "?"
    if plan.efa_interfaces_per_node == 0:
        why = (
            f"{spec.compute.instance_type} has no EFA"
            if info is None or info.efa_interfaces == 0
            else f"interconnect.type is {spec.interconnect.type}, so the nodes get no EFA interfaces"
        )
    elif family in catalog.fsx_efa.excluded_families:
        why = f"FSx for Lustre serves no EFA clients of the {family} family"
    else:
        return
    yield Failure(
        f"lustre.efa is on but the nodes that mount it cannot use it: {why}",
        ("lustre", "efa"),
        "write `efa: false` under lustre (or remove it): the nodes mount over TCP",
    )


@rule(Level.WARNING)
def lustre_efa_clients_not_set_up(spec: TrainingSpec) -> Iterator[Failure]:
    """An EFA-enabled file system on EKS: this stack sets up EFA clients only on Slurm (AWS PCS) nodes, so EKS
    nodes mount it over TCP, while its throughput tier stays fixed and its capacity comes in EFA steps."""
    if spec.lustre is not None and spec.lustre.efa and spec.scheduler.type == "kubernetes":
        yield Failure(
            "lustre.efa is on but EKS nodes are not set up as EFA clients here: they mount over TCP",
            ("lustre", "efa"),
            "write `efa: false` under lustre, or set the nodes up with the FSx guide's configure-efa-fsx-lustre-client "
            "yourself",
        )


@rule(Level.WARNING)
def no_parallel_file_system(spec: TrainingSpec) -> Iterator[Failure]:
    """Training reads its dataset through a parallel file system; without one, GPUs wait on S3."""
    if spec.lustre is None and spec.site_lustre is None:
        yield Failure(
            "no Lustre file system configured",
            (),
            "add a `lustre` section (aws: FSx for Lustre, `gpuinfra init training` writes one) or `site_lustre` "
            "(onprem)",
        )


__all__ = [
    "bucket_of",
    "export_bucket_is_dataset_bucket",
    "lustre_capacity_rounded",
    "lustre_efa_clients_not_set_up",
    "lustre_efa_without_efa_nodes",
    "no_parallel_file_system",
]
