"""The cluster's storage: Managed Lustre in the cluster's zone and Filestore for /home (filestore.py), both reached
over private services access (a reserved range peered to Google's producer network: Cluster Toolkit's
managed-lustre module requires it), and the Cloud
Storage buckets for the training data and the checkpoints (uniform access, public access prevented; the
checkpoint bucket versioned, its superseded versions deleted after the retention, as the S3 bucket's lifecycle
does on AWS)."""

from __future__ import annotations

import ipaddress

import pulumi
import pulumi_gcp as gcp

from gpuinfra.clouds.gcp.pulumi.base import opts
from gpuinfra.clouds.gcp.pulumi.training.filestore import home_instance
from gpuinfra.clouds.gcp.spec.training import GcpTrainingSpec

SERVICE_NETWORKING = "servicenetworking.googleapis.com"


def _bucket(
    name: str, bucket: str, region: str, parent: pulumi.Resource, retention_days: int | None
) -> gcp.storage.Bucket:
    lifecycle = (
        [
            {
                "action": {"type": "Delete"},
                "condition": {"days_since_noncurrent_time": retention_days, "with_state": "ARCHIVED"},
            }
        ]
        if retention_days is not None
        else []
    )
    return gcp.storage.Bucket(
        name,
        name=bucket,
        location=region.upper(),
        uniform_bucket_level_access=True,
        public_access_prevention="enforced",
        versioning={"enabled": retention_days is not None},
        lifecycle_rules=lifecycle,
        force_destroy=False,
        opts=opts(parent, protect=True),
    )


class TrainingStorage(pulumi.ComponentResource):
    def __init__(self, name: str, spec: GcpTrainingSpec, network: pulumi.Input[str], parent: pulumi.Resource) -> None:
        super().__init__("gpuinfra:training:GcpStorage", name, None, opts(parent))
        region = spec.compute.region
        retention = spec.checkpointing.retention_days if spec.checkpointing else 14
        self.data = _bucket(f"{name}-data", spec.storage.data_bucket, region, self, None)
        self.checkpoints = _bucket(f"{name}-checkpoints", spec.storage.checkpoint_bucket, region, self, retention)
        self.lustre: gcp.lustre.Instance | None = None
        self.home: gcp.filestore.Instance | None = None
        if spec.lustre is not None or spec.filestore is not None:
            self._managed_services(name, spec, network)
        self.register_outputs({"checkpoint_bucket": self.checkpoints.url})

    def _managed_services(self, name: str, spec: GcpTrainingSpec, network: pulumi.Input[str]) -> None:
        """Managed Lustre and /home's Filestore, each after the private services access peering they share."""
        access, reserved = self._private_service_access(name, spec, network)
        if spec.filestore is not None:
            self.home = home_instance(name, spec, network, reserved.name, access, self)
        if spec.lustre is not None:
            self.lustre = gcp.lustre.Instance(
                f"{name}-lustre",
                instance_id=f"{name}-lustre",
                location=spec.compute.zone,
                capacity_gib=str(spec.lustre.capacity_gib),
                per_unit_storage_throughput=str(spec.lustre.throughput_mb_s_per_tib),
                filesystem=spec.lustre.filesystem,
                network=network,
                gke_support_enabled=spec.scheduler.type == "gke",  # GKE's Lustre CSI driver mounts it
                opts=opts(self, depends_on=[access]),
            )

    def _private_service_access(
        self, name: str, spec: GcpTrainingSpec, network: pulumi.Input[str]
    ) -> tuple[gcp.servicenetworking.Connection, gcp.compute.GlobalAddress]:
        """The reserved range (VPC_PEERING) and the peering to Google's service producer network."""
        block = ipaddress.ip_network(spec.network.private_service_cidr)
        reserved = gcp.compute.GlobalAddress(
            f"{name}-psa",
            name=f"{name}-psa",
            purpose="VPC_PEERING",
            address_type="INTERNAL",
            address=str(block.network_address),
            prefix_length=block.prefixlen,
            network=network,
            opts=opts(self),
        )
        peering = gcp.servicenetworking.Connection(
            f"{name}-psa-peering",
            network=network,
            service=SERVICE_NETWORKING,
            reserved_peering_ranges=[reserved.name],
            opts=opts(self),
        )
        return peering, reserved


__all__ = ["TrainingStorage"]
