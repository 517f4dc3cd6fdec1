"""Node user data for AWS PCS node groups: pure functions of plain values, so the rendered text can be tested
(bash -n, YAML, MIME) without Pulumi.

PCS takes user data from the launch template in MIME multi-part form and runs its own part beside ours (AWS PCS
User Guide, "Using Amazon EC2 launch templates with AWS PCS"); the PCS agent and Slurm come with the AMI, PCS owns
slurm.conf, so nothing here installs or configures Slurm: it adds the job environment (read by the cluster's
TaskProlog), the health check (a systemd timer on each compute node), the instance store as scratch, Lustre, the
interruption watcher and, on the login node, the checkpoint pruner.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Sequence
from dataclasses import dataclass
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText

from gpuinfra.catalog.downloads import FSX_EFA_CLIENT, pinned_download
from gpuinfra.plan.pcs import ACCEPTANCE_SHARE, acceptance_floor_gb_s, busbw_ceiling_gb_s
from gpuinfra.pulumi.components.training.gpu_metrics import SCRIPT_PATH as GPU_METRICS
from gpuinfra.pulumi.components.training.gpu_metrics import gpu_metrics_script
from gpuinfra.pulumi.components.training.mount_check import lustre_check_args
from gpuinfra.pulumi.components.training.node_repair import FAILED, INTERVAL_SECONDS, PASSED, Repair, node_repair
from gpuinfra.pulumi.components.training.node_repair import SCRIPT as REPAIR
from gpuinfra.pulumi.templates import render
from gpuinfra.spec.training import ClusterUser

JOB_ENV = "/etc/gpuinfra/job-env.sh"
TASK_PROLOG = "/opt/gpuinfra/task-prolog"
HEALTH_CHECK = "/opt/gpuinfra/health-check"
HEALTH_CHECK_INTERVAL_SECONDS = 300
CRITICAL_XIDS = (48, 63, 64, 74, 79, 92, 94, 95, 119, 120)
"""Xid events that mean the GPU, not the job, failed, and the node must leave the gang (NVIDIA GPU Deployment and
Management Documentation, "Xid Errors": 48 double-bit ECC, 63/64 row remapping, 74 NVLink, 79 fallen off the bus,
92/94/95 ECC, 119/120 GSP). Application faults (13, 31, 43) are left to the job."""
"""How often a compute node's timer runs the health check (gpuinfra-health-check.timer). The check used to be Slurm's
HealthCheckProgram; a timer needs no PCS cluster setting beyond the CloudFormation schema's documented three."""
SCRATCH_PATH = "/scratch"
WATCH_POLL_SECONDS = 5
IMDS_ADDRESS = "169.254.169.254"
IMDS = f"http://{IMDS_ADDRESS}"
CHECKPOINT_NOW_FILE = "/run/gpuinfra/checkpoint-now"
"""Appears on a node when its jobs must checkpoint now; holds the epoch second by which to be done."""
CHECKPOINT_NOW_VAR = "GPUINFRA_CHECKPOINT_NOW_FILE"
"""The job environment's name for it."""
COMPLETE_MARKER = "COMPLETE"
"""The file a trainer writes into a checkpoint directory once every rank has finished writing it; the pruner counts
(and prunes) only checkpoints that hold it."""
CHECKPOINT_SIGNAL = "TERM"
"""What the watcher sends job steps after the checkpoint-now window: torchrun forwards SIGTERM, SIGINT, SIGHUP and
SIGQUIT to its workers (pytorch torch/distributed/elastic/multiprocessing/api.py, TORCHELASTIC_SIGNALS_TO_HANDLE),
and the kubelet sends SIGTERM to a pod's containers when EKS drains a node: one signal on every substrate."""
SPOT_NOTICE_SECONDS = 120
"""EC2 User Guide, "Spot Instance interruption notices": two minutes before EC2 stops or terminates the instance."""
TERM_SECONDS = 30
"""torchrun's agent kills its workers 30 s after forwarding a signal (PContext.close, timeout=30)."""
REQUEUE_MARGIN_SECONDS = 15
REBALANCE_HOLD_SECONDS = 1800
"""How long a rebalance recommendation keeps the node drained when no interruption notice follows. A choice, not a
figure from AWS: EC2 gives no time bound between a recommendation and an interruption (EC2 User Guide, "EC2
instance rebalance recommendations"); 30 minutes covers the usual case and returns the node to the gang after."""
NCCL_ACCEPTANCE = "/opt/gpuinfra/nccl-acceptance.sbatch"
"""The fabric acceptance job on the login node, for the operator to submit before a run."""
NCCL_MAX_BYTES = "8G"
"""all_reduce_perf's largest message: large enough for the bus bandwidth to plateau (nccl-tests' README runs 8 B
to 128 MB on one node; across nodes the plateau comes later)."""
SRUN_MPI = "pmix"
"""How srun wires the nccl-tests ranks (Slurm MPI Users Guide: srun --mpi=pmix for an MPI built with PMIx)."""
JOB_GROUP = "gpuinfra-train"
JOB_GID = 59000
"""The group the cluster's users share, with one GID on every node: Slurm needs a uniform UID/GID space across the
cluster (SchedMD/slurm doc/html/quickstart_admin.shtml), and Lustre stores numeric ids. Above the range useradd
gives users and their private groups by default (login.defs(5): GID_MIN 1000), below 60000."""


