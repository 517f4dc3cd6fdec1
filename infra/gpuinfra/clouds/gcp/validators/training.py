"""Google's validator rules for a training cluster: the project, what Google refuses to combine when capacity is
bought (Cluster Toolkit's preconditions, each refused under its own name), flex-start's seven days, the RoCE VPC
an RDMA machine family needs, the zone offering the machine type, Managed Lustre's capacity steps, the GPU
quotas, and the 30-second notice a Spot node's checkpoint must fit."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.clouds.gcp.catalog.training import training_book
from gpuinfra.clouds.gcp.plan.jobs import spot_stop
from gpuinfra.clouds.gcp.plan.training import GcpTrainingPlan
from gpuinfra.clouds.gcp.spec import GcpProject
from gpuinfra.clouds.gcp.spec.training import GcpTrainingSpec
from gpuinfra.clouds.gcp.validators.project import project_failures
from gpuinfra.clouds.gcp.validators.quotas import quota_failures
from gpuinfra.spec import Organization
from gpuinfra.validators.base import Failure, Level, rule

CAPACITY = ("compute", "capacity")
NODE_POOL_RULES = "Cluster Toolkit modules/compute/gke-node-pool/main.tf"


@rule(Level.ERROR)
def gcp_training_project_purpose(spec: GcpTrainingSpec, org: Organization) -> Iterator[Failure]:
    """A Google training cluster deploys into a Google project of purpose training, never a serving one."""
    yield from project_failures(
        spec.account,
        org,
        "training",
        "name an organization entry with cloud: gcp (docs/gcp-training.md), or drop cloud: gcp to train on AWS",
        "training and serving never share a project",
        "name a Google project of `purpose: training` in `account:` (training and serving never share one)",
    )


@rule(Level.ERROR)
def gcp_spot_with_flex_start(spec: GcpTrainingSpec) -> Iterator[Failure]:
    """Spot and flex-start are two ways of buying the same nodes; Google takes one."""
    capacity = spec.compute.capacity
    if capacity.spot and capacity.flex_start:
        yield Failure(
            'spot and flex_start are both set: Google refuses the pair ("Both enable_flex_start and spot consumption '
            f'option cannot be set to true at the same time", {NODE_POOL_RULES})',
            (*CAPACITY, "spot"),
            "keep one under compute.capacity: `flex_start: true` (up to seven days of uninterrupted capacity) or "
            "`spot: true` (preemptible capacity)",
        )


@rule(Level.ERROR)
def gcp_flex_start_with_reservation(spec: GcpTrainingSpec) -> Iterator[Failure]:
    """Flex-start finds capacity of its own; it never consumes a reservation."""
    capacity = spec.compute.capacity
    if capacity.flex_start and capacity.reservation is not None:
        yield Failure(
            f'flex_start with reservation {capacity.reservation!r}: "DWS Flex Start cannot be used in tandem with a '
            'reservation" (Cluster Toolkit docs/slurm-dws-flex.md)',
            (*CAPACITY, "flex_start"),
            "remove `compute.capacity.flex_start` to run on the reservation, or `compute.capacity.reservation` to let "
            "flex-start find capacity",
        )


@rule(Level.ERROR)
def gcp_spot_with_reservation(spec: GcpTrainingSpec) -> Iterator[Failure]:
    """Spot nodes consume no reservation."""
    capacity = spec.compute.capacity
    if capacity.spot and capacity.reservation is not None:
        yield Failure(
            f'spot with reservation {capacity.reservation!r}: "Spot consumption option only works with '
            f'reservation_affinity consume_reservation_type NO_RESERVATION" ({NODE_POOL_RULES})',
            (*CAPACITY, "spot"),
            "remove `compute.capacity.spot` to run on the reservation, or `compute.capacity.reservation` to run on "
            "Spot capacity",
        )


@rule(Level.ERROR)
def gcp_flex_start_duration(spec: GcpTrainingSpec, plan: GcpTrainingPlan) -> Iterator[Failure]:
    """Flex-start holds its capacity for a stated run of at most seven days; the spec says how long."""
    capacity = spec.compute.capacity
    if capacity.flex_start and capacity.max_run_hours is None:
        yield Failure(
            "flex_start without max_run_hours: flex-start nodes run for a stated duration, then Google reclaims them",
            (*CAPACITY, "max_run_hours"),
            f"write `max_run_hours: {plan.flex_start_max_hours}` (seven days at most) under compute.capacity",
        )
    elif capacity.flex_start and capacity.max_run_hours and capacity.max_run_hours > plan.flex_start_max_hours:
        yield Failure(
            f"max_run_hours {capacity.max_run_hours:g} is past flex-start's {plan.flex_start_max_hours} hours (seven "
            "days: Cluster Toolkit docs/slurm-dws-flex.md)",
            (*CAPACITY, "max_run_hours"),
            f"write `max_run_hours: {plan.flex_start_max_hours}` under compute.capacity; longer runs need a "
            "reservation (calendar mode)",
        )
    elif capacity.max_run_hours is not None and not capacity.flex_start:
        yield Failure(
            "max_run_hours is set without flex_start: only flex-start nodes have a run duration",
            (*CAPACITY, "max_run_hours"),
            "remove `compute.capacity.max_run_hours`, or write `flex_start: true` under compute.capacity",
        )


@rule(Level.ERROR)
def gcp_rdma_without_roce(spec: GcpTrainingSpec, plan: GcpTrainingPlan) -> Iterator[Failure]:
    """A machine family with MRDMA NICs needs its zone's RoCE VPC: without it the NICs have nowhere to attach."""
    fabric = plan.fabric
    if spec.scheduler.type == "slurm":
        return  # Cluster Director attaches its nodes' NICs itself (gcp-slurm-roce-vpc)
    if fabric is not None and fabric.mrdma_nics and not spec.network.roce_vpc:
        yield Failure(
            f"{spec.compute.machine_type} carries {fabric.mrdma_nics} MRDMA NICs, which attach only to a VPC with the "
            f"zone's RDMA network profile ({fabric.roce_profile}): without the RoCE VPC the GPUs have no fabric",
            ("network", "roce_vpc"),
            "write `roce_vpc: true` under network (the stack creates the RoCE VPC and a subnet per NIC)",
        )


