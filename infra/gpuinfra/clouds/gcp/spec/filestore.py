"""Filestore for the training cluster's /home: one instance (a tier, a capacity on the tier's steps, one NFS
share) on the nodes' network, reached over private services access, exported read-write to the node subnet only.
Cluster Toolkit's A3 Ultra blueprints put /home on a zonal Filestore instance ("We suggest using a filestore zonal
instance for the best NFS performance", examples/machine-learning/a3-ultragpu-8g/README.md); the capacity's
steps are the catalog's (clouds/gcp/catalog/data/filestore.yaml), judged by `gcp-filestore-capacity-off-tier`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from gpuinfra.spec.base import SpecModel, updates

FilestoreTierName = Literal["ZONAL", "REGIONAL", "ENTERPRISE", "BASIC_HDD", "BASIC_SSD"]
"""The tiers of the file v1 Discovery document's Instance.tier enum that Google still sells (STANDARD, PREMIUM and
HIGH_SCALE_SSD are the former names of BASIC_HDD, BASIC_SSD and ZONAL)."""


class GcpFilestore(SpecModel):
    """The cluster's /home: an NFS share every node (and every trainer pod, on GKE) mounts."""

    tier: FilestoreTierName = Field("ZONAL", json_schema_extra=updates("replace"))
    """ZONAL (in the cluster's zone: Cluster Toolkit's choice for /home), REGIONAL, ENTERPRISE, BASIC_HDD or
    BASIC_SSD."""
    capacity_gib: Annotated[int, Field(ge=1024, le=102400)] = Field(json_schema_extra=updates("in_place"))
    """On the tier's steps (ZONAL: 1,024 to 9,984 GiB in 256 GiB steps, then 10,240 to 102,400 in 2,560)."""
    share: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,62}$")] = Field(
        "home", json_schema_extra=updates("replace")
    )
    """The NFS share's name (lower-case letters, digits and underscores; at most 16 characters on a basic tier)."""
    mount_path: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9/_-]*$")] = "/home"
    """Where the nodes and the trainers see the share."""
    protocol: Literal["NFS_V3", "NFS_V4_1"] = Field("NFS_V3", json_schema_extra=updates("replace"))
    """NFS_V3 (Google's default) or NFS_V4_1 (file v1 Instance.protocol; fixed for the instance's life)."""


__all__ = ["FilestoreTierName", "GcpFilestore"]