@dataclass(frozen=True)
class Download:
    """A URL a node fetches at boot and the SHA-256 its content must have (else it is not run)."""

    url: str
    sha256: str


def efa_client_package() -> Download:
    """The FSx for Lustre User Guide's EFA client package ("Configuring EFA clients", quick setup: download, unzip,
    run setup.sh), pinned by content: AWS publishes no versioned copy, so the catalog gives the digest a fetched copy
    had (catalog/data/downloads.yaml, with its source and date)."""
    pinned = pinned_download(FSX_EFA_CLIENT)
    return Download(pinned.url, pinned.sha256)


HOME = "/home"
"""Where users' homes are: the shared EFS (home.py) on every node."""
EFA_CLIENT_UNIT = "/etc/systemd/system/configure-efa-fsx-lustre-client.service"
"""The unit setup.sh installs to configure LNet's EFA interfaces at every boot (the same guide page)."""
EFA_SYSFS = "/sys/class/infiniband"
"""Where the EFA devices appear (the guide's "View available EFA devices" lists /sys/class/infiniband/*)."""
DATASET_DIR = "/datasets"
"""Where the dataset's data repository association links import_path, below the mount path (storage.DATASET_PATH:
the storage component imports Pulumi, these pure functions do not)."""
PRELOAD = "/opt/gpuinfra/preload-dataset"
PRELOAD_MARKER = "/.gpuinfra/dataset-ready"
DATASET_READY_VAR = "GPUINFRA_DATASET_READY_FILE"
"""The job environment's name for the marker the preload writes once the dataset is in Lustre."""
PRELOAD_PARALLEL = 8
"""lfs processes at once: the FSx guide's own completion check runs `xargs -n 1 -P 8`."""
PRELOAD_POLL_SECONDS = 60
CHECKPOINT_ROOT_VAR = "GPUINFRA_CHECKPOINT_ROOT"
"""The job environment's checkpoint root; the per-run GPUINFRA_CHECKPOINT_DIR below it is set per job."""


