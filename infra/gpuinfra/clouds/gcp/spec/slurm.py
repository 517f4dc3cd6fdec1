"""The managed Slurm path on Google Cloud (`scheduler.type: slurm`): a Cluster Director cluster
(`hypercomputecluster.Cluster`, hypercomputecluster v1), the analogue of AWS PCS. Google runs the Slurm
controller; the stack names the login nodes, one nodeset of the cluster's GPU nodes and its partition, and hands
the cluster its own network, Managed Lustre, Filestore and buckets to mount.

The names follow the API's rules (hypercomputecluster v1 Discovery document and pulumi-gcp 9.37's
hypercomputecluster.Cluster): a cluster ID "must start with a lowercase letter, use only lowercase letters and
numbers, and be at most 10 characters long"; a nodeset ID likewise "up to 15 characters"; a partition ID
"Must conform to RFC-1034"; a login node's boot disk "must be at least 40 GB". Login nodes take only "N2 standard
machine types with 32 or fewer vCPUs" (cloud.google.com/cluster-director/docs/compute)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from gpuinfra.spec.base import SpecModel, updates

LoginMachineType = Literal["n2-standard-2", "n2-standard-4", "n2-standard-8", "n2-standard-16", "n2-standard-32"]


class GcpSlurmLogin(SpecModel):
    """The login nodes users reach over SSH and submit jobs from."""

    machine_type: LoginMachineType = Field("n2-standard-8", json_schema_extra=updates("replace"))
    """An N2 standard machine type of at most 32 vCPUs (Cluster Director's login nodes take no other)."""
    count: Annotated[int, Field(ge=1, le=16)] = 1
    """How many login nodes (1 to 16), each priced as its machine type on demand."""
    boot_disk_gib: Annotated[int, Field(ge=40, le=65536)] = Field(100, json_schema_extra=updates("replace"))
    """Each login node's boot disk (pd-balanced), GiB: at least 40."""
    os_login: bool = True
    """Users sign in with OS Login (their Google identities and IAM roles), not keys in metadata."""


class GcpSlurm(SpecModel):
    """Cluster Director's names for the cluster, its nodeset and partition, and its login nodes."""

    cluster_id: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9]{0,9}$")] = Field(
        json_schema_extra=updates("replace")
    )
    """The cluster's ID: a lower-case letter, then lower-case letters and digits, at most 10 in all."""
    nodeset: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9]{0,14}$")] = Field(
        "gpu", json_schema_extra=updates("replace")
    )
    """The GPU nodes' nodeset (its static nodes are `compute.node_count`)."""
    partition: Annotated[str, StringConstraints(pattern=r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")] = "train"
    """The partition jobs are submitted to (its one nodeset)."""
    login: GcpSlurmLogin = GcpSlurmLogin()


SchedulerType = Literal["gke", "slurm"]
MACHINE_LABEL = "gpuinfra-machine-type"
"""The label the GPU nodeset's instances carry their machine type in: a reserved-instances resource names only its
reservation, and the cost preview and the pack read the machine type here."""

__all__ = ["MACHINE_LABEL", "GcpSlurm", "GcpSlurmLogin", "LoginMachineType", "SchedulerType"]
