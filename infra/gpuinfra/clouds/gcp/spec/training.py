"""A training cluster on Google Cloud (`gpuinfra:training` with `cloud: gcp`): A3 Ultra (H200) or A4 (B200) nodes
on GPUDirect RDMA in one zone, Managed Lustre and Cloud Storage beside them, GKE with Kueue as the scheduler.

The model, its layout, the run, the failure rates and the checkpoint cadence are the cloud-neutral parts AWS's
training spec has (spec/training.py), so the planner sizes both the same way. What is Google's: a zone and a
project; the fabric (regular VPCs for the gVNICs, one RoCE VPC for the MRDMA NICs); capacity bought as a
reservation, DWS flex-start or Spot, which Google refuses to combine (the validators say so by name, rather than
the schema, so each refusal names Google's rule); Managed Lustre's tiers; Cloud Storage buckets."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from gpuinfra.clouds.gcp.spec.filestore import GcpFilestore
from gpuinfra.clouds.gcp.spec.project import GcpLabels, GcpZone
from gpuinfra.clouds.gcp.spec.slurm import GcpSlurm, SchedulerType
from gpuinfra.spec.base import AccountName, Name, RuleId, SpecModel, VpcCidr, updates
from gpuinfra.spec.target import Target
from gpuinfra.spec.training import ApiAccess, Failure, TrainedModel, TrainingJob, TrainingRun

TRAINING_MACHINES = ("a3-ultragpu-8g", "a4-highgpu-8g")
"""The machine types whose fabric gpuinfra builds (A3 Ultra, A4: GPUDirect RDMA over MRDMA NICs); the catalog's
training machine types (tests hold the two lists equal)."""
MachineTypeName = Literal["a3-ultragpu-8g", "a4-highgpu-8g"]
BucketName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]$")]
Reservation = Annotated[
    str,
    StringConstraints(
        pattern=r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?(/reservationBlocks/[a-z]([-a-z0-9]{0,61}[a-z0-9])?)?$"
    ),
    Field(description="A reservation of the project, or one block of it: <reservation>/reservationBlocks/<block>."),
]
GB_PER_GIB = 1024**3 / 1e9


class GcpCapacity(SpecModel):
    """How the nodes' capacity is bought: a reservation, DWS flex-start, Spot, or on-demand (none of them).
    Google takes one at a time (Cluster Toolkit: "pick only one"); `gcp-capacity-combination` refuses the rest."""

    reservation: Reservation | None = Field(None, json_schema_extra=updates("replace"))
    """Consume this specific reservation (it carries its own placement: the stack's compact policy stays off)."""
    flex_start: bool = Field(False, json_schema_extra=updates("replace"))
    """DWS flex-start: Google finds the capacity and holds it for at most `max_run_hours` (seven days)."""
    max_run_hours: Annotated[float, Field(gt=0)] | None = None
    """Flex-start: how long the nodes may run before Google reclaims them (required with flex_start)."""
    spot: bool = Field(False, json_schema_extra=updates("replace"))
    """Spot VMs: at most 30 s of notice before a preemption."""

    @property
    def model(self) -> Literal["reservation", "flex_start", "spot", "on_demand"]:
        """The one consumption model the capacity names (the first of them when it names several: refused)."""
        if self.reservation is not None:
            return "reservation"
        if self.flex_start:
            return "flex_start"
        return "spot" if self.spot else "on_demand"


class GcpCompute(SpecModel):
    machine_type: MachineTypeName = Field(json_schema_extra=updates("replace"))
    """a3-ultragpu-8g (8 x H200) or a4-highgpu-8g (8 x B200)."""
    node_count: Annotated[int, Field(ge=1, le=4096)]
    """GPU nodes of the cluster (one GKE node pool)."""
    zone: GcpZone = Field(json_schema_extra=updates("replace"))
    """The one zone of the cluster: the RoCE network profile is zonal, and every NIC on it must be in its zone."""
    placement: Literal["compact", "none"] = Field("compact", json_schema_extra=updates("replace"))
    """compact: a compact placement policy (compute.ResourcePolicy) keeps the nodes close on the fabric."""
    capacity: GcpCapacity = GcpCapacity()
    boot_disk_gib: Annotated[int, Field(ge=100, le=65536)] = 500
    """Each node's boot disk (Hyperdisk Balanced), GiB: the container images' room."""

    @property
    def region(self) -> str:
        return self.zone.rsplit("-", 1)[0]


class GcpTrainingNetwork(SpecModel):
    """The node networks, carved from one /16: each gVNIC's subnet, the Services range and the RDMA subnets."""

    cidr: VpcCidr = Field("10.128.0.0/16", json_schema_extra=updates("replace"))
    pods_cidr: VpcCidr = Field("10.129.0.0/16", json_schema_extra=updates("replace"))
    """The GKE Pods' secondary range on the first node subnet."""
    private_service_cidr: VpcCidr = Field("10.130.0.0/16", json_schema_extra=updates("replace"))
    """Private services access: the range Google's producer network (Managed Lustre) takes its addresses from."""
    roce_vpc: bool = Field(True, json_schema_extra=updates("replace"))
    """Create the RoCE VPC for the MRDMA NICs (A3 Ultra and A4 need it: `gcp-rdma-without-roce`)."""

    def gvnic_subnet(self, index: int) -> str:
        """The i-th gVNIC's subnet: the /20s from the start of `cidr`."""
        return str(list(ipaddress.ip_network(self.cidr).subnets(new_prefix=20))[index])

    def services_range(self) -> str:
        return str(list(ipaddress.ip_network(self.cidr).subnets(new_prefix=20))[4])

    def rdma_subnet(self, index: int) -> str:
        """The i-th MRDMA NIC's subnet of the RoCE VPC: the /24s of the second half of `cidr`."""
        return str(list(ipaddress.ip_network(self.cidr).subnets(new_prefix=24))[128 + index])


class GcpLustre(SpecModel):
    """Managed Lustre in the cluster's zone, reached over private services access."""

    capacity_gib: Annotated[int, Field(ge=9000, le=7_632_000)] = Field(json_schema_extra=updates("in_place"))
    """On the tier's steps (`gcp-lustre-capacity-off-steps` names the nearest)."""
    throughput_mb_s_per_tib: Literal[125, 250, 500, 1000] = Field(json_schema_extra=updates("replace"))
    """The performance tier, MB/s per TiB of capacity (fixed for the instance's life)."""
    filesystem: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9]{1,8}$")] = "train"
    """The file system's name clients mount (eight letters or digits at most)."""
    mount_path: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9/_-]*$")] = "/lustre"
    """Where the jobs see the file system."""


