"""What a Google training cluster's types are judged by, beside the fleet's (discovery.py takes these in):

- GKE's cluster and node pool by the container v1 Discovery document (Cluster, NodePool), the placement policy by
  compute v1 (ResourcePolicy) and the private services access peering by servicenetworking v1 (Connection), with
  pulumi-gcp's names mapped to the API's (pulumi-gcp follows Terraform's: `node_config` is the API's `config`,
  `guest_accelerators` its `accelerators`, `datapath_provider` sits in the cluster's `networkConfig`);
- Filestore (/home) by the file v1 Discovery document (Instance) and its capacity by the tier's steps in the catalog
  (clouds/gcp/catalog/data/filestore.yaml);
- Managed Lustre, whose Discovery document google-api-python-client does not ship, by what pulumi-gcp documents for
  `lustre.Instance` (the throughput tiers, the file system's name) and by the tier's capacity steps in the catalog
  (clouds/gcp/catalog/data/training.yaml)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib.metadata import version
from typing import Any

from gpuinfra.clouds.gcp.catalog.filestore import filestore_book
from gpuinfra.clouds.gcp.catalog.training import training_book
from gpuinfra.clouds.gcp.preflight import slurm
from gpuinfra.findings import Finding
from gpuinfra.graph import Resource, is_known
from gpuinfra.preflight.findings import finding_at

SCHEMAS: dict[str, tuple[str, str, str]] = {
    "gcp:container/cluster:Cluster": ("container", "v1", "Cluster"),
    "gcp:container/nodePool:NodePool": ("container", "v1", "NodePool"),
    "gcp:compute/resourcePolicy:ResourcePolicy": ("compute", "v1", "ResourcePolicy"),
    "gcp:servicenetworking/connection:Connection": ("servicenetworking", "v1", "Connection"),
    "gcp:filestore/instance:Instance": ("file", "v1", "Instance"),
    slurm.CLUSTER: ("hypercomputecluster", "v1", "Cluster"),
}
"""Type -> (api, version, the schema its create request carries)."""
RENAMES: dict[str, dict[str, str]] = {
    "Cluster": {"minMasterVersion": "initialClusterVersion"},
    "NodePool": {"nodeConfig": "config", "nodeCount": "initialNodeCount", "nodeLocations": "locations"},
    "NodeConfig": {"guestAccelerators": "accelerators"},
    "AcceleratorConfig": {"count": "acceleratorCount", "type": "acceleratorType"},
}
FLATTENED: dict[str, dict[str, tuple[str, str]]] = {
    "Cluster": {
        "datapathProvider": ("networkConfig", "datapathProvider"),
        "enableMultiNetworking": ("networkConfig", "enableMultiNetworking"),
    },
}
LUSTRE = "gcp:lustre/instance:Instance"
LUSTRE_TIERS = ("125", "250", "500", "1000")
"""pulumi-gcp lustre.Instance per_unit_storage_throughput: "Valid values are 125, 250, 500, 1000"."""
FILESYSTEM = re.compile(r"^[A-Za-z0-9]{1,8}$")
"""pulumi-gcp lustre.Instance filesystem: "eight characters or less and can only contain letters and numbers"."""
FILESTORE = "gcp:filestore/instance:Instance"
OWN = frozenset({LUSTRE, FILESTORE, slurm.CLUSTER})
"""Types judged here (Managed Lustre instead of a Discovery document; Filestore and Cluster Director beside their
Discovery documents)."""
SHAPES = {slurm.CLUSTER: slurm.api_shape}
"""Types whose pulumi-gcp inputs are laid out otherwise than the API's request, and how to read them as the API's."""


def _int(value: Any) -> int | None:
    """A whole number as pulumi-gcp carries it (a string of digits), else None."""
    return int(str(value)) if is_known(value) and re.fullmatch(r"[0-9]+", str(value)) else None


def _lustre(r: Resource) -> Iterator[tuple[str, Any, str]]:
    p = r.inputs
    tier, capacity, name = p.get("perUnitStorageThroughput"), p.get("capacityGib"), p.get("filesystem")
    if is_known(tier) and str(tier) not in LUSTRE_TIERS:
        yield "perUnitStorageThroughput", tier, f"is one of {', '.join(LUSTRE_TIERS)} MB/s per TiB"
    if is_known(name) and not FILESYSTEM.match(str(name)):
        yield "filesystem", name, "is at most eight letters and digits"
    if is_known(capacity) and _int(capacity) is None:
        yield "capacityGib", capacity, "is a whole number of GiB"
    found = training_book().lustre_tiers.get(_int(tier) or 0) if str(tier) in LUSTRE_TIERS else None
    gib = _int(capacity)
    if found is not None and gib is not None and not found.allows(gib):
        yield "capacityGib", capacity, f"is on the {tier} MB/s per TiB tier's steps (nearest {found.nearest(gib)})"


def _filestore(r: Resource) -> Iterator[tuple[str, Any, str]]:
    """The share's capacity on its tier's steps (file v1 types it only as a whole number of GB)."""
    tier = filestore_book().tiers.get(str(r.inputs.get("tier")))
    shares = r.inputs.get("fileShares")
    capacity = shares.get("capacityGb") if isinstance(shares, dict) else None
    gib = _int(capacity)
    if tier is not None and gib is not None and not tier.allows(gib):
        yield "fileShares.capacityGb", capacity, f"is on the {tier.tier} tier's steps (nearest {tier.nearest(gib)})"


def own_problems(r: Resource) -> Iterator[Finding]:
    """Managed Lustre's values held to what pulumi-gcp documents and the catalog's tier steps; Filestore's capacity
    to its tier's steps (clouds/gcp/catalog/data/filestore.yaml)."""
    if r.type == slurm.CLUSTER:
        where = "hypercomputecluster v1 Discovery document and pulumi-gcp hypercomputecluster.Cluster documentation"
        found = slurm.rules(r.inputs)
    elif r.type == FILESTORE:
        tiers = "clouds/gcp/catalog/data/filestore.yaml tiers (Filestore documentation, Service tiers)"
        where, found = tiers, _filestore(r)
    else:
        lustre = f"pulumi-gcp {version('pulumi-gcp')} lustre.Instance documentation"
        where, found = f"{lustre}; clouds/gcp/catalog/data/training.yaml tiers", _lustre(r)
    for path, value, problem in found:
        yield finding_at(r, "PF-GCP-API", path, value, f"Google would refuse it: {path} {problem}", where)


__all__ = ["FLATTENED", "OWN", "RENAMES", "SCHEMAS", "SHAPES", "own_problems"]