@rule(Level.ERROR)
def gcp_zone_lacks_machine_type(spec: GcpTrainingSpec) -> Iterator[Failure]:
    """The zone offers the machine type (the catalog's zones; the RoCE profile is zonal, so the zone is fixed)."""
    book = training_book()
    zones = book.zones.get(spec.compute.machine_type, ())
    if spec.compute.zone not in zones:
        yield Failure(
            f"{spec.compute.machine_type} is not offered in {spec.compute.zone} "
            "(clouds/gcp/catalog/data/training.yaml)",
            ("compute", "zone"),
            (
                f"write `zone: {zones[0]}` under compute"
                + (f" (or one of {', '.join(zones[1:])})" if zones[1:] else "")
                if zones
                else "write another `machine_type:` under compute: the catalog lists no zone for this one"
            ),
        )


@rule(Level.ERROR)
def gcp_lustre_capacity_off_steps(spec: GcpTrainingSpec, plan: GcpTrainingPlan) -> Iterator[Failure]:
    """Managed Lustre takes capacities on its tier's steps only."""
    lustre = spec.lustre
    if lustre is None:
        return
    tier = training_book().lustre_tiers[lustre.throughput_mb_s_per_tib]
    if not tier.allows(lustre.capacity_gib):
        steps = f"{tier.step_gib:,} GiB steps" + (
            f" up to {tier.threshold_gib:,}, then {tier.large_step_gib:,}" if tier.threshold_gib else ""
        )
        yield Failure(
            f"capacity_gib {lustre.capacity_gib:,} is not a capacity Managed Lustre takes at "
            f"{tier.mb_s_per_tib} MB/s per TiB ({tier.min_gib:,} to {tier.max_gib:,} GiB in {steps}: "
            "clouds/gcp/catalog/data/training.yaml)",
            ("lustre", "capacity_gib"),
            f"write `capacity_gib: {plan.lustre_nearest_gib}` under lustre (the nearest step of its tier)",
        )