@dataclass(frozen=True)
class LustreMount:
    dns_name: str
    mount_name: str
    mount_path: str
    efa: bool = False
    """The file system is EFA-enabled: the nodes set themselves up as its EFA clients before mounting."""
    preload: bool = False
    """The login node restores the dataset into Lustre before the first job (gpuinfra-preload-dataset.service)."""
    efa_client: Download | None = None
    """The EFA client package and its digest, when the stack pins its own (lustre.efa_client_package); None: the
    catalog's."""

    @property
    def dataset(self) -> str:
        return f"{self.mount_path}{DATASET_DIR}"

    @property
    def ready_marker(self) -> str:
        """Written once the dataset is in Lustre; on Lustre, outside any data repository path, so every node sees it
        and nothing exports it."""
        return f"{self.mount_path}{PRELOAD_MARKER}"


@dataclass(frozen=True)
class HomeMount:
    """The shared /home (EFS) every node mounts."""

    dns_name: str
    path: str
    options: str
    users: tuple[ClusterUser, ...] = ()
    """The cluster's users (scheduler.users): created on every node, their homes here by the login node."""


@dataclass(frozen=True)
class Retention:
    """Checkpoint retention the pruner applies (PCS login node, Kubernetes CronJob)."""

    checkpoint_dir: str
    bucket: str | None
    """The bucket Lustre exports checkpoints to, whose copies are tagged for expiry; None: no S3 copies."""
    prefix: str
    keep_last: int
    milestone_marker: str
    retention_days: int
    complete_marker: str = COMPLETE_MARKER
    metric_namespace: str | None = None
    """PCS: each successful run publishes PrunerRuns there (the pruner alarm, alarms.py); None: no metric."""
    region: str | None = None
    mount_path: str | None = None
    """The Lustre mount the checkpoint root is on: the pruner refuses to run unless it is mounted (mount_check.py);
    None: no check (a tree that is not a mount, in tests of the pruning rules)."""
    fs_name: str = ""
    """The site file system's name, checked too (on premises); empty: any Lustre (FSx's mount name is the file
    system's, known once it exists)."""


@dataclass(frozen=True)
class Acceptance:
    """The NCCL acceptance job's shape: the partition whose every node it spans (counted by the job when submitted, so
    a resize leaves the login node's user data alone) and the catalog's network figure."""

    partition: str
    instance_type: str
    gpus_per_node: int
    network_gbps: float
    tasks_per_node: int | None = None
    """One rank per GPU unless set (tests run it on a one-CPU node without GPUs)."""


@dataclass(frozen=True)
class NodeRole:
    """What one node group's nodes are and do."""

    role: str
    """compute or login."""
    instance_type: str
    gpus: int = 0
    efa: int = 0
    instance_store_gb: int = 0
    spot: bool = False
    block_checkpoint_at: datetime.datetime | None = None
    retention: Retention | None = None
    checkpoint_write_seconds: float | None = None
    """The planner's time to write one checkpoint (sizes the interruption watcher's checkpoint-now window)."""
    rebalance_hold_seconds: int = REBALANCE_HOLD_SECONDS
    metrics_region: str | None = None
    """Compute nodes: the health check publishes GpuErrors into gpu_metrics.NAMESPACE in this region (alarms.py)."""
    acceptance: Acceptance | None = None
    """The login node's NCCL acceptance job."""
    repair: Repair | None = None
    """The login node's repair loop over the compute nodes (node_repair.py)."""


def job_environment(env: dict[str, str]) -> str:
    """`export NAME=value` lines, unquoted: Slurm takes a TaskProlog's `export` lines literally."""
    return "".join(f"export {key}={value}\n" for key, value in sorted(env.items()))


def slurm_bin(slurm_version: str) -> str:
    """Where AWS PCS keeps Slurm's commands (AWS PCS User Guide, "Install SPANK plugins on AWS PCS": the installer
    keeps Slurm in /opt/aws/pcs/scheduler/slurm-<version>): only login shells get it on PATH (/etc/profile.d), so
    scripts that slurmd or systemd run call Slurm by this path."""
    return f"/opt/aws/pcs/scheduler/slurm-{slurm_version}/bin"