class GcpCheckpointing(SpecModel):
    """The checkpoint contract AWS's has: where, how often, how long superseded ones are kept."""

    target: Literal["lustre", "gcs"] = "lustre"
    """Write to Lustre (its throughput is the write bandwidth) or straight to the checkpoint bucket."""
    interval_minutes: Annotated[float, Field(gt=0, le=1440)]
    """Minutes between checkpoints; the planner computes the Young/Daly optimum to compare."""
    retention_days: Annotated[int, Field(ge=1, le=3650)] = 14
    """Days a superseded checkpoint object stays in the bucket (a noncurrent version's lifecycle)."""
    keep_last: Annotated[int, Field(ge=1, le=1000)] = 3
    """Newest checkpoints kept per run."""
    size_gib: Annotated[float, Field(gt=0)] | None = None
    """Default: the model's weights and optimizer state (the planner's memory figure)."""
    write_bandwidth_gb_s: Annotated[float, Field(gt=0)] | None = None
    """Default on Lustre: its aggregate throughput."""


class GcpStorage(SpecModel):
    data_bucket: BucketName
    """The training data's bucket (created here, uniform access, public access prevented)."""
    checkpoint_bucket: BucketName
    """Checkpoints copied off Lustre (or written straight, target gcs): versioned, superseded versions expire."""


class GcpTrainingScheduler(SpecModel):
    type: SchedulerType = Field("gke", json_schema_extra=updates("replace"))
    """gke: GKE with Kueue and JobSet; slurm: Cluster Director's managed Slurm (`slurm` below, docs/gcp-slurm.md)."""
    slurm: GcpSlurm | None = None
    """The Slurm cluster's IDs and login nodes (scheduler slurm: required)."""
    kubernetes_version: Annotated[str, StringConstraints(pattern=r"^1\.[0-9]{2}$")] = "1.33"
    """The control plane's minimum version (the release channel upgrades from it)."""
    release_channel: Literal["RAPID", "REGULAR", "STABLE"] = "REGULAR"
    """GKE's release channel: how soon the cluster takes new versions."""
    namespace: Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)] = "training"
    """The team's namespace: its LocalQueue and the jobs it submits."""
    api_access: ApiAccess = ApiAccess()
    """Who reaches the control plane from outside the VPC: only `public_cidrs` (its authorized networks); empty,
    the endpoint is private (deploy from inside the VPC)."""


class GcpTrainingSpec(SpecModel):
    """A tightly coupled training cluster on Google Cloud."""

    @property
    def target(self) -> Target:
        return Target("gcp", self.account, (self.compute.region,))

    cloud: Literal["gcp"]
    """Google Cloud (docs/gcp.md)."""
    name: Name
    account: AccountName
    """The organization's project entry (cloud: gcp, purpose: training)."""
    compute: GcpCompute
    """The GPU nodes: machine type, count, zone, placement and how their capacity is bought."""
    network: GcpTrainingNetwork = GcpTrainingNetwork()
    lustre: GcpLustre | None = None
    filestore: GcpFilestore | None = None
    """/home on Filestore (docs/gcp-training.md): mounted on every node and, on GKE, in every trainer pod."""
    storage: GcpStorage
    """The Cloud Storage buckets for data and checkpoints."""
    checkpointing: GcpCheckpointing | None = None
    model: TrainedModel
    scheduler: GcpTrainingScheduler = GcpTrainingScheduler()
    """GKE with Kueue and JobSet."""
    job: TrainingJob | None = None
    """The trainer the JobSet template runs (AWS's job section: image, script under the Lustre mount, run days);
    None: no template. `spot` is the capacity's here: a Spot pool's job is a spot job."""
    failure: Failure = Failure()
    run: TrainingRun | None = None
    labels: GcpLabels = {}
    """Labels on every resource that takes them (Google labels: lower-case keys and values)."""
    suppress: list[RuleId] = []
    """Warnings (and suppressible errors) this stack accepts, by rule id."""


__all__ = [
    "GB_PER_GIB",
    "TRAINING_MACHINES",
    "GcpCapacity",
    "GcpCheckpointing",
    "GcpCompute",
    "GcpLustre",
    "GcpStorage",
    "GcpTrainingNetwork",
    "GcpTrainingScheduler",
    "GcpTrainingSpec",
]
