"""The managed Slurm path: a Cluster Director cluster (`hypercomputecluster.Cluster`, the analogue of AWS PCS) on
the stack's own network, mounting the stack's own Managed Lustre, Filestore /home and buckets.

The API (hypercomputecluster v1) takes exactly one network, so the stack builds only the system network (its
subnet, Cloud NAT) and hands it over as an existing network; Lustre, Filestore and the buckets are the stack's
resources (storage.py, filestore.py), handed over as existing ones, so each is judged, priced and protected as on
the GKE path. Google runs the Slurm controller; the stack names one nodeset of the cluster's GPU nodes (its static
count the spec's node count, its capacity bought as the spec says: on-demand, Spot, flex-start or a reservation),
its partition and the login nodes. The checkpoint contract's part that needs root is the Slurm Prolog and Epilog
(templates/gcp/slurm-prolog.sh.j2, slurm-epilog.sh.j2: the mounts checked, the checkpoint root made, a stale
checkpoint request removed); its variables reach jobs from the login shells' profile (slurm-job-env.sh.j2)."""

from __future__ import annotations

import math
import posixpath
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp

from gpuinfra.clouds.gcp.plan.training import GcpTrainingPlan
from gpuinfra.clouds.gcp.pulumi.base import opts
from gpuinfra.clouds.gcp.pulumi.training.jobset import checkpoint_env
from gpuinfra.clouds.gcp.pulumi.training.storage import TrainingStorage
from gpuinfra.clouds.gcp.spec.slurm import MACHINE_LABEL, GcpSlurm
from gpuinfra.clouds.gcp.spec.training import GcpTrainingSpec
from gpuinfra.pulumi.components.training.bootstrap import CHECKPOINT_NOW_FILE, CHECKPOINT_NOW_VAR
from gpuinfra.pulumi.components.training.storage import CHECKPOINT_PATH
from gpuinfra.pulumi.templates import render

NETWORK_ID = "net"
COMPUTE_ID = "gpu"
PROFILE = "/etc/profile.d/gpuinfra-checkpoint.sh"
BUCKET_MOUNTS = {"data": "/gcs", "checkpoints": "/gcs-checkpoints"}
"""Where the buckets are mounted: Cluster Toolkit's A3 Ultra Slurm blueprint's /gcs and /gcs-checkpoints
(examples/machine-learning/a3-ultragpu-8g/README.md)."""
NODE_DISK = "hyperdisk-balanced"
"""A3 Ultra and A4 boot from Hyperdisk (the GKE pool's disk type too)."""
LOGIN_DISK = "pd-balanced"
PREEMPTED_URL = "http://metadata.google.internal/computeMetadata/v1/instance/preempted"
"""The metadata server's preemption flag (Compute Engine docs, "Detect if a VM was preempted")."""
SHUTDOWN_MARGIN_SECONDS = 10
"""Of a Spot VM's notice, what the checkpoint window leaves for the guest's shutdown (slurmd stopping, Lustre and
NFS unmounting). A choice: Google states no figure for it."""


def preemption_window(plan: GcpTrainingPlan) -> int | None:
    """Seconds a Spot node's job gets to checkpoint once preempted: the planner's write time within the notice less
    the shutdown margin; None when the nodes are not Spot."""
    notice = plan.preemption_notice_seconds
    if notice is None:
        return None
    budget = notice - SHUTDOWN_MARGIN_SECONDS
    write = plan.checkpoint.write_seconds if plan.checkpoint else None
    return budget if write is None else max(1, min(budget, math.ceil(write)))


def preemption_watcher(spec: GcpTrainingSpec, plan: GcpTrainingPlan) -> str | None:
    """The Spot node's watcher script (None on other nodes)."""
    window = preemption_window(plan)
    if window is None or spec.checkpointing is None:
        return None
    return render(
        "gcp/slurm-preemption-watcher.sh.j2",
        cluster=spec.name,
        notice_seconds=plan.preemption_notice_seconds,
        now_file=CHECKPOINT_NOW_FILE,
        window_seconds=window,
        margin_seconds=SHUTDOWN_MARGIN_SECONDS,
        metadata_url=PREEMPTED_URL,
    )


