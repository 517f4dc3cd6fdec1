"""The Google training plan: the TrainingPlan AWS's cluster gets, computed by the same cloud-neutral steps (memory
fit, the parallel layout, the step model, the checkpoint interval, the run's days and goodput), run on Google's
machine types (training_catalog), with what is Google's beside it: the fabric, the consumption model with its
notice window, and Managed Lustre's tier.

What differs from AWS is stated where it enters: a Spot node gets at most 30 s of notice (the catalog's figure,
the cloud registry's spot_notice_seconds), an on-demand node an hour before host maintenance, and Lustre's write
bandwidth is its capacity in TiB times its tier."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from gpuinfra.catalog import Catalog, InstanceType
from gpuinfra.clouds.gcp.catalog.training import training_book, training_catalog
from gpuinfra.clouds.gcp.plan.jobs import job_fields
from gpuinfra.clouds.gcp.plan.training_quotas import training_quota_needs
from gpuinfra.clouds.gcp.spec.training import GcpTrainingSpec
from gpuinfra.plan.checkpoint import CheckpointPlan, planned_checkpoint
from gpuinfra.plan.economics import dense_peak, restart_parts, step_inputs, sweep_limit, training_layout
from gpuinfra.plan.flops import DEFAULT_MFU, DEFAULT_SCALING_PER_DOUBLING, training_flops
from gpuinfra.plan.interruption import DEFAULT_MONTHLY
from gpuinfra.plan.memory import Plain, TrainingMemory, model_memory
from gpuinfra.plan.runtime import RunInputs, RunPlan, plan_run
from gpuinfra.plan.training import TrainingPlan
from gpuinfra.spec import Organization

PURCHASE = {"on_demand": "on_demand", "reservation": "on_demand", "spot": "spot"}
"""The rates each consumption model bills at (a reservation: on-demand rates, gcp-reservations); flex-start none."""
FABRIC = "infiniband"
"""GPUDirect RDMA over RoCE takes the RDMA fabrics' scaling figure (plan/flops.py: Llama 3's RoCE runs are in it)."""


class GcpFabric(Plain):
    """The node's networks: gVNICs in regular VPCs at an MTU, MRDMA NICs in one zonal RoCE VPC."""

    series: str
    gvnics: int
    mrdma_nics: int
    mtu: int
    roce_profile: str
    """`<zone>-vpc-roce`: the network profile of the cluster's zone."""
    rdma_gbps: float
    source: str


class GcpTrainingPlan(TrainingPlan):
    """AWS's TrainingPlan (the report reads it the same way) with Google's own figures."""

    zone: str
    region: str
    fabric: GcpFabric | None
    consumption: str
    """reservation, flex_start, spot or on_demand."""
    preemption_notice_seconds: int | None
    """Spot: the most warning a preemption gets (30 s); None when the nodes are not Spot."""
    maintenance_notice_seconds: int
    """An on-demand or reserved node's warning before host maintenance stops it (one hour)."""
    flex_start_max_hours: int
    lustre_step_gib: int | None = None
    lustre_nearest_gib: int | None = None
    """The smallest capacity on the tier's steps that holds the spec's (for the finding when it is off them)."""


def _machine(spec: GcpTrainingSpec, catalog: Catalog) -> InstanceType | None:
    return catalog.instance(spec.compute.machine_type)


def _memory(spec: GcpTrainingSpec, info: InstanceType) -> TrainingMemory:
    return model_memory(spec.model, spec.compute.node_count * info.accelerator_count, info.accelerator_memory_mib)


def _lustre(spec: GcpTrainingSpec) -> dict[str, int | float | None]:
    """The file system's capacity, aggregate throughput (MB/s: TiB x tier) and the tier's steps."""
    if spec.lustre is None:
        return {"lustre_capacity_gib": None, "lustre_throughput_mb_s": None}
    tier = training_book().lustre_tiers[spec.lustre.throughput_mb_s_per_tib]
    gib = spec.lustre.capacity_gib
    return {
        "lustre_capacity_gib": gib,
        "lustre_throughput_mb_s": gib / 1024 * tier.mb_s_per_tib,
        "lustre_step_gib": tier.step_gib,
        "lustre_nearest_gib": tier.nearest(gib),
    }