def health_check(cluster: str, node: NodeRole, slurm_version: str, lustre_path: str | None = None) -> str:
    from gpuinfra.pulumi.components.training.gpu_metrics import NAMESPACE

    return render(
        "training/health-check.sh.j2",
        cluster=cluster,
        instance_type=node.instance_type,
        gpus=node.gpus,
        efa=node.efa,
        slurm_version=slurm_version,
        slurm_bin=slurm_bin(slurm_version),
        lustre_path=lustre_path,
        failed=FAILED,
        passed=PASSED,
        region=node.metrics_region,
        metric_namespace=NAMESPACE if node.metrics_region else None,
        critical_xids=CRITICAL_XIDS,
        interval=HEALTH_CHECK_INTERVAL_SECONDS,
    )


def imds_guard(cluster: str, address: str = IMDS_ADDRESS) -> str:
    """The boot script that closes IMDS to every user but root; `address` is only changed by tests."""
    return render("training/imds-guard.sh.j2", cluster=cluster, imds_address=address)


def job_group(
    cluster: str,
    checkpoint_root: str | None,
    users: Sequence[ClusterUser] = (),
    homes: str = HOME,
    make_homes: bool = False,
) -> str:
    """The boot script that creates the job group and the cluster's users, each with its one UID and a home under
    `homes` (every node); given the checkpoint root (the login node), makes the root and its run directories
    group-writable with the setgid bit; with `make_homes` (the login node, which mounts the shared /home before),
    creates each user's home and authorized key."""
    return render(
        "training/job-group.sh.j2",
        cluster=cluster,
        group=JOB_GROUP,
        gid=JOB_GID,
        checkpoint_root=checkpoint_root,
        users=users,
        homes=homes,
        make_homes=make_homes,
    )


def lustre_client(
    cluster: str, mount_path: str, efa: bool = False, package: Download | None = None, sysfs: str = EFA_SYSFS
) -> str:
    """The boot script that installs the Lustre client and, for an EFA-enabled file system, sets the node up as its
    EFA client with `package` (default: the catalog's pin); `sysfs` is only changed by tests (a fake device
    directory)."""
    if efa and package is None:
        package = efa_client_package()
    return render(
        "training/lustre-client.sh.j2",
        cluster=cluster,
        mount_path=mount_path,
        efa=efa,
        efa_package=package.url if package else None,
        efa_sha256=package.sha256 if package else None,
        efa_unit=EFA_CLIENT_UNIT,
        efa_sysfs=sysfs,
    )


def preload_dataset(
    cluster: str, lustre: LustreMount, poll_seconds: int = PRELOAD_POLL_SECONDS, dataset: str | None = None
) -> str:
    """The login node's restore of the dataset into Lustre; `poll_seconds` and `dataset` are only changed by tests."""
    return render(
        "training/preload-dataset.sh.j2",
        cluster=cluster,
        dataset=dataset or lustre.dataset,
        marker=lustre.ready_marker,
        parallel=PRELOAD_PARALLEL,
        poll_seconds=poll_seconds,
    )


def task_prolog(cluster: str, checkpoint_root: str | None) -> str:
    return render("training/task-prolog.sh.j2", cluster=cluster, job_env=JOB_ENV, checkpoint_root=checkpoint_root)


def save_seconds(write_seconds: float | None) -> int:
    """Seconds a trainer gets, after the checkpoint-now file appears, before its steps are signalled: the planner's
    checkpoint write time, within the spot notice less torchrun's 30 s shutdown and the requeue."""
    budget = SPOT_NOTICE_SECONDS - TERM_SECONDS - REQUEUE_MARGIN_SECONDS
    return budget if write_seconds is None else max(1, min(budget, math.ceil(write_seconds)))


