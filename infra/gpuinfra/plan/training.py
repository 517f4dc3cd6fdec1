"""The training plan: GPUs, memory fit, racks and power, checkpoint interval, quota needs."""

from __future__ import annotations

import datetime
from typing import Any, Literal

from gpuinfra.catalog import Catalog, InstanceType
from gpuinfra.clouds import cloud
from gpuinfra.plan.capacity import split_capacity
from gpuinfra.plan.checkpoint import CheckpointPlan, mean_time_between_interruptions, planned_checkpoint
from gpuinfra.plan.economics import training_layout, training_ownership, training_run
from gpuinfra.plan.interruption import spot_interruption
from gpuinfra.plan.jobs import PodSize, pod_size, pod_size_from_allocatable, restart_budget
from gpuinfra.plan.layout import LayoutMemory
from gpuinfra.plan.memory import Plain, TrainingMemory, model_memory
from gpuinfra.plan.ownership import OwnershipPlan
from gpuinfra.plan.pcs import block_checkpoint_at, cluster_size
from gpuinfra.plan.quotas import InstanceDemand, QuotaNeed, needs_in
from gpuinfra.plan.racks import NodePlacement, RackLayout, place_nodes, rack_layout
from gpuinfra.plan.runtime import RunPlan
from gpuinfra.spec import Organization, TrainingSpec

SCRATCH_2_MB_S_PER_TIB = 200
LOGIN_NODES = 1
"""The AWS PCS login node group: one on-demand node users submit from (the controller is PCS's, not ours)."""
EKS_SYSTEM_NODES = ("m7i.xlarge", 2)
"""Untainted nodes for cluster add-ons (CoreDNS, Kueue, JobSet, CSI controllers) beside the GPU nodes."""


class TrainingPlan(Plain):
    workload: Literal["training"] = "training"
    instance_type: str
    nodes: int
    gpus_per_node: int
    spot_interruption_rate_monthly: float = 0.0
    """The rate the checkpoint interval, restart budget and goodput use (spec, advisor band or default)."""
    spot_interruption_source: str = ""
    device_resource: str | None = None
    """The extended resource a Kubernetes pod requests the accelerators as (catalog: nvidia.com/gpu,
    aws.amazon.com/neuron); None for a type without whole accelerators."""
    vcpus_per_node: int
    memory_gib_per_node: int
    gpus: int
    on_demand_nodes: int
    spot_nodes: int
    efa_interfaces_per_node: int
    efa_cards: list[int] = []
    """Network cards that carry an EFA (catalog per-card data), when the cluster runs on EFA."""
    instance_store_gb: int = 0
    memory: TrainingMemory
    racks: RackLayout | None
    racks_note: str | None = None
    checkpoint: CheckpointPlan | None
    checkpoint_note: str | None = None
    lustre_capacity_gib: int | None
    """Requested capacity rounded up to a valid FSx increment (on an EFA-enabled file system, its tier's step)."""
    lustre_efa: bool = False
    """The FSx file system is EFA-enabled: lustre.efa, or its default (see lustre_efa)."""
    lustre_preload: bool = False
    """The dataset is restored into Lustre before the first job: lustre.preload, else whether dataset_gib is set."""
    lustre_throughput_mb_s: float | None
    """Aggregate file-system throughput."""
    quotas: list[QuotaNeed]
    node_placements: list[NodePlacement] = []
    """On premises: every named node's rack, cooling loop and power domain."""
    site_gpu_allotment: int | None = None
    """On premises: the GPUs the organization grants the site."""
    login_memory_gib: int = 0
    """Slurm on AWS: memory of the login node type."""
    pcs_size: str | None = None
    """Slurm on AWS: the AWS PCS controller size for the nodes plus login nodes (None: past the largest)."""
    block_end: datetime.datetime | None = None
    """Capacity Block: when the block ends."""
    block_checkpoint_at: datetime.datetime | None = None
    """Capacity Block: when the nodes take their last checkpoint and drain, before EC2 reclaims the block."""
    job_pod: PodSize | None = None
    """Kubernetes: what each node's training pod requests (from the node's allocatable)."""
    job_max_restarts: int | None = None
    """Kubernetes: the JobSet's restart budget for the interruptions expected over job.run_days."""
    network_gbps_per_node: float | None = None
    """The instance type's network rate (catalog): the NCCL acceptance job's bus-bandwidth floor is sized from it."""
    network_topology: bool = False
    """EC2 describes the type's place in the network (catalog topology.yaml): EKS labels its network layers and
    Kueue packs a job by them."""
    layout: LayoutMemory | None = None
    """Per-GPU memory of the parallel layout (with model.architecture; replaces the flat activation share)."""
    run: RunPlan | None = None
    """Days, GPU-hours and cost of the spec's training run (with `run`)."""
    run_note: str | None = None
    ownership: OwnershipPlan | None = None
    """On premises: owning versus renting the same nodes on AWS."""
    ownership_note: str | None = None


