"""Training compute: EFA where the hardware has it, memory fit, spot only with safe checkpointing."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.catalog import Catalog
from gpuinfra.plan import TrainingPlan
from gpuinfra.spec import TrainingSpec
from gpuinfra.validators.base import Failure, Level, rule

GB = 1e9


@rule(Level.ERROR)
def efa_not_enabled(spec: TrainingSpec, catalog: Catalog) -> Iterator[Failure]:
    """An EFA-capable instance type trains without EFA: collectives fall back to TCP."""
    info = catalog.instance(spec.compute.instance_type)
    if spec.provider == "aws" and info and info.efa_interfaces > 0 and spec.interconnect.type != "efa":
        yield Failure(
            f"{info.name} has {info.efa_interfaces} EFA interface(s) but interconnect is {spec.interconnect.type!r}",
            ("interconnect", "type"),
            "write `interconnect: {type: efa}`",
        )


@rule(Level.ERROR)
def efa_unsupported(spec: TrainingSpec, catalog: Catalog) -> Iterator[Failure]:
    """EFA is asked for on an instance type that has no EFA interface."""
    info = catalog.instance(spec.compute.instance_type)
    if spec.interconnect.type == "efa" and info and info.efa_interfaces == 0:
        capable = sorted(i.name for i in catalog.instance_types if i.efa_interfaces > 1 and i.accelerator)
        yield Failure(
            f"{info.name} has no EFA interface",
            ("compute", "instance_type"),
            f"write an EFA type, e.g. `instance_type: {capable[0]}` under compute ({', '.join(capable[:4])}), or "
            "`type: none` under interconnect"
            if capable
            else "write `type: none` under interconnect",
        )


@rule(Level.ERROR)
def instance_type_not_in_region(spec: TrainingSpec, catalog: Catalog) -> Iterator[Failure]:
    """The training instance type is not sold in the stack's region, by the catalog's price snapshot (its own list
    of the regions each type is offered in): RunInstances, the node group or the capacity block would fail there.
    A type the snapshot lists no regions for is unknown, and passes."""
    if spec.provider != "aws" or spec.region is None:
        return
    offered = set(catalog.offered_regions(spec.compute.instance_type)) | set(
        catalog.priced_regions(spec.compute.instance_type)
    )
    if offered and spec.region not in offered:
        yield Failure(
            f"{spec.compute.instance_type} is not offered in {spec.region} (catalog price snapshot, offered_in: "
            f"{len(offered)} regions)",
            ("region",),
            f"use a region that has it, e.g. {', '.join(sorted(offered)[:4])}, or another instance type "
            f"(`gpuinfra catalog {spec.compute.instance_type}` lists its regions)",
        )


@rule(Level.ERROR)
def interconnect_provider_mismatch(spec: TrainingSpec) -> Iterator[Failure]:
    """InfiniBand is for on-premises racks; EFA only exists on AWS."""
    if spec.provider == "aws" and spec.interconnect.type == "infiniband":
        yield Failure(
            "InfiniBand is not available on AWS",
            ("interconnect", "type"),
            "write `type: efa` under interconnect (AWS's fabric), or `provider: onprem`",
        )
    if spec.provider == "onprem" and spec.interconnect.type == "efa":
        yield Failure("EFA only exists on AWS", ("interconnect", "type"), "use infiniband on premises")


@rule(Level.ERROR)
def model_does_not_fit(spec: TrainingSpec, plan: TrainingPlan) -> Iterator[Failure]:
    """Weights, gradients and optimizer state, sharded over every GPU, exceed GPU memory."""
    mem = plan.memory
    if plan.layout is None and not mem.fits:
        need_gpus = -(-mem.total_bytes // mem.usable_bytes_per_gpu)
        yield Failure(
            f"{spec.model.parameters_billion:g}B parameters x {mem.bytes_per_parameter} B = "
            f"{mem.total_bytes / GB:,.0f} GB of training state; {mem.per_gpu_bytes / GB:,.1f} GB per GPU over "
            f"{mem.gpus} GPUs, but only {mem.usable_bytes_per_gpu / GB:,.1f} GB per GPU is usable",
            ("model", "parameters_billion"),
            f"write `node_count: {-(-need_gpus // plan.gpus_per_node)}` (at least) under compute, or a type with "
            "more GPU memory in `compute.instance_type`, or a lower `activation_headroom_fraction`",
        )


@rule(Level.ERROR)
def layout_does_not_fit(spec: TrainingSpec, plan: TrainingPlan) -> Iterator[Failure]:
    """The parallel layout cannot run, or its per-GPU weights, gradients, optimizer states and activations exceed
    GPU memory; the hint proposes the nearest layout that fits."""
    mem = plan.layout
    if mem is None or mem.fits:
        return
    if mem.proposal is not None:
        p = mem.proposal
        hint = (
            f"use {p.describe()} ({mem.proposal_bytes / GB if mem.proposal_bytes else 0:,.1f} GB per GPU): write "
            f"`parallelism: {{tensor: {p.tensor}, pipeline: {p.pipeline}, zero_stage: {p.zero_stage}, context: "
            f"{p.context}, sequence_parallel: {str(p.sequence_parallel).lower()}}}` under model and "
            f"`recompute: {p.recompute}` under model.architecture"
        )
    else:
        hint = (
            "no layout of this cluster fits: raise `compute.node_count`, shorten `model.architecture.sequence_length`, "
            "or use a type with more GPU memory in `compute.instance_type`"
        )
    what = "; ".join(mem.problems) or (
        f"{mem.layout.describe()} needs {mem.total_bytes / GB:,.1f} GB per GPU (weights {mem.weights_bytes / GB:,.1f}, "
        f"gradients {mem.gradients_bytes / GB:,.1f}, optimizer {mem.optimizer_bytes / GB:,.1f}, activations "
        f"{mem.activations_bytes / GB:,.1f}, buffers and reserve {(mem.buffers_bytes + mem.reserve_bytes) / GB:,.1f}) "
        f"but a GPU has {mem.gpu_bytes / GB:,.1f} GB"
    )
    yield Failure(what, ("model", "parallelism"), hint)


@rule(Level.ERROR)
def spot_without_checkpointing(spec: TrainingSpec) -> Iterator[Failure]:
    """Spot nodes are reclaimed with two minutes' notice; without checkpoints the work is lost."""
    if spec.compute.capacity.type == "spot" and spec.checkpointing is None:
        yield Failure(
            "spot capacity without checkpointing",
            ("compute", "capacity", "type"),
            f"write `checkpointing: {{target: {'lustre' if spec.lustre or spec.site_lustre else 's3'}, "
            "interval_minutes: 120}` (the planner then gives the optimum interval), or `type: on_demand` under "
            "compute.capacity",
        )