def interruption_watcher(
    cluster: str,
    node: NodeRole,
    slurm_version: str,
    imds: str = IMDS,
    now_file: str = CHECKPOINT_NOW_FILE,
    poll_seconds: int = WATCH_POLL_SECONDS,
) -> str:
    """The watcher; `imds`, `now_file` and `poll_seconds` are only ever changed by tests (a fake IMDS, a scratch
    directory, a quicker poll)."""
    at = node.block_checkpoint_at
    return render(
        "training/interruption-watcher.sh.j2",
        cluster=cluster,
        spot=node.spot,
        block_checkpoint_at=at.strftime("%Y-%m-%dT%H:%M:%SZ") if at else None,
        block_checkpoint_epoch=int(at.timestamp()) if at else None,
        poll_seconds=poll_seconds,
        slurm_version=slurm_version,
        slurm_bin=slurm_bin(slurm_version),
        imds=imds,
        now_file=now_file,
        save_seconds=save_seconds(node.checkpoint_write_seconds),
        term_seconds=TERM_SECONDS,
        rebalance_hold_seconds=node.rebalance_hold_seconds,
    )


def nccl_acceptance(cluster: str, job: Acceptance, slurm_version: str) -> str:
    """The sbatch script that gates a run on the fabric: all_reduce_perf across the compute nodes, its bus
    bandwidth at the largest size against the floor the catalog's network figure gives (plan/pcs.py)."""
    return render(
        "training/nccl-acceptance.sbatch.j2",
        cluster=cluster,
        path=NCCL_ACCEPTANCE,
        partition=job.partition,
        instance_type=job.instance_type,
        tasks_per_node=job.tasks_per_node if job.tasks_per_node is not None else job.gpus_per_node,
        gpus_per_node=job.gpus_per_node,
        network_gbps=f"{job.network_gbps:g}",
        ceiling=f"{busbw_ceiling_gb_s(job.network_gbps):g}",
        share_percent=f"{ACCEPTANCE_SHARE * 100:g}",
        floor=f"{acceptance_floor_gb_s(job.network_gbps):g}",
        max_bytes=NCCL_MAX_BYTES,
        mpi=SRUN_MPI,
        slurm_bin=slurm_bin(slurm_version),
    )


def mount_scratch(node: NodeRole) -> str:
    return render(
        "training/mount-scratch.sh.j2",
        instance_type=node.instance_type,
        instance_store_gb=node.instance_store_gb,
        scratch_path=SCRATCH_PATH,
    )


def prune_checkpoints(cluster: str, retention: Retention) -> str:
    check = lustre_check_args(retention.mount_path, retention.fs_name) if retention.mount_path else None
    return render("training/prune-checkpoints.sh.j2", cluster=cluster, mount_check=check, **retention.__dict__)