@dataclass(frozen=True)
class SlurmScripts:
    """The cluster's scripts: the Prolog and Epilog slurmd runs as root, and each role's startup script."""

    prolog: str
    epilog: str
    node_startup: str
    login_startup: str


def mount_paths(spec: GcpTrainingSpec) -> dict[str, str]:
    """Storage resource ID -> where every node mounts it."""
    paths: dict[str, str] = {}
    if spec.filestore is not None:
        paths["home"] = spec.filestore.mount_path
    if spec.lustre is not None:
        paths["lustre"] = spec.lustre.mount_path
    return {**paths, **BUCKET_MOUNTS}


def job_env(spec: GcpTrainingSpec, plan: GcpTrainingPlan) -> dict[str, str]:
    """The checkpoint contract's variables as a job on this cluster sees them."""
    mount = spec.lustre.mount_path if spec.lustre else BUCKET_MOUNTS["checkpoints"]
    env = checkpoint_env(spec, plan, mount)
    return {**env, CHECKPOINT_NOW_VAR: CHECKPOINT_NOW_FILE} if env else env


def slurm_scripts(spec: GcpTrainingSpec, plan: GcpTrainingPlan) -> SlurmScripts:
    """The Prolog, the Epilog and the startup scripts, rendered (pure: tests run them)."""
    ckpt = spec.checkpointing
    root = None
    if ckpt is not None and ckpt.target == "lustre" and spec.lustre is not None:
        root = posixpath.join(spec.lustre.mount_path, CHECKPOINT_PATH.lstrip("/"))
    mounts = [p for key, p in mount_paths(spec).items() if key in ("home", "lustre")]
    env = job_env(spec, plan)
    common = {"cluster": spec.name, "now_file": CHECKPOINT_NOW_FILE}
    return SlurmScripts(
        prolog=render("gcp/slurm-prolog.sh.j2", **common, mounts=mounts, checkpoint_root=root),
        epilog=render("gcp/slurm-epilog.sh.j2", **common),
        node_startup=render(
            "gcp/slurm-job-env.sh.j2",
            **common,
            role="GPU nodes",
            profile=PROFILE,
            env=env,
            watcher=preemption_watcher(spec, plan),
        ),
        login_startup=render(
            "gcp/slurm-job-env.sh.j2", **common, role="login nodes", profile=PROFILE, env=env, watcher=None
        ),
    )


def capacity(spec: GcpTrainingSpec, project: str) -> dict[str, Any]:
    """The compute resource's config: how its VMs are bought (one of the API's four)."""
    compute = spec.compute
    machine = {"machine_type": compute.machine_type, "zone": compute.zone}
    model = compute.capacity.model
    if model == "reservation":
        path = f"projects/{project}/zones/{compute.zone}/reservations/{compute.capacity.reservation}"
        return {"new_reserved_instances": {"reservation": path}}
    if model == "flex_start":
        hours = compute.capacity.max_run_hours or 0
        return {"new_flex_start_instances": {**machine, "max_duration": f"{round(hours * 3600)}s"}}
    if model == "spot":  # a preempted static node is deleted and made again (it is static: at least this many)
        return {"new_spot_instances": {**machine, "termination_action": "DELETE"}}
    return {"new_on_demand_instances": machine}


def storage_resources(spec: GcpTrainingSpec, storage: TrainingStorage) -> list[dict[str, Any]]:
    """The stack's own storage, handed to the cluster as existing resources (by their resource names)."""
    found: list[dict[str, Any]] = []
    if storage.home is not None:
        found.append({"id": "home", "config": {"existing_filestore": {"filestore": storage.home.id}}})
    if storage.lustre is not None:
        found.append({"id": "lustre", "config": {"existing_lustre": {"lustre": storage.lustre.id}}})
    found.append({"id": "data", "config": {"existing_bucket": {"bucket": storage.data.name}}})
    found.append({"id": "checkpoints", "config": {"existing_bucket": {"bucket": storage.checkpoints.name}}})
    return found


def storage_configs(spec: GcpTrainingSpec) -> list[dict[str, str]]:
    return [{"id": key, "local_mount": path} for key, path in mount_paths(spec).items()]


