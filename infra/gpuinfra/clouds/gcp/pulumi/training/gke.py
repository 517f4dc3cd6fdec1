"""GKE for a training cluster, as Cluster Toolkit's gke-a3-ultragpu blueprint builds it: a zonal cluster with
private nodes on the system network, Dataplane V2 and multi-networking (the node pool's extra NICs), the Lustre and
Cloud Storage FUSE CSI drivers, Workload Identity; a small system pool; and the GPU pool: the machine type with its
GPUs, gVNIC, the second gVNIC and every MRDMA NIC as additional node networks, the compact placement policy, the
capacity the spec buys (a specific reservation, flex-start with its run duration, or Spot), node auto-repair."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp

from gpuinfra.clouds.gcp.pulumi.base import opts
from gpuinfra.clouds.gcp.pulumi.training.fabric import PODS_RANGE, SERVICES_RANGE, TrainingFabric
from gpuinfra.clouds.gcp.spec.training import GcpTrainingSpec

SYSTEM_MACHINE = ("e2-standard-2", 3)
"""Nodes for Kueue, JobSet and the cluster's add-ons beside the GPU nodes (untainted)."""
MASTER_CIDR = "172.16.0.32/28"
"""The control plane's private endpoint range (a /28 outside every node, pod and service range)."""
RESERVATION_KEY = "compute.googleapis.com/reservation-name"
GPU_POOL = "gpu"
"""The GPU node pool's name: its nodes carry it as cloud.google.com/gke-nodepool (Kueue's flavor selects them)."""


@dataclass(frozen=True)
class GpuPoolArgs:
    spec: GcpTrainingSpec
    accelerator: str
    """GKE's accelerator type (nvidia-h200-141gb)."""
    gpus_per_node: int
    labels: dict[str, str]


def control_plane_access(spec: GcpTrainingSpec) -> dict[str, Any]:
    """Private nodes always; the control plane reached from outside the VPC only by the spec's CIDRs (GKE's
    authorized networks), or not at all (a private endpoint) when it lists none."""
    cidrs = spec.scheduler.api_access.public_cidrs
    private = {
        "enable_private_nodes": True,
        "master_ipv4_cidr_block": MASTER_CIDR,
        "enable_private_endpoint": not cidrs,
    }
    return {
        "private_cluster_config": private,
        "master_authorized_networks_config": {
            "cidr_blocks": [{"cidr_block": c, "display_name": f"deploy-{i}"} for i, c in enumerate(cidrs)]
        },
    }


def _capacity(spec: GcpTrainingSpec) -> dict[str, Any]:
    """The node config's share of the consumption model: a reservation's affinity, flex-start or Spot. A flex-start
    node's run duration is its ProvisioningRequest's (provisioning.py), not the node config's."""
    capacity = spec.compute.capacity
    model = capacity.model
    if model == "reservation":
        return {
            "reservation_affinity": {
                "consume_reservation_type": "SPECIFIC_RESERVATION",
                "key": RESERVATION_KEY,
                "values": [capacity.reservation],
            }
        }
    affinity = {"reservation_affinity": {"consume_reservation_type": "NO_RESERVATION"}}
    if model == "flex_start":
        return {**affinity, "flex_start": True}
    if model == "spot":
        return {**affinity, "spot": True}
    return affinity


def _node_config(args: GpuPoolArgs) -> dict[str, Any]:
    spec = args.spec
    return {
        "machine_type": spec.compute.machine_type,
        "disk_size_gb": spec.compute.boot_disk_gib,
        "disk_type": "hyperdisk-balanced",
        "gvnic": {"enabled": True},
        "guest_accelerators": [
            {
                "type": args.accelerator,
                "count": args.gpus_per_node,
                "gpu_driver_installation_config": {"gpu_driver_version": "LATEST"},
            }
        ],
        "labels": {**args.labels, "gpuinfra-role": "gpu"},
        "workload_metadata_config": {"mode": "GKE_METADATA"},
        "shielded_instance_config": {"enable_secure_boot": True, "enable_integrity_monitoring": True},
        "oauth_scopes": ["https://www.googleapis.com/auth/cloud-platform"],
        **_capacity(spec),
    }