def lustre_efa(spec: TrainingSpec, catalog: Catalog) -> bool:
    """Whether the FSx file system is EFA-enabled: lustre.efa when set; else on for a PERSISTENT_2 file system
    whose Slurm nodes are of a family the FSx guide names as an EFA client (the Slurm node user data configures
    the EFA client; EKS nodes would need their own setup, so they stay on TCP) and whose throughput, at the
    capacity it would have without EFA, is above the guide's 10 GBps (below it, EFA's coarser capacity steps
    cost more than the clients gain)."""
    lustre = spec.lustre
    if lustre is None:
        return False
    if lustre.efa is not None:
        return lustre.efa
    if lustre.deployment_type != "PERSISTENT_2" or lustre.throughput_mb_s_per_tib is None:
        return False
    mb_s = catalog.fsx_capacity_gib(lustre.storage_capacity_gib) / 1024 * lustre.throughput_mb_s_per_tib
    return (
        spec.scheduler.type == "slurm"
        and catalog.fsx_efa_client(spec.compute.instance_type)
        and mb_s > catalog.fsx_efa.recommended_above_mb_s
    )


def plan_training(spec: TrainingSpec, org: Organization, catalog: Catalog) -> TrainingPlan:
    """The plan as an outline: each step derives the fields of one concern from the spec and the steps before it
    (capacity -> memory -> racks -> storage -> checkpoint -> quotas -> site -> job -> ownership -> run)."""
    info = catalog.instance(spec.compute.instance_type)
    assert info is not None, "references are resolved before planning"
    on_demand, spot = _capacity(spec)
    memory = _memory(spec, info)
    racks, racks_note = _racks(spec, catalog, info)
    storage = _storage(spec, catalog)
    spot_rate, spot_source = spot_interruption(spec, catalog, info.name)
    checkpoint, checkpoint_note = _checkpoint(spec, memory, storage["lustre_throughput_mb_s"], spot, spot_rate)
    ownership, ownership_note = training_ownership(spec, org, catalog, racks)
    run, run_note = training_run(spec, catalog, info, checkpoint, ownership)
    return TrainingPlan(
        **_nodes(spec, catalog, info, on_demand, spot),
        **_scheduler(spec, catalog, checkpoint),
        **storage,
        **_site(spec, org, racks),
        **_job(spec, org, info, spot, spot_rate),
        memory=memory,
        racks=racks,
        racks_note=racks_note,
        spot_interruption_rate_monthly=spot_rate,
        spot_interruption_source=spot_source,
        checkpoint=checkpoint,
        checkpoint_note=checkpoint_note,
        quotas=_quota_needs(spec, org, catalog, info, on_demand, spot),
        layout=training_layout(spec, info),
        run=run,
        run_note=run_note,
        ownership=ownership,
        ownership_note=ownership_note,
    )


def _capacity(spec: TrainingSpec) -> tuple[int, int]:
    """(on-demand, spot) nodes: spot above the on-demand base when the capacity is spot."""
    capacity = spec.compute.capacity
    if capacity.type == "spot":
        return split_capacity(spec.compute.node_count, capacity.on_demand_base, 0)
    return spec.compute.node_count, 0


