"""The training plan: GPUs, memory fit, racks and power, checkpoint interval, quota needs."""

from __future__ import annotations

import datetime
from typing import Literal

from gpuinfra.catalog import Catalog
from gpuinfra.plan.capacity import split_capacity
from gpuinfra.plan.checkpoint import CheckpointPlan, checkpoint_plan, mean_time_between_interruptions
from gpuinfra.plan.economics import training_layout, training_ownership, training_run
from gpuinfra.plan.interruption import spot_interruption
from gpuinfra.plan.jobs import PodSize, pod_size, pod_size_from_allocatable, restart_budget
from gpuinfra.plan.layout import LayoutMemory
from gpuinfra.plan.memory import Plain, TrainingMemory, training_memory
from gpuinfra.plan.ownership import OwnershipPlan
from gpuinfra.plan.pcs import block_checkpoint_at, cluster_size
from gpuinfra.plan.quotas import InstanceDemand, QuotaNeed, quota_needs
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
    info = catalog.instance(spec.compute.instance_type)
    assert info is not None, "references are resolved before planning"
    nodes = spec.compute.node_count
    capacity = spec.compute.capacity
    if capacity.type == "spot":
        on_demand, spot = split_capacity(nodes, capacity.on_demand_base, 0)
    else:
        on_demand, spot = nodes, 0
    gpus = nodes * info.accelerator_count

    memory = training_memory(
        spec.model.parameters_billion,
        spec.model.precision,
        spec.model.optimizer,
        gpus,
        info.accelerator_memory_mib,
        spec.model.activation_headroom_fraction,
    )

    power = catalog.node_power(info.name)
    racks, racks_note = None, None
    if spec.racks is None:
        pass  # AWS: no racks to plan (the customer controls the placement group, not racks, power or cooling)
    elif power is None:
        racks_note = f"no published power figure for {info.name}; rack layout not planned"
    else:
        racks = rack_layout(
            nodes,
            power.max_kw,
            spec.racks.power_budget_kw,
            spec.racks.cooling,
            catalog.cooling_limit(spec.racks.cooling).max_kw_per_rack,
            spec.racks.pue,
            spec.racks.max_nodes_per_rack,
        )

    lustre_gib, lustre_mb_s = None, None
    efa_fs = lustre_efa(spec, catalog)
    if spec.lustre is not None:
        efa_tier = spec.lustre.throughput_mb_s_per_tib if efa_fs else None
        lustre_gib = catalog.fsx_capacity_gib(spec.lustre.storage_capacity_gib, efa_tier)
        per_tib = spec.lustre.throughput_mb_s_per_tib or SCRATCH_2_MB_S_PER_TIB
        lustre_mb_s = lustre_gib / 1024 * per_tib
    elif spec.site_lustre is not None:
        lustre_mb_s = spec.site_lustre.write_bandwidth_gb_s * 1000

    spot_rate, spot_source = spot_interruption(spec, catalog, info.name)
    checkpoint, checkpoint_note = None, None
    ckpt = spec.checkpointing
    if ckpt is None:
        checkpoint_note = "no checkpointing configured"
    else:
        size_gb = ckpt.size_gib * 1024**3 / 1e9 if ckpt.size_gib else memory.total_bytes / 1e9
        bandwidth = ckpt.write_bandwidth_gb_s
        if bandwidth is None and ckpt.target == "lustre" and lustre_mb_s:
            bandwidth = lustre_mb_s / 1000
        if bandwidth is None:
            checkpoint_note = "checkpoint write bandwidth unknown: set checkpointing.write_bandwidth_gb_s"
        else:
            checkpoint = checkpoint_plan(
                size_gb,
                bandwidth,
                nodes,
                spot,
                spec.failure.node_mtbf_hours,
                spot_rate,
                ckpt.interval_minutes,
            )

    quotas: list[QuotaNeed] = []
    if spec.provider == "aws" and spec.region:
        demands = []
        if capacity.type != "capacity_block":
            demands += [
                InstanceDemand(spec.region, info.name, "on_demand", on_demand),
                InstanceDemand(spec.region, info.name, "spot", spot),
            ]
        if spec.scheduler.type == "slurm":
            demands.append(InstanceDemand(spec.region, spec.scheduler.login_instance_type, "on_demand", LOGIN_NODES))
        else:
            demands.append(InstanceDemand(spec.region, EKS_SYSTEM_NODES[0], "on_demand", EKS_SYSTEM_NODES[1]))
        account = org.accounts.get(spec.account)
        if account is not None:
            quotas = quota_needs(demands, catalog, spec.account, account.id, account.quotas)

    placements: list[NodePlacement] = []
    allotment = None
    if spec.provider == "onprem" and spec.onprem is not None:
        names = spec.onprem.names(nodes)
        if racks is not None and len(names) == nodes:
            placements = place_nodes(
                names, racks.racks, spec.onprem.racks_per_cooling_loop, spec.onprem.racks_per_power_domain
            )
        site = org.onprem_sites.get(spec.site or "")
        allotment = site.gpu_allotment if site else None

    pcs = spec.provider == "aws" and spec.scheduler.type == "slurm"
    block_end = capacity.block_end if capacity.type == "capacity_block" else None
    if block_end is not None and block_end.tzinfo is None:
        block_end = block_end.replace(tzinfo=datetime.UTC)
    write_seconds = checkpoint.write_seconds if checkpoint else 0.0
    login = catalog.instance(spec.scheduler.login_instance_type) if pcs else None
    job_pod, max_restarts = None, None
    if spec.job is not None:
        site_nodes = org.onprem_sites[spec.site].node_allocatable if spec.site in org.onprem_sites else None
        job_pod = (
            pod_size_from_allocatable(site_nodes.cpu_millicores, site_nodes.memory_mib)
            if spec.provider == "onprem" and site_nodes is not None
            else pod_size(info.vcpu, info.memory_gib)
        )
        rate = 1.0 / mean_time_between_interruptions(nodes, spot, spec.failure.node_mtbf_hours, spot_rate)
        max_restarts = restart_budget(rate, spec.job.run_days * 24)
    ownership, ownership_note = training_ownership(spec, org, catalog, racks)
    run, run_note = training_run(spec, catalog, info, checkpoint, ownership)

    return TrainingPlan(
        login_memory_gib=login.memory_gib if login else 0,
        pcs_size=cluster_size(nodes + LOGIN_NODES) if pcs else None,
        block_end=block_end,
        block_checkpoint_at=block_checkpoint_at(block_end, write_seconds) if block_end else None,
        instance_type=info.name,
        nodes=nodes,
        gpus_per_node=info.accelerator_count,
        device_resource=catalog.k8s_resource(info.name),
        spot_interruption_rate_monthly=spot_rate,
        spot_interruption_source=spot_source,
        vcpus_per_node=info.vcpu,
        memory_gib_per_node=info.memory_gib,
        gpus=gpus,
        on_demand_nodes=on_demand,
        spot_nodes=spot,
        efa_interfaces_per_node=info.efa_interfaces if spec.interconnect.type == "efa" else 0,
        efa_cards=list(info.efa_cards) if spec.interconnect.type == "efa" else [],
        instance_store_gb=info.instance_store_gb,
        memory=memory,
        racks=racks,
        racks_note=racks_note,
        checkpoint=checkpoint,
        checkpoint_note=checkpoint_note,
        lustre_capacity_gib=lustre_gib,
        lustre_efa=efa_fs,
        lustre_preload=spec.lustre is not None
        and (spec.lustre.preload if spec.lustre.preload is not None else spec.lustre.dataset_gib is not None),
        lustre_throughput_mb_s=lustre_mb_s,
        quotas=quotas,
        node_placements=placements,
        site_gpu_allotment=allotment,
        job_pod=job_pod,
        job_max_restarts=max_restarts,
        network_gbps_per_node=info.network_gbps,
        network_topology=catalog.describes_topology(spec.compute.instance_type),
        layout=training_layout(spec, info),
        run=run,
        run_note=run_note,
        ownership=ownership,
        ownership_note=ownership_note,
    )


__all__ = ["EKS_SYSTEM_NODES", "LOGIN_NODES", "TrainingPlan", "lustre_efa", "plan_training"]
