"""What a Cluster Director cluster (`hypercomputecluster.Cluster`) is judged by, beside pulumi-gcp's argument list:

- the hypercomputecluster v1 Discovery document (google-api-python-client ships it): the request's values held to
  the Cluster schema's enums and types, once pulumi-gcp's lists of `{id, config}` are read as the API's maps keyed
  by ID (`api_shape`: pulumi-gcp follows Terraform, which has no maps of objects);
- the rules the same document and pulumi-gcp's documentation state in words (`rules`): one network resource
  ("Must contain exactly one value"), the ID patterns (a cluster ID "at most 10 characters", a nodeset ID "up to 15",
  a partition ID RFC-1034), every reference by ID resolved (a nodeset's compute resource, a partition's nodesets, a
  mount's storage resource), a default partition "Required if and only if there is more than one partition", a
  login boot disk "at least 40 GB", startup scripts "Max 256KB", Prolog and Epilog scripts "must not be empty";
  and Cluster Director's login machine types, "N2 standard machine types with 32 or fewer vCPUs"
  (cloud.google.com/cluster-director/docs/compute)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

CLUSTER = "gcp:hypercomputecluster/cluster:Cluster"
MAPS = ("networkResources", "computeResources", "storageResources")
"""The Cluster fields the API keys by ID and pulumi-gcp lists as `{id, ...}`."""
CLUSTER_ID = re.compile(r"^[a-z][a-z0-9]{0,9}$")
NODESET_ID = re.compile(r"^[a-z][a-z0-9]{0,14}$")
RFC_1034 = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
LOGIN_MACHINE = re.compile(r"^n2-standard-(2|4|8|16|32)$")
SCRIPT_BYTES = 256 * 1024
MIN_LOGIN_DISK_GB = 40


def api_shape(inputs: dict[str, Any]) -> dict[str, Any]:
    """The cluster's inputs as the API's create request lays them out (the ID-keyed maps)."""
    shaped = dict(inputs)
    for key in MAPS:
        items = inputs.get(key)
        if isinstance(items, list):
            shaped[key] = {
                str(i.get("id")): {k: v for k, v in i.items() if k != "id"} for i in items if isinstance(i, dict)
            }
    return shaped


def _slurm(inputs: dict[str, Any]) -> dict[str, Any]:
    found = (inputs.get("orchestrator") or {}).get("slurm")
    return found if isinstance(found, dict) else {}


def _ids(inputs: dict[str, Any], key: str) -> set[str]:
    return {str(i.get("id")) for i in inputs.get(key) or [] if isinstance(i, dict)}


def _identifiers(inputs: dict[str, Any], slurm: dict[str, Any]) -> Iterator[tuple[str, Any, str]]:
    cluster_id = inputs.get("clusterId")
    if isinstance(cluster_id, str) and not CLUSTER_ID.match(cluster_id):
        yield "clusterId", cluster_id, "starts with a lower-case letter, then lower-case letters and digits, at most 10"
    networks = inputs.get("networkResources") or []
    if len(networks) != 1:
        yield "networkResources", len(networks), 'holds exactly one network ("Must contain exactly one value")'
    for i, nodeset in enumerate(slurm.get("nodeSets") or []):
        if not NODESET_ID.match(str(nodeset.get("id"))):
            where = f"orchestrator.slurm.nodeSets[{i}].id"
            yield where, nodeset.get("id"), "is a letter, then up to 14 letters or digits"
    for i, partition in enumerate(slurm.get("partitions") or []):
        if not RFC_1034.match(str(partition.get("id"))):
            yield f"orchestrator.slurm.partitions[{i}].id", partition.get("id"), "conforms to RFC-1034"


def _references(inputs: dict[str, Any], slurm: dict[str, Any]) -> Iterator[tuple[str, Any, str]]:
    computes, storages = _ids(inputs, "computeResources"), _ids(inputs, "storageResources")
    nodesets = {str(n.get("id")) for n in slurm.get("nodeSets") or []}
    for i, nodeset in enumerate(slurm.get("nodeSets") or []):
        if nodeset.get("computeId") not in computes:
            yield f"orchestrator.slurm.nodeSets[{i}].computeId", nodeset.get("computeId"), "names a compute resource"
    for i, partition in enumerate(slurm.get("partitions") or []):
        for ref in partition.get("nodeSetIds") or []:
            if ref not in nodesets:
                yield f"orchestrator.slurm.partitions[{i}].nodeSetIds", ref, "names a nodeset of the cluster"
    holders = [("orchestrator.slurm.loginNodes", slurm.get("loginNodes") or {})]
    holders += [(f"orchestrator.slurm.nodeSets[{i}]", n) for i, n in enumerate(slurm.get("nodeSets") or [])]
    for where, holder in holders:
        for j, mount in enumerate(holder.get("storageConfigs") or []):
            if mount.get("id") not in storages:
                yield f"{where}.storageConfigs[{j}].id", mount.get("id"), "names a storage resource of the cluster"
    partitions = [str(p.get("id")) for p in slurm.get("partitions") or []]
    default = slurm.get("defaultPartition")
    if len(partitions) > 1 and default not in partitions:
        yield "orchestrator.slurm.defaultPartition", default, "names one of the partitions (there is more than one)"
    if len(partitions) <= 1 and default is not None:
        yield "orchestrator.slurm.defaultPartition", default, "is set only when there is more than one partition"


def _login_and_scripts(slurm: dict[str, Any]) -> Iterator[tuple[str, Any, str]]:
    login = slurm.get("loginNodes") or {}
    machine = login.get("machineType")
    if isinstance(machine, str) and not LOGIN_MACHINE.match(machine):
        yield "orchestrator.slurm.loginNodes.machineType", machine, "is an N2 standard type of at most 32 vCPUs"
    size = (login.get("bootDisk") or {}).get("sizeGb")
    if str(size).isdigit() and int(str(size)) < MIN_LOGIN_DISK_GB:
        yield "orchestrator.slurm.loginNodes.bootDisk.sizeGb", size, f"is at least {MIN_LOGIN_DISK_GB} GB"
    scripts = [("orchestrator.slurm.loginNodes.startupScript", login.get("startupScript"))]
    scripts += [
        (f"orchestrator.slurm.nodeSets[{i}].computeInstance.startupScript", (n.get("computeInstance") or {}).get(s))
        for i, n in enumerate(slurm.get("nodeSets") or [])
        for s in ("startupScript",)
    ]
    for where, script in scripts:
        if isinstance(script, str) and len(script.encode()) > SCRIPT_BYTES:
            yield where, f"{len(script.encode())} bytes", "is at most 256 KB"
    for key in ("prologBashScripts", "epilogBashScripts"):
        for i, script in enumerate(slurm.get(key) or []):
            if isinstance(script, str) and not script.strip():
                yield f"orchestrator.slurm.{key}[{i}]", script, "is not empty"


def rules(inputs: dict[str, Any]) -> Iterator[tuple[str, Any, str]]:
    """(path, value, what Google requires of it) for every stated rule the cluster's inputs break."""
    slurm = _slurm(inputs)
    yield from _identifiers(inputs, slurm)
    yield from _references(inputs, slurm)
    yield from _login_and_scripts(slurm)


__all__ = ["CLUSTER", "api_shape", "rules"]
