"""Google's validator rules for the managed Slurm path (`scheduler.type: slurm`, Cluster Director): what the
hypercomputecluster v1 API has no field for is refused here, by name, rather than built and left unattached or
silently dropped. Each message quotes the API's Discovery document (revision 20261021, as
google-api-python-client 2.202 ships it)."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.clouds.gcp.spec.training import GcpTrainingSpec
from gpuinfra.validators.base import Failure, Level, rule

API = "hypercomputecluster v1"
SWITCH = "or write `type: gke` under scheduler (GKE takes it)"


def _slurm(spec: GcpTrainingSpec) -> bool:
    return spec.scheduler.type == "slurm"


@rule(Level.ERROR)
def gcp_slurm_settings(spec: GcpTrainingSpec) -> Iterator[Failure]:
    """The Slurm path needs the cluster's ID (the API's `clusterId` has no default)."""
    if _slurm(spec) and spec.scheduler.slurm is None:
        yield Failure(
            "scheduler type slurm without its `slurm` settings: Cluster Director needs the cluster's ID",
            ("scheduler", "slurm"),
            "write `slurm: {cluster_id: <a letter, then up to 9 lower-case letters or digits>}` under scheduler",
        )


@rule(Level.ERROR)
def gcp_slurm_roce_vpc(spec: GcpTrainingSpec) -> Iterator[Failure]:
    """Cluster Director takes exactly one network: the stack's RoCE VPC could attach to none of its nodes."""
    if _slurm(spec) and spec.network.roce_vpc:
        yield Failure(
            f"network.roce_vpc with scheduler slurm: Cluster Director takes one network ({API} "
            'Cluster.networkResources: "Must contain exactly one value"), so a RoCE VPC of the stack\'s would be '
            "attached to no node",
            ("network", "roce_vpc"),
            "write `roce_vpc: false` under network (the nodes' MRDMA NICs are then Cluster Director's to attach), "
            + SWITCH,
        )


@rule(Level.ERROR)
def gcp_slurm_placement(spec: GcpTrainingSpec) -> Iterator[Failure]:
    """The API's compute resources take a machine type, a zone and how capacity is bought: no placement policy."""
    compute = spec.compute
    if _slurm(spec) and compute.placement == "compact" and compute.capacity.reservation is None:
        yield Failure(
            f"placement compact with scheduler slurm: a Cluster Director compute resource ({API} "
            "ComputeResourceConfig: new on-demand, spot, flex-start or reserved instances) takes no placement policy",
            ("compute", "placement"),
            "write `placement: none` under compute, or consume a dense reservation (its own placement keeps the "
            "nodes close), " + SWITCH,
        )


@rule(Level.ERROR)
def gcp_slurm_reservation_block(spec: GcpTrainingSpec) -> Iterator[Failure]:
    """Reserved instances name a whole reservation; v1 has no block."""
    reservation = spec.compute.capacity.reservation
    if _slurm(spec) and reservation is not None and "/reservationBlocks/" in reservation:
        yield Failure(
            f"reservation {reservation!r} names a block: a Cluster Director reserved-instances resource ({API} "
            "NewReservedInstancesConfig.reservation) names a whole reservation, "
            "projects/{project}/zones/{zone}/reservations/{reservation}",
            ("compute", "capacity", "reservation"),
            f"write `reservation: {reservation.split('/', 1)[0]}` under compute.capacity, " + SWITCH,
        )


@rule(Level.ERROR)
def gcp_slurm_job_template(spec: GcpTrainingSpec) -> Iterator[Failure]:
    """`job` is the JobSet template GKE's queue runs; a Slurm cluster runs what users submit with sbatch."""
    if _slurm(spec) and spec.job is not None:
        yield Failure(
            "job with scheduler slurm: the job section is the JobSet template of the GKE path; Cluster Director's "
            "Slurm runs what users submit from a login node",
            ("job",),
            "remove the `job` section (submit the trainer with sbatch from a login node: docs/gcp-slurm.md), " + SWITCH,
        )


__all__ = [
    "gcp_slurm_job_template",
    "gcp_slurm_placement",
    "gcp_slurm_reservation_block",
    "gcp_slurm_roce_vpc",
    "gcp_slurm_settings",
]
