"""GKE's multi-network objects for the GPU nodes' extra NICs: per additional VPC subnet a `GKENetworkParamSet` (the
VPC and subnet, and how the NIC reaches the pod: `NetDevice` for the second gVNIC, `RDMA` for an MRDMA NIC) and a
`Network` of type `Device` naming it. A pod's `networking.gke.io/interfaces` annotation names these Networks
(jobset.py); GKE refuses a pod whose networks do not exist, so without them no trainer starts.

The shape is GKE's ("Create an AI-optimized GKE cluster with custom configuration", A3 Ultra and A4: `gvnic-1`
with deviceMode NetDevice, `rdma-0`..`rdma-7` with deviceMode RDMA, each Network `type: Device` with a parametersRef
to its param set); the fields are held to the CRDs of GoogleCloudPlatform/gke-networking-api at 34c617f
(config/crds/networking.gke.io_{networks,gkenetworkparamsets}.yaml) by tests/clouds/test_gcp_networks.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpuinfra.clouds.gcp.plan.training import GcpFabric
from gpuinfra.clouds.gcp.pulumi.training.fabric import gvnic_vpc, rdma_vpc

API = "networking.gke.io/v1"
POD_NETWORK = "default"
"""GKE's name for the pod network every pod has (eth0)."""


@dataclass(frozen=True)
class PodNetwork:
    """One extra node NIC as pods see it: the Network's name, how the NIC is handed to the pod, its VPC."""

    name: str
    device_mode: str
    vpc: str
    subnet: str


def pod_networks(cluster: str, fabric: GcpFabric) -> list[PodNetwork]:
    """The node's NICs past the first, in the order GKE's manifests attach them: each further gVNIC (`gvnic-1`..),
    then each MRDMA NIC (`rdma-0`..)."""
    out = [PodNetwork(f"gvnic-{i}", "NetDevice", *gvnic_vpc(cluster, i)) for i in range(1, fabric.gvnics)]
    out += [PodNetwork(f"rdma-{i}", "RDMA", *rdma_vpc(cluster, i)) for i in range(fabric.mrdma_nics)]
    return out


def network_objects(network: PodNetwork, labels: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The GKENetworkParamSet and the Network of one NIC (both cluster-scoped), as their manifests."""
    meta = {"name": network.name, "labels": labels}
    params = {
        "apiVersion": API,
        "kind": "GKENetworkParamSet",
        "metadata": meta,
        "spec": {"vpc": network.vpc, "vpcSubnet": network.subnet, "deviceMode": network.device_mode},
    }
    device = {
        "apiVersion": API,
        "kind": "Network",
        "metadata": meta,
        "spec": {
            "type": "Device",
            "parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": network.name},
        },
    }
    return params, device


def create_networks(
    name: str, networks: list[PodNetwork], labels: dict[str, str], o: pulumi.ResourceOptions
) -> list[pulumi.Resource]:
    """Both objects per NIC on the cluster's provider (GKE serves their CRDs on a multi-networking cluster)."""
    made: list[pulumi.Resource] = []
    for network in networks:
        first: list[pulumi.Resource] = []  # the Network after its param set
        for role, manifest in zip(("params", "network"), network_objects(network, labels), strict=True):
            first.append(
                k8s.apiextensions.CustomResource(
                    f"{name}-{network.name}-{role}",
                    api_version=API,
                    kind=manifest["kind"],
                    metadata=manifest["metadata"],
                    spec=manifest["spec"],
                    opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=list(first))),
                )
            )
        made += first
    return made


__all__ = ["API", "POD_NETWORK", "PodNetwork", "create_networks", "network_objects", "pod_networks"]