def _queued(spec: GcpTrainingSpec) -> dict[str, Any]:
    """Flex-start for a gang is queued provisioning: the pool takes only ProvisioningRequests (Kueue's, from the
    queue's admission check), so the gang's nodes come all at once; such a pool repairs and upgrades no node
    (Cluster Toolkit examples/gke-dws-flex-start: `auto_repair: false`, `auto_upgrade: false`). Otherwise node
    auto-repair."""
    if spec.compute.capacity.model == "flex_start":
        return {"queued_provisioning": {"enabled": True}, "management": {"auto_repair": False, "auto_upgrade": False}}
    return {"management": {"auto_repair": True, "auto_upgrade": False}}


class TrainingGke(pulumi.ComponentResource):
    def __init__(
        self, name: str, project: str, args: GpuPoolArgs, fabric: TrainingFabric, parent: pulumi.Resource
    ) -> None:
        super().__init__("gpuinfra:training:GcpGke", name, None, opts(parent))
        spec = args.spec
        system = fabric.gvnic_subnets[0]
        self.cluster = gcp.container.Cluster(
            f"{name}-gke",
            name=name,
            location=spec.compute.zone,
            network=system.network,
            subnetwork=system.id,
            remove_default_node_pool=True,
            initial_node_count=1,
            min_master_version=spec.scheduler.kubernetes_version,
            release_channel={"channel": spec.scheduler.release_channel},
            networking_mode="VPC_NATIVE",
            ip_allocation_policy={
                "cluster_secondary_range_name": PODS_RANGE,
                "services_secondary_range_name": SERVICES_RANGE,
            },
            **control_plane_access(spec),
            datapath_provider="ADVANCED_DATAPATH",
            enable_multi_networking=True,
            workload_identity_config={"workload_pool": f"{project}.svc.id.goog"},
            addons_config={
                "gcs_fuse_csi_driver_config": {"enabled": True},
                "lustre_csi_driver_config": {"enabled": True},
                **({"gcp_filestore_csi_driver_config": {"enabled": True}} if spec.filestore else {}),  # /home
            },
            resource_labels=args.labels,
            deletion_protection=True,
            opts=opts(self),
        )
        self.system_pool = gcp.container.NodePool(
            f"{name}-system",
            name="system",
            cluster=self.cluster.id,
            location=spec.compute.zone,
            node_count=SYSTEM_MACHINE[1],
            node_config={
                "machine_type": SYSTEM_MACHINE[0],
                "labels": {**args.labels, "gpuinfra-role": "system"},
                "workload_metadata_config": {"mode": "GKE_METADATA"},
            },
            management={"auto_repair": True, "auto_upgrade": True},
            opts=opts(self),
        )
        self.gpu_pool = self._gpu_pool(name, args, fabric)
        self.register_outputs({"cluster": self.cluster.name, "endpoint": self.cluster.endpoint})

    def _gpu_pool(self, name: str, args: GpuPoolArgs, fabric: TrainingFabric) -> gcp.container.NodePool:
        """The GPU nodes: every extra NIC an additional node network, the placement, the capacity."""
        spec = args.spec
        extra = [{"network": s.network, "subnetwork": s.id} for s in fabric.gvnic_subnets[1:]]
        extra += [{"network": s.network, "subnetwork": s.id} for s in fabric.rdma_subnets]
        elastic = spec.compute.capacity.model in ("flex_start", "spot")
        sizing: dict[str, Any] = (
            {
                "initial_node_count": 0,
                "autoscaling": {
                    "total_min_node_count": 0,
                    "total_max_node_count": spec.compute.node_count,
                    "location_policy": "ANY",
                },
            }
            if elastic
            else {"node_count": spec.compute.node_count}
        )
        placement = (
            {"placement_policy": {"type": "COMPACT", "policy_name": fabric.placement.name}}
            if fabric.placement is not None
            else {}
        )
        return gcp.container.NodePool(
            f"{name}-gpu",
            name=GPU_POOL,
            cluster=self.cluster.id,
            location=spec.compute.zone,
            node_locations=[spec.compute.zone],
            node_config=_node_config(args),
            network_config={"additional_node_network_configs": extra},
            **_queued(spec),
            upgrade_settings={"strategy": "SURGE", "max_surge": 0, "max_unavailable": 1},
            **sizing,
            **placement,
            opts=opts(self),
        )


__all__ = ["GPU_POOL", "GpuPoolArgs", "TrainingGke"]