def node_cloud_config(
    cluster: str,
    node: NodeRole,
    env: dict[str, str],
    lustre: LustreMount | None,
    slurm_version: str,
    home: HomeMount | None = None,
    gpu_metrics_parameter: str | None = None,
) -> str:
    """The cloud-config part of a node's user data; `slurm_version` is the PCS cluster's (where Slurm lives);
    `gpu_metrics_parameter`, the CloudWatch agent's configuration (gpu_metrics.py) GPU nodes start it from."""
    compute = node.role == "compute"
    watcher = compute and (node.spot or node.block_checkpoint_at is not None)
    checkpoint_root = node.retention.checkpoint_dir if node.retention else None
    gpu_metrics = compute and node.gpus > 0 and gpu_metrics_parameter is not None
    preload = node.role == "login" and lustre is not None and lustre.preload
    if lustre is not None and lustre.preload:
        env = {**env, DATASET_READY_VAR: lustre.ready_marker}
    return render(
        "training/node-cloud-config.yaml.j2",
        cluster=cluster,
        role=node.role,
        instance_type=node.instance_type,
        job_env=job_environment(env),
        task_prolog=task_prolog(cluster, env.get(CHECKPOINT_ROOT_VAR)),
        imds_guard=imds_guard(cluster),
        job_group=job_group(cluster, checkpoint_root, *((home.users, home.path, node.role == "login") if home else ())),
        checkpoint_root=checkpoint_root,
        # Only nodes with EFA interfaces set up an EFA client (the login node mounts over TCP).
        lustre_client=lustre_client(cluster, lustre.mount_path, lustre.efa and node.efa > 0, lustre.efa_client)
        if lustre
        else "",
        health_check=health_check(cluster, node, slurm_version, lustre.mount_path if lustre else None)
        if compute
        else "",
        scratch=mount_scratch(node) if compute and node.instance_store_gb else "",
        watcher=interruption_watcher(cluster, node, slurm_version) if watcher else "",
        pruner=prune_checkpoints(cluster, node.retention) if node.retention else "",
        preload=preload_dataset(cluster, lustre) if preload and lustre else "",
        preload_path=PRELOAD,
        acceptance=nccl_acceptance(cluster, node.acceptance, slurm_version) if node.acceptance else "",
        acceptance_path=NCCL_ACCEPTANCE,
        gpu_metrics=gpu_metrics_script(cluster, gpu_metrics_parameter) if gpu_metrics_parameter and gpu_metrics else "",
        gpu_metrics_path=GPU_METRICS,
        repair=node_repair(cluster, node.repair, slurm_bin(slurm_version), slurm_version) if node.repair else "",
        repair_path=REPAIR,
        repair_interval=INTERVAL_SECONDS,
        health_interval=HEALTH_CHECK_INTERVAL_SECONDS,
        lustre=lustre,
        home=home,
        units=node_units(node, watcher, preload),
    )


def node_units(node: NodeRole, watcher: bool, preload: bool) -> list[str]:
    """The systemd units a node's user data enables: every node's, then each its role and purchase add."""
    compute = node.role == "compute"
    return [
        "gpuinfra-imds-guard.service",
        "gpuinfra-job-group.service",
        *(["gpuinfra-scratch.service"] if compute and node.instance_store_gb else []),
        *(["gpuinfra-health-check.timer"] if compute else []),
        *(["gpuinfra-interruption-watcher.service"] if watcher else []),
        *(["gpuinfra-prune-checkpoints.timer"] if node.retention else []),
        *(["gpuinfra-preload-dataset.service"] if preload else []),
        *(["gpuinfra-node-repair.timer"] if node.repair else []),
    ]


def mime_user_data(cloud_config: str) -> str:
    """User data as MIME multi-part, the form PCS (like EKS) merges its own part into."""
    message = MIMEMultipart(boundary="==GPUINFRA==")
    message.attach(MIMEText(cloud_config, "cloud-config"))
    return message.as_string()


__all__ = [
    "CHECKPOINT_NOW_FILE",
    "CHECKPOINT_NOW_VAR",
    "CHECKPOINT_ROOT_VAR",
    "CHECKPOINT_SIGNAL",
    "COMPLETE_MARKER",
    "CRITICAL_XIDS",
    "DATASET_DIR",
    "DATASET_READY_VAR",
    "EFA_CLIENT_UNIT",
    "EFA_SYSFS",
    "HEALTH_CHECK",
    "HEALTH_CHECK_INTERVAL_SECONDS",
    "HOME",
    "JOB_ENV",
    "JOB_GID",
    "JOB_GROUP",
    "NCCL_ACCEPTANCE",
    "PRELOAD",
    "PRELOAD_MARKER",
    "SCRATCH_PATH",
    "TASK_PROLOG",
    "Acceptance",
    "Download",
    "HomeMount",
    "LustreMount",
    "NodeRole",
    "Retention",
    "efa_client_package",
    "health_check",
    "imds_guard",
    "interruption_watcher",
    "job_environment",
    "job_group",
    "lustre_client",
    "mime_user_data",
    "mount_scratch",
    "nccl_acceptance",
    "node_cloud_config",
    "node_units",
    "preload_dataset",
    "prune_checkpoints",
    "save_seconds",
    "slurm_bin",
    "task_prolog",
]