def _disk(project: str, zone: str, kind: str, gib: int) -> dict[str, str]:
    return {"type": f"projects/{project}/zones/{zone}/diskTypes/{kind}", "size_gb": str(gib)}


@dataclass(frozen=True)
class SlurmArgs:
    spec: GcpTrainingSpec
    plan: GcpTrainingPlan
    project: str
    labels: dict[str, str]


def orchestrator(args: SlurmArgs, slurm: GcpSlurm, scripts: SlurmScripts) -> dict[str, Any]:
    """The Slurm orchestrator: the login nodes, the GPU nodeset and its partition, the Prolog and Epilog."""
    spec, zone = args.spec, args.spec.compute.zone
    login = slurm.login
    return {
        "slurm": {
            "login_nodes": {
                "machine_type": login.machine_type,
                "count": str(login.count),
                "zone": zone,
                "boot_disk": _disk(args.project, zone, LOGIN_DISK, login.boot_disk_gib),
                "enable_os_login": login.os_login,
                "enable_public_ips": bool(spec.scheduler.api_access.public_cidrs),
                "startup_script": scripts.login_startup,
                "storage_configs": storage_configs(spec),
                "labels": args.labels,
            },
            "node_sets": [
                {
                    "id": slurm.nodeset,
                    "compute_id": COMPUTE_ID,
                    "static_node_count": str(spec.compute.node_count),
                    "storage_configs": storage_configs(spec),
                    "compute_instance": {
                        "boot_disk": _disk(args.project, zone, NODE_DISK, spec.compute.boot_disk_gib),
                        "startup_script": scripts.node_startup,
                        # a reserved-instances resource names no machine type: the cost preview reads it here
                        "labels": {**args.labels, MACHINE_LABEL: spec.compute.machine_type},
                    },
                }
            ],
            "partitions": [{"id": slurm.partition, "node_set_ids": [slurm.nodeset]}],
            "prolog_bash_scripts": [scripts.prolog],
            "epilog_bash_scripts": [scripts.epilog],
        }
    }


class SlurmCluster(pulumi.ComponentResource):
    """The Cluster Director cluster on the stack's network and storage; SSH to the login nodes from
    `api_access.public_cidrs` only (none: the login nodes have no external address)."""

    def __init__(
        self,
        name: str,
        args: SlurmArgs,
        subnet: gcp.compute.Subnetwork,
        storage: TrainingStorage,
        parent: pulumi.Resource,
    ) -> None:
        super().__init__("gpuinfra:training:GcpSlurm", name, None, opts(parent))
        spec = args.spec
        assert spec.scheduler.slurm is not None, "gcp-slurm-settings refuses a Slurm spec without its settings"
        slurm = spec.scheduler.slurm
        cidrs = spec.scheduler.api_access.public_cidrs
        if cidrs:
            gcp.compute.Firewall(
                f"{name}-login-ssh",
                name=f"{name}-login-ssh",
                network=subnet.network,
                direction="INGRESS",
                source_ranges=list(cidrs),
                allows=[{"protocol": "tcp", "ports": ["22"]}],
                opts=opts(self),
            )
        managed = [r for r in (storage.home, storage.lustre) if r is not None]
        self.cluster = gcp.hypercomputecluster.Cluster(
            f"{name}-slurm",
            cluster_id=slurm.cluster_id,
            location=spec.compute.region,
            description=f"gpuinfra training cluster {spec.name}",
            labels=args.labels,
            network_resources=[
                {
                    "id": NETWORK_ID,
                    "config": {"existing_network": {"network": subnet.network, "subnetwork": subnet.id}},
                }
            ],
            compute_resources=[{"id": COMPUTE_ID, "config": capacity(spec, args.project)}],
            storage_resources=storage_resources(spec, storage),
            orchestrator=orchestrator(args, slurm, slurm_scripts(spec, args.plan)),
            opts=opts(self, depends_on=managed),
        )
        self.register_outputs({"cluster": self.cluster.name})


__all__ = [
    "BUCKET_MOUNTS",
    "SlurmArgs",
    "SlurmCluster",
    "SlurmScripts",
    "capacity",
    "job_env",
    "mount_paths",
    "orchestrator",
    "preemption_watcher",
    "preemption_window",
    "slurm_scripts",
    "storage_resources",
]