@rule(Level.WARNING)
def gang_on_spot(spec: TrainingSpec, plan: TrainingPlan) -> Iterator[Failure]:
    """The training job is one tightly coupled gang over every node, in one cluster placement group on AWS (PCS and
    EKS alike): any one spot reclaim stops the whole job until it restarts from its checkpoint, and spot capacity for
    many nodes in one placement group is rarely there at once (EC2 User Guide, placement groups: a cluster group's
    launches fail on insufficient capacity; review finding T15). The gang belongs on reserved capacity (an On-Demand
    Capacity Reservation or a Capacity Block) or on-demand; spot on the elastic nodes beside it."""
    if spec.provider != "aws" or plan.spot_nodes == 0:
        return
    yield Failure(
        f"{plan.spot_nodes} of the gang's {plan.nodes} nodes are spot in one cluster placement group: any one of "
        f"{plan.spot_nodes} reclaims stops the whole job, and {plan.spot_nodes} spot {plan.instance_type} in one "
        "placement group are rarely to be had at once",
        ("compute", "capacity", "type"),
        "hold the gang on reserved capacity: write `type: capacity_reservation` and `capacity_reservation_id: "
        "cr-0123456789abcdef0` (your On-Demand Capacity Reservation) under compute.capacity, or capacity_block; and "
        "give spot to the jobs that are not the gang with `elastic: {max_nodes: 2}` under compute (Slurm on AWS PCS)",
    )


@rule(Level.ERROR)
def on_demand_base_exceeds_nodes(spec: TrainingSpec) -> Iterator[Failure]:
    """The on-demand base cannot be larger than the cluster."""
    cap = spec.compute.capacity
    if cap.on_demand_base > spec.compute.node_count:
        yield Failure(
            f"on_demand_base {cap.on_demand_base} exceeds node_count {spec.compute.node_count}",
            ("compute", "capacity", "on_demand_base"),
            f"write `on_demand_base: {spec.compute.node_count}` (at most the node count) under compute.capacity",
        )


__all__ = [
    "efa_not_enabled",
    "efa_unsupported",
    "gang_on_spot",
    "interconnect_provider_mismatch",
    "layout_does_not_fit",
    "model_does_not_fit",
    "on_demand_base_exceeds_nodes",
    "spot_without_checkpointing",
]
