"""On-premises training on an existing Kubernetes cluster: rack labels on the named nodes, a Kueue
Topology (rack, host) with a flavor bound to it, InfiniBand RDMA devices, Lustre as a static volume."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from infra.plan import TrainingPlan
from infra.pulumi.components.training.cluster import training_env, workload_labels
from infra.pulumi.components.training.kubernetes import (
    SITE_LABEL,
    Flavor,
    LustreVolume,
    TrainingWorkloads,
    WorkloadArgs,
)
from infra.spec import TrainingSpec


def onprem_workloads(spec: TrainingSpec, plan: TrainingPlan, tags: dict[str, str]) -> TrainingWorkloads:
    assert spec.onprem is not None and spec.site is not None
    namespace, _, short = spec.onprem.kubeconfig_key.rpartition(":")
    provider = k8s.Provider(
        f"k8s-{spec.site}",
        kubeconfig=pulumi.Config(namespace or None).require_secret(short),
        enable_server_side_apply=True,
    )
    topology = f"{spec.site}-racks"
    fabric_per_node = 1 if spec.interconnect.type == "infiniband" else 0
    site_fs = spec.site_lustre
    mount_path = site_fs.mount_path if site_fs else "/lustre"
    return TrainingWorkloads(
        spec.name,
        WorkloadArgs(
            cluster=spec.name,
            namespace=spec.scheduler.namespace,
            queue=spec.scheduler.partition,
            platform="onprem",
            fabric=spec.interconnect.type,
            nodes=plan.nodes,
            gpus_per_node=plan.gpus_per_node,
            fabric_per_node=fabric_per_node,
            flavors=[
                Flavor(
                    f"{spec.site}-gpu",
                    {SITE_LABEL: spec.site},
                    plan.gpus,
                    plan.nodes * fabric_per_node,
                    topology=topology,
                )
            ],
            lustre=LustreVolume(
                capacity_gib=round(site_fs.capacity_tib * 1024),
                mount_path=mount_path,
                host_path=site_fs.mount_path,
                annotations={"gpuinfra.io/lustre-mgs": site_fs.mgs_nids, "gpuinfra.io/lustre-fsname": site_fs.fs_name},
            )
            if site_fs
            else None,
            env=training_env(spec, plan, mount_path),
            labels=workload_labels(tags),
            placements=plan.node_placements,
            site=spec.site,
            topology=topology,
        ),
        provider,
    )


__all__ = ["onprem_workloads"]