def _memory(spec: TrainingSpec, info: InstanceType) -> TrainingMemory:
    return model_memory(spec.model, spec.compute.node_count * info.accelerator_count, info.accelerator_memory_mib)


def _racks(spec: TrainingSpec, catalog: Catalog, info: InstanceType) -> tuple[RackLayout | None, str | None]:
    """On premises, the rack layout within power and cooling; on AWS none (the customer controls the placement
    group, not racks, power or cooling)."""
    if spec.racks is None:
        return None, None
    power = catalog.node_power(info.name)
    if power is None:
        return None, f"no published power figure for {info.name}; rack layout not planned"
    return rack_layout(
        spec.compute.node_count,
        power.max_kw,
        spec.racks.power_budget_kw,
        spec.racks.cooling,
        catalog.cooling_limit(spec.racks.cooling).max_kw_per_rack,
        spec.racks.pue,
        spec.racks.max_nodes_per_rack,
    ), None


def _storage(spec: TrainingSpec, catalog: Catalog) -> dict[str, Any]:
    """The parallel file system's capacity (the next size FSx takes), throughput and EFA use, or the site's."""
    lustre_gib, lustre_mb_s = None, None
    efa_fs = lustre_efa(spec, catalog)
    if spec.lustre is not None:
        efa_tier = spec.lustre.throughput_mb_s_per_tib if efa_fs else None
        lustre_gib = catalog.fsx_capacity_gib(spec.lustre.storage_capacity_gib, efa_tier)
        per_tib = spec.lustre.throughput_mb_s_per_tib or SCRATCH_2_MB_S_PER_TIB
        lustre_mb_s = lustre_gib / 1024 * per_tib
    elif spec.site_lustre is not None:
        lustre_mb_s = spec.site_lustre.write_bandwidth_gb_s * 1000
    lustre = spec.lustre
    preload = lustre is not None and (lustre.preload if lustre.preload is not None else lustre.dataset_gib is not None)
    return {
        "lustre_capacity_gib": lustre_gib,
        "lustre_efa": efa_fs,
        "lustre_preload": preload,
        "lustre_throughput_mb_s": lustre_mb_s,
    }


def _checkpoint(
    spec: TrainingSpec, memory: TrainingMemory, lustre_mb_s: float | None, spot: int, spot_rate: float
) -> tuple[CheckpointPlan | None, str | None]:
    """The spec's checkpoint by the one step every cloud's planner takes (plan/checkpoint.py planned_checkpoint)."""
    return planned_checkpoint(
        spec.checkpointing,
        memory.total_bytes,
        lustre_mb_s,
        spec.compute.node_count,
        spot,
        spec.failure.node_mtbf_hours,
        spot_rate,
    )


def _quota_needs(
    spec: TrainingSpec, org: Organization, catalog: Catalog, info: InstanceType, on_demand: int, spot: int
) -> list[QuotaNeed]:
    """vCPUs per quota code at full size on AWS: the nodes (unless a Capacity Block holds them; an On-Demand Capacity
    Reservation's count against the On-Demand quota), the elastic partition's spot nodes at their most, and the
    login node or the EKS system nodes."""
    account = org.accounts.get(spec.account)
    if not cloud(spec.target.cloud).account_quotas or not spec.region or account is None:
        return []
    demands = []
    if spec.compute.capacity.type != "capacity_block":
        demands += [
            InstanceDemand(spec.region, info.name, "on_demand", on_demand),
            InstanceDemand(spec.region, info.name, "spot", spot),
        ]
    if spec.compute.elastic is not None:
        demands.append(InstanceDemand(spec.region, info.name, "spot", spec.compute.elastic.max_nodes))
    if spec.scheduler.type == "slurm":
        demands.append(InstanceDemand(spec.region, spec.scheduler.login_instance_type, "on_demand", LOGIN_NODES))
    else:
        demands.append(InstanceDemand(spec.region, EKS_SYSTEM_NODES[0], "on_demand", EKS_SYSTEM_NODES[1]))
    return needs_in(cloud(spec.target.cloud), demands, catalog, spec.account, account.id, account.quotas)