def _spot_nodes(spec: GcpTrainingSpec) -> int:
    return spec.compute.node_count if spec.compute.capacity.model == "spot" else 0


def _spot_rate(spec: GcpTrainingSpec) -> tuple[float, str]:
    given = spec.failure.spot_interruption_rate_monthly
    if given is not None:
        return given, "failure.spot_interruption_rate_monthly"
    return DEFAULT_MONTHLY, f"default {DEFAULT_MONTHLY:.0%}/month (Google publishes no interruption rates)"


def _fits(spec: GcpTrainingSpec, info: InstanceType) -> Callable[[int], bool]:
    """Whether the model fits on n nodes, the way the plan checks the spec's own count (the layout when the spec
    gives an architecture, else the flat memory share)."""

    def fits(nodes: int) -> bool:
        resized = spec.model_copy(update={"compute": spec.compute.model_copy(update={"node_count": nodes})})
        layout = training_layout(resized, info)  # type: ignore[arg-type]  # the neutral fields it reads
        return layout.fits if layout is not None else _memory(resized, info).fits

    return fits


def _run(
    spec: GcpTrainingSpec, catalog: Catalog, info: InstanceType, checkpoint: CheckpointPlan | None, spot_rate: float
) -> tuple[RunPlan | None, str | None]:
    """The run's days and goodput on Google's machine: the step model of the layout (catalog H200/B200 figures,
    the MRDMA NICs as the fabric); its cost unknown until the catalog carries A3 Ultra and A4 prices."""
    run = spec.run
    if run is None:
        return None, None
    precision = spec.model.precision
    peaked = dense_peak(catalog, info, precision)
    if isinstance(peaked, str):
        return None, peaked
    peak, tflops = peaked
    step = None if run.mfu or run.scaling_per_doubling else step_inputs(spec, catalog, info)  # type: ignore[arg-type]
    domain = step.tflops_per_gpu(info.nvlink_gpus) if step else None
    active = (spec.model.active_parameters_billion or spec.model.parameters_billion) * 1e9
    inputs = RunInputs(
        tokens=run.tokens_billion * 1e9,
        active_parameters=active,
        flops=training_flops(active, run.tokens_billion * 1e9),
        precision=precision,
        peak_tflops=tflops,
        peak_source=peak.source,
        mfu=run.mfu or (domain / tflops if domain else DEFAULT_MFU[precision]),
        mfu_source="run.mfu" if run.mfu else "step model (plan/throughput.py)" if step else "default MFU",
        scaling_per_doubling=run.scaling_per_doubling or DEFAULT_SCALING_PER_DOUBLING[FABRIC] or 1.0,
        scaling_source="run.scaling_per_doubling" if run.scaling_per_doubling else "RDMA fabrics' default",
        gpus_per_node=info.accelerator_count,
        nodes_per_domain=info.nodes_per_nvlink_domain,
        write_seconds=checkpoint.write_seconds if checkpoint else None,
        interval_minutes=spec.checkpointing.interval_minutes if spec.checkpointing else None,
        restart_minutes=run.restart_minutes,
        restart_parts=restart_parts(catalog, info, checkpoint),
        node_mtbf_hours=spec.failure.node_mtbf_hours,
        spot_interruption_rate_monthly=spot_rate,
        capacity="spot" if _spot_nodes(spec) else "on_demand",
        on_demand_base=0,
        price_sources=_price_sources(spec, info),
        step=step,
    )

    price, floor = _node_price(spec, info)
    nodes = spec.compute.node_count
    return plan_run(inputs, nodes, run.target_days, price, _fits(spec, info), sweep_limit(nodes), floor), None


