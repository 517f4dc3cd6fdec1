"""The cluster's /home on Filestore: one instance on the nodes' network, reached over the stack's private services
access range (the one Managed Lustre's producer network takes its addresses from: file v1
NetworkConfig.reservedIpRange names "one of the ranges associated with the private service access connection"),
its one share exported read-write to the node subnet alone. Root is not squashed: the nodes create users' home
directories as root (OS Login on the Slurm path, an init container on GKE), and no address outside the subnet is
exported to.

On GKE the trainers mount it through GKE's Filestore CSI driver: a static PersistentVolume for the instance (GKE
docs, "Access pre-existing Filestore instances": volumeHandle `modeInstance/<location>/<instance>/<share>`,
attributes `ip` and `volume`) and its claim in the team's namespace."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from gpuinfra.clouds.gcp.catalog.filestore import filestore_book
from gpuinfra.clouds.gcp.pulumi.base import opts
from gpuinfra.clouds.gcp.spec.filestore import GcpFilestore
from gpuinfra.clouds.gcp.spec.training import GcpTrainingSpec
from gpuinfra.pulumi.components.training.kubernetes import ClaimMount, static_claim

FILESTORE_DRIVER = "filestore.csi.storage.gke.io"
CONNECT_MODE = "PRIVATE_SERVICE_ACCESS"


def home_location(spec: GcpTrainingSpec, home: GcpFilestore) -> str:
    """A zonal tier's instance lives in the cluster's zone, a regional one in its region (the catalog's tiers)."""
    zonal = filestore_book().tiers[home.tier].location == "zone"
    return spec.compute.zone if zonal else spec.compute.region


def export_options(spec: GcpTrainingSpec) -> list[dict[str, Any]]:
    """The share's one export: read-write, root kept, to the node subnet (nic0 of every node) only."""
    return [
        {
            "ip_ranges": [spec.network.gvnic_subnet(0)],
            "access_mode": "READ_WRITE",
            "squash_mode": "NO_ROOT_SQUASH",
        }
    ]


def home_instance(
    name: str,
    spec: GcpTrainingSpec,
    network: pulumi.Input[str],
    reserved_range: pulumi.Input[str],
    access: pulumi.Resource,
    parent: pulumi.Resource,
) -> gcp.filestore.Instance:
    """The Filestore instance of `spec.filestore`, after the private services access peering exists."""
    home = spec.filestore
    assert home is not None
    return gcp.filestore.Instance(
        f"{name}-home",
        name=f"{name}-home",
        location=home_location(spec, home),
        tier=home.tier,
        protocol=home.protocol,
        file_shares={
            "name": home.share,
            "capacity_gb": home.capacity_gib,
            "nfs_export_options": export_options(spec),
        },
        networks=[
            {
                "network": pulumi.Output.from_input(network).apply(lambda n: str(n).rsplit("/", 1)[-1]),
                "modes": ["MODE_IPV4"],
                "connect_mode": CONNECT_MODE,
                "reserved_ip_range": reserved_range,
            }
        ],
        deletion_protection_enabled=True,
        deletion_protection_reason="the training cluster's /home",
        opts=opts(parent, depends_on=[access], protect=True),
    )


def _first_address(networks: Any) -> str:
    """The instance's NFS address: its first network's first IP (known once the instance exists)."""
    first = (networks or [None])[0]
    addresses = (first.get("ip_addresses") if isinstance(first, dict) else getattr(first, "ip_addresses", None)) or []
    return str(addresses[0]) if addresses else ""


def home_claim_name(cluster: str) -> str:
    return f"{cluster}-home"


def home_mounts(spec: GcpTrainingSpec) -> tuple[ClaimMount, ...]:
    """The trainer's /home mount (none without Filestore)."""
    if spec.filestore is None:
        return ()
    why = "/home on Filestore, through GKE's Filestore CSI driver (the claim home_volume makes)"
    return (ClaimMount("home", home_claim_name(spec.name), spec.filestore.mount_path, why),)


def home_volume(
    name: str,
    cluster: str,
    home: GcpFilestore,
    instance: gcp.filestore.Instance,
    namespace: pulumi.Input[str],
    labels: dict[str, str],
    o: pulumi.ResourceOptions,
) -> k8s.core.v1.PersistentVolumeClaim:
    """A static PersistentVolume for the share through GKE's Filestore CSI driver, and its claim in `namespace`."""
    csi = {
        "driver": FILESTORE_DRIVER,
        "volume_handle": pulumi.Output.concat("modeInstance/", instance.location, "/", instance.name, "/", home.share),
        "volume_attributes": {"ip": instance.networks.apply(_first_address), "volume": home.share},
    }
    return static_claim(f"{name}-home", labels, (home.capacity_gib, csi), home_claim_name(cluster), namespace, o)


__all__ = [
    "FILESTORE_DRIVER",
    "export_options",
    "home_claim_name",
    "home_instance",
    "home_location",
    "home_mounts",
    "home_volume",
]