def _site(spec: TrainingSpec, org: Organization, racks: RackLayout | None) -> dict[str, Any]:
    """On premises: each node's rack, cooling loop and power domain, and the site's GPU allotment."""
    placements: list[NodePlacement] = []
    allotment = None
    if cloud(spec.target.cloud).sites and spec.onprem is not None:
        names = spec.onprem.names(spec.compute.node_count)
        if racks is not None and len(names) == spec.compute.node_count:
            placements = place_nodes(
                names, racks.racks, spec.onprem.racks_per_cooling_loop, spec.onprem.racks_per_power_domain
            )
        site = org.onprem_sites.get(spec.site or "")
        allotment = site.gpu_allotment if site else None
    return {"node_placements": placements, "site_gpu_allotment": allotment}


def _scheduler(spec: TrainingSpec, catalog: Catalog, checkpoint: CheckpointPlan | None) -> dict[str, Any]:
    """PCS's size class and login node, and a Capacity Block's end with the checkpoint that must precede it."""
    pcs = cloud(spec.target.cloud).managed_slurm and spec.scheduler.type == "slurm"
    capacity = spec.compute.capacity
    block_end = capacity.block_end if capacity.type == "capacity_block" else None
    if block_end is not None and block_end.tzinfo is None:
        block_end = block_end.replace(tzinfo=datetime.UTC)
    write_seconds = checkpoint.write_seconds if checkpoint else 0.0
    login = catalog.instance(spec.scheduler.login_instance_type) if pcs else None
    return {
        "login_memory_gib": login.memory_gib if login else 0,
        "pcs_size": cluster_size(spec.compute.node_count + LOGIN_NODES) if pcs else None,
        "block_end": block_end,
        "block_checkpoint_at": block_checkpoint_at(block_end, write_seconds) if block_end else None,
    }


def _job(spec: TrainingSpec, org: Organization, info: InstanceType, spot: int, spot_rate: float) -> dict[str, Any]:
    """The Kubernetes job's pod size (the site's allocatable on premises) and its restart budget."""
    if spec.job is None:
        return {"job_pod": None, "job_max_restarts": None}
    site_nodes = org.onprem_sites[spec.site].node_allocatable if spec.site in org.onprem_sites else None
    pod = (
        pod_size_from_allocatable(site_nodes.cpu_millicores, site_nodes.memory_mib)
        if cloud(spec.target.cloud).sites and site_nodes is not None
        else pod_size(info.vcpu, info.memory_gib)
    )
    nodes = spec.compute.node_count
    rate = 1.0 / mean_time_between_interruptions(nodes, spot, spec.failure.node_mtbf_hours, spot_rate)
    return {"job_pod": pod, "job_max_restarts": restart_budget(rate, spec.job.run_days * 24)}


def _nodes(spec: TrainingSpec, catalog: Catalog, info: InstanceType, on_demand: int, spot: int) -> dict[str, Any]:
    """The node type's facts the components and the report read, from the catalog."""
    efa = spec.interconnect.type == "efa"
    return {
        "instance_type": info.name,
        "nodes": spec.compute.node_count,
        "gpus_per_node": info.accelerator_count,
        "device_resource": catalog.k8s_resource(info.name),
        "vcpus_per_node": info.vcpu,
        "memory_gib_per_node": info.memory_gib,
        "gpus": spec.compute.node_count * info.accelerator_count,
        "on_demand_nodes": on_demand,
        "spot_nodes": spot,
        "efa_interfaces_per_node": info.efa_interfaces if efa else 0,
        "efa_cards": list(info.efa_cards) if efa else [],
        "instance_store_gb": info.instance_store_gb,
        "network_gbps_per_node": info.network_gbps,
        "network_topology": catalog.describes_topology(spec.compute.instance_type),
    }


__all__ = ["EKS_SYSTEM_NODES", "LOGIN_NODES", "TrainingPlan", "lustre_efa", "plan_training"]