def _node_price(spec: GcpTrainingSpec, info: InstanceType) -> tuple[Callable[[int], Decimal | None], Decimal | None]:
    """What `nodes` nodes cost an hour at the rate the capacity is bought at (a reservation bills on-demand rates;
    flex-start's own rates are not in the catalog: unknown), and that rate per node (the run sweep's floor)."""
    purchase = PURCHASE.get(spec.compute.capacity.model)
    rate = training_book().vm_hourly(info.name, spec.compute.region, purchase) if purchase else None

    def price(nodes: int) -> Decimal | None:
        return rate * nodes if rate is not None else None

    return price, rate


def _price_sources(spec: GcpTrainingSpec, info: InstanceType) -> list[str]:
    purchase = PURCHASE.get(spec.compute.capacity.model)
    found = training_book().rate_source(info.name, spec.compute.region, purchase) if purchase else None
    return [found] if found else []


def _fabric(spec: GcpTrainingSpec, info: InstanceType) -> GcpFabric | None:
    fabric = training_book().fabric_of(info.name)
    if fabric is None:
        return None
    return GcpFabric(
        series=info.family,
        gvnics=fabric.gvnics,
        mrdma_nics=fabric.mrdma_nics,
        mtu=fabric.mtu,
        roce_profile=f"{spec.compute.zone}-{fabric.roce_profile}",
        rdma_gbps=info.network_baseline_gbps,
        source=fabric.source,
    )


def plan_gcp_training(spec: GcpTrainingSpec, org: Organization, base: Catalog) -> GcpTrainingPlan:
    """The outline: the machine, memory, Lustre, checkpoint, run, quotas, and Google's fabric and notices."""
    catalog = training_catalog(base)
    info = _machine(spec, catalog)
    if info is None:
        raise ValueError(f"{spec.compute.machine_type}: not in Google's training catalog")  # refused at load
    book = training_book()
    memory = _memory(spec, info)
    lustre = _lustre(spec)
    spot_rate, spot_source = _spot_rate(spec)
    spot = _spot_nodes(spec)
    nodes = spec.compute.node_count
    checkpoint, note = planned_checkpoint(
        spec.checkpointing,
        memory.total_bytes,
        lustre["lustre_throughput_mb_s"],
        nodes,
        spot,
        spec.failure.node_mtbf_hours,
        spot_rate,
    )
    run, run_note = _run(spec, catalog, info, checkpoint, spot_rate)
    return GcpTrainingPlan(
        instance_type=info.name,
        nodes=nodes,
        gpus_per_node=info.accelerator_count,
        device_resource="nvidia.com/gpu",
        vcpus_per_node=info.vcpu,
        memory_gib_per_node=info.memory_gib,
        gpus=nodes * info.accelerator_count,
        on_demand_nodes=nodes - spot,
        spot_nodes=spot,
        spot_interruption_rate_monthly=spot_rate,
        spot_interruption_source=spot_source,
        efa_interfaces_per_node=0,
        memory=memory,
        racks=None,
        checkpoint=checkpoint,
        checkpoint_note=note,
        quotas=training_quota_needs(spec, org, info),
        network_gbps_per_node=info.network_baseline_gbps,
        layout=training_layout(spec, info),  # type: ignore[arg-type]  # the neutral fields it reads
        run=run,
        run_note=run_note,
        zone=spec.compute.zone,
        region=spec.compute.region,
        fabric=_fabric(spec, info),
        consumption=spec.compute.capacity.model,
        preemption_notice_seconds=book.consumption["spot_notice_seconds"].value if spot else None,
        maintenance_notice_seconds=book.consumption["maintenance_notice_seconds"].value,
        flex_start_max_hours=book.consumption["flex_start_max_hours"].value,
        **job_fields(spec, info.vcpu, info.memory_gib, spot, spot_rate),
        **lustre,  # type: ignore[arg-type]
    )


__all__ = ["GcpFabric", "GcpTrainingPlan", "plan_gcp_training"]