@rule(Level.ERROR)
def gcp_training_quota_short(
    spec: GcpTrainingSpec, plan: GcpTrainingPlan, org: Organization, account_problems: list[str]
) -> Iterator[Failure]:
    """The project's GPU quotas hold what its stacks need together at full size (unknown is not zero)."""
    project = org.accounts.get(spec.account)
    if not isinstance(project, GcpProject):
        return
    yield from quota_failures(spec.account, project, plan.quotas, account_problems, "compute.node_count")


@rule(Level.INFO)
def gcp_placement_from_reservation(spec: GcpTrainingSpec) -> Iterator[Failure]:
    """A reservation carries its own placement: Google places reserved VMs as the reservation says, so the stack
    makes no placement policy of its own (dstack's GCP backend: "Cannot use our own placement policies when
    provisioning in a reservation"; Cluster Toolkit's A3 Ultra and A4 blueprints set enable_placement: false)."""
    compute = spec.compute
    if compute.placement == "compact" and compute.capacity.reservation is not None:
        yield Failure(
            f"placement compact with reservation {compute.capacity.reservation!r}: the reservation's own placement "
            "applies (make it a dense reservation, or target one of its blocks, to keep the nodes close)",
            ("compute", "placement"),
            "nothing to change; write `placement: none` under compute to say so",
        )


@rule(Level.INFO)
def gcp_placement_with_flex_start(spec: GcpTrainingSpec) -> Iterator[Failure]:
    """Flex-start on GKE is queued provisioning (the gang's nodes all at once), which takes no compact placement
    policy (Cluster Toolkit examples/gke-dws-flex-start: "Compact placement policy is not supported"): none is made,
    and Kueue's topology-aware scheduling keeps the gang within a sub-block of what Google provides."""
    compute = spec.compute
    if compute.placement == "compact" and compute.capacity.flex_start and compute.capacity.reservation is None:
        yield Failure(
            "placement compact with flex_start: queued provisioning takes no compact placement policy, so none is "
            "made; Kueue places the gang by Google's topology labels (the sub-block) on the nodes it provides",
            ("compute", "placement"),
            "nothing to change; write `placement: none` under compute to say so",
        )


@rule(Level.WARNING)
def gcp_checkpoint_past_spot_notice(spec: GcpTrainingSpec, plan: GcpTrainingPlan) -> Iterator[Failure]:
    """A Spot node gets at most 30 s of notice, of which the trainer's pod gets GKE's first 15 s less the signal
    margin (plan/jobs.spot_stop): a checkpoint taken on notice must be written within that window, or the work
    since the last periodic checkpoint is lost (the interval bound then carries the risk alone)."""
    notice, ckpt = plan.preemption_notice_seconds, plan.checkpoint
    window = spot_stop(None, notice)[0] if notice is not None else None
    if window is not None and ckpt is not None and ckpt.write_seconds > window:
        yield Failure(
            f"a checkpoint takes {ckpt.write_seconds:.0f} s to write, past the {window} s the trainer gets of a Spot "
            f"node's {notice} s notice: a checkpoint on notice cannot finish, so a preemption loses up to one interval",
            ("checkpointing", "interval_minutes"),
            "keep `checkpointing.interval_minutes` at the planner's bound, raise `lustre.capacity_gib` or "
            "`lustre.throughput_mb_s_per_tib` (write bandwidth), or buy the nodes on a reservation or flex-start",
        )


__all__ = [
    "gcp_checkpoint_past_spot_notice",
    "gcp_flex_start_duration",
    "gcp_flex_start_with_reservation",
    "gcp_lustre_capacity_off_steps",
    "gcp_placement_from_reservation",
    "gcp_placement_with_flex_start",
    "gcp_rdma_without_roce",
    "gcp_spot_with_flex_start",
    "gcp_spot_with_reservation",
    "gcp_training_project_purpose",
    "gcp_training_quota_short",
    "gcp_zone_lacks_machine_type",
]
