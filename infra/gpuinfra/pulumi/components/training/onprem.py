"""On-premises training on an existing, shared Kubernetes cluster: the site inventory's rack, cooling-loop and
power-domain labels on the named nodes, a Kueue Topology (rack, host) with the fabric domain's flavor bound to
it in the site's cohort, the RDMA devices the site's plugin advertises, and the site's Lustre mount, checked.
Kueue, JobSet and the device plugins are the site's, never installed here."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from gpuinfra.plan import TrainingPlan
from gpuinfra.pulumi.components.training.cluster import training_env, workload_labels
from gpuinfra.pulumi.components.training.kubernetes import (
    COOLING_LABEL,
    DOMAIN_LABEL,
    HOST_LABEL,
    POOL_LABEL,
    POWER_LABEL,
    RACK_LABEL,
    SITE_LABEL,
    Flavor,
    JobArgs,
    NodeLabels,
    SiteMount,
    Topology,
    TrainingWorkloads,
    WorkloadArgs,
)
from gpuinfra.pulumi.components.training.pruner import retention_for
from gpuinfra.pulumi.components.training.remediator import GpuRemediation, RemediationArgs
from gpuinfra.pulumi.components.training.workloads import flavor_name, job_args, queue_and_gang
from gpuinfra.spec import TrainingSpec


def gpu_labels(spec: TrainingSpec) -> dict[str, str]:
    """What every node of this cluster carries: the pool, the fabric domain (this cluster's systems) and site."""
    assert spec.site is not None
    return {POOL_LABEL: "gpu", DOMAIN_LABEL: spec.name, SITE_LABEL: spec.site}


def inventory_labels(spec: TrainingSpec) -> list[NodeLabels]:
    """Each node's labels from where the site's inventory says it is (never from its name or order)."""
    assert spec.onprem is not None
    common = gpu_labels(spec)
    return [
        NodeLabels(
            n.node,
            {**common, RACK_LABEL: n.rack, COOLING_LABEL: n.cooling_loop, POWER_LABEL: n.power_domain},
        )
        for n in spec.onprem.inventory
    ]


def site_provider(spec: TrainingSpec) -> k8s.Provider:
    """The site's shared cluster, through the kubeconfig in the stack's secret config."""
    assert spec.onprem is not None and spec.site is not None
    namespace, _, short = spec.onprem.kubeconfig_key.rpartition(":")
    return k8s.Provider(
        f"k8s-{spec.site}",
        kubeconfig=pulumi.Config(namespace or None).require_secret(short),
        enable_server_side_apply=True,
    )


def remediation_args(
    spec: TrainingSpec, plan: TrainingPlan, tags: dict[str, str], image: str, conditions: tuple[str, ...]
) -> RemediationArgs:
    """The GPU remediation CronJob over this cluster's nodes (the fabric domain's label)."""
    return RemediationArgs(
        cluster=spec.name,
        namespace=spec.scheduler.namespace,
        image=image,
        selector=f"{DOMAIN_LABEL}={spec.name}",
        resource=plan.device_resource or "nvidia.com/gpu",
        conditions=conditions,
        labels=workload_labels(tags),
    )


def onprem_workload_args(
    spec: TrainingSpec, plan: TrainingPlan, tags: dict[str, str], job: JobArgs, fabric_device: str
) -> WorkloadArgs:
    """The team's queues and job on the site: the rack topology, the fabric domain's flavor in the site's cohort,
    the site's Lustre (checked in every pod before it writes) and the inventory's node labels."""
    assert spec.site is not None and spec.site_lustre is not None
    topology = Topology(f"{spec.name}-racks", (RACK_LABEL, HOST_LABEL), RACK_LABEL)
    site_fs = spec.site_lustre
    return WorkloadArgs(
        **queue_and_gang(spec, plan),
        platform="onprem",
        fabric_per_node=1 if spec.interconnect.type == "infiniband" else 0,
        flavor=Flavor(flavor_name(spec), {DOMAIN_LABEL: spec.name, SITE_LABEL: spec.site}, topology.name),
        job=job,
        env=training_env(spec, plan, site_fs.mount_path),
        labels=workload_labels(tags),
        mount_path=site_fs.mount_path,
        site_mount=SiteMount(site_fs.mount_path, site_fs.fs_name),
        topology=topology,
        node_labels=inventory_labels(spec),
        cohort=spec.site,
        retention=retention_for(spec, site_fs.mount_path, None, site_fs.fs_name),
        fabric_device=fabric_device,
    )


def onprem_workloads(
    spec: TrainingSpec,
    plan: TrainingPlan,
    tags: dict[str, str],
    fabric_device: str = "",
    node_problem_conditions: tuple[str, ...] = (),
) -> TrainingWorkloads:
    """The team's namespaced objects and queues on the site's shared cluster. Kueue, JobSet and the device plugins
    are the site's (`site-components-missing` checks they are declared); `fabric_device` is the resource the site's
    RDMA plugin advertises the compute rails as."""
    assert spec.onprem is not None and spec.site is not None and spec.site_lustre is not None
    provider = site_provider(spec)
    job = job_args(spec, plan, spec.site_lustre.mount_path)
    GpuRemediation(
        f"{spec.name}-gpu-remediation",
        remediation_args(spec, plan, tags, job.image, node_problem_conditions),
        provider,
    )
    return TrainingWorkloads(spec.name, onprem_workload_args(spec, plan, tags, job, fabric_device), provider)


__all__ = [
    "gpu_labels",
    "inventory_labels",
    "onprem_workload_args",
    "onprem_workloads",
    "remediation_args",
    "site_provider",
]
