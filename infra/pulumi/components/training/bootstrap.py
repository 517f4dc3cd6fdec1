"""Rendered node bootstrap and Slurm configuration: pure functions of plain values, so the rendered
text can be tested (bash -n, YAML) without Pulumi."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from infra.plan.racks import Rack
from infra.pulumi.components.training.fabric import nccl_environment
from infra.pulumi.components.training.storage import CHECKPOINT_PATH, DATASET_PATH
from infra.pulumi.templates import render

SLURM_DIR = "/etc/slurm"
NODE_PREFIX = "gpu"
CONTROLLER_HOST = "slurmctl"


@dataclass(frozen=True)
class LustreMount:
    dns_name: str
    mount_name: str
    mount_path: str


@dataclass(frozen=True)
class SlurmCluster:
    """What slurm.conf and topology.conf need."""

    cluster: str
    controller_ip: str
    node_count: int
    cpus: int
    memory_gib: int
    gpus_per_node: int
    partition: str
    racks: Sequence[Rack]
    asg_name: str
    munge_parameter: str


def node_range(start: int, count: int, prefix: str = NODE_PREFIX) -> str:
    """gpu-[004-007]: Slurm's hostlist for `count` nodes from `start`."""
    if count == 1:
        return f"{prefix}-{start:03d}"
    return f"{prefix}-[{start:03d}-{start + count - 1:03d}]"


def rack_node_ranges(racks: Sequence[Rack]) -> list[tuple[int, str]]:
    """(rack index, hostlist) for consecutive node names, rack by rack."""
    out, start = [], 0
    for rack in racks:
        out.append((rack.index, node_range(start, rack.nodes)))
        start += rack.nodes
    return out


def slurm_files(slurm: SlurmCluster) -> list[dict[str, str]]:
    conf = render(
        "slurm/slurm.conf.j2",
        cluster=slurm.cluster,
        controller_host=CONTROLLER_HOST,
        controller_ip=slurm.controller_ip,
        node_prefix=NODE_PREFIX,
        node_count=slurm.node_count,
        cpus=slurm.cpus,
        real_memory_mb=int(slurm.memory_gib * 1024 * 0.95),
        gpus_per_node=slurm.gpus_per_node,
        partition=slurm.partition,
    )
    racks = [{"index": i, "nodes_expr": expr} for i, expr in rack_node_ranges(slurm.racks)]
    files = [
        {"path": f"{SLURM_DIR}/slurm.conf", "content": conf},
        {"path": f"{SLURM_DIR}/gres.conf", "content": render("slurm/gres.conf.j2", cluster=slurm.cluster)},
    ]
    if racks:
        files.append(
            {
                "path": f"{SLURM_DIR}/topology.conf",
                "content": render("slurm/topology.conf.j2", cluster=slurm.cluster, racks=racks),
            }
        )
    return files


def nccl_env(
    cluster: str, interconnect: str, mount_path: str, hcas: Sequence[str] = (), gpudirect_rdma: bool = True
) -> str:
    return render(
        "training/nccl-env.sh.j2",
        cluster=cluster,
        interconnect=interconnect,
        env=nccl_environment(interconnect, hcas, gpudirect_rdma),
        checkpoint_dir=f"{mount_path}{CHECKPOINT_PATH}",
        dataset_dir=f"{mount_path}{DATASET_PATH}",
    )


def spot_watcher(cluster: str, scheduler: str, poll_seconds: int = 5, trainer_process: str = "torchrun") -> str:
    return render(
        "training/spot-watcher.sh.j2",
        cluster=cluster,
        scheduler=scheduler,
        poll_seconds=poll_seconds,
        trainer_process=trainer_process,
    )


def node_bootstrap(
    cluster: str, region: str, interconnect: str, lustre: LustreMount | None, slurm: SlurmCluster | None, spot: bool
) -> str:
    return render(
        "training/node-bootstrap.sh.j2",
        cluster=cluster,
        region=region,
        interconnect=interconnect,
        lustre=lustre,
        dataset_path=DATASET_PATH,
        checkpoint_path=CHECKPOINT_PATH,
        slurm=None
        if slurm is None
        else {
            "asg_name": slurm.asg_name,
            "node_prefix": NODE_PREFIX,
            "node_count": slurm.node_count,
            "munge_parameter": slurm.munge_parameter,
        },
        spot=spot,
    )


def node_cloud_init(
    cluster: str,
    region: str,
    instance_type: str,
    interconnect: str,
    lustre: LustreMount | None,
    slurm: SlurmCluster | None,
    spot: bool,
) -> str:
    """The cloud-config a training node boots with."""
    mount_path = lustre.mount_path if lustre else "/fsx"
    return render(
        "training/node-cloud-init.yaml.j2",
        cluster=cluster,
        instance_type=instance_type,
        nccl_env=nccl_env(cluster, interconnect, mount_path),
        bootstrap=node_bootstrap(cluster, region, interconnect, lustre, slurm, spot),
        spot_watcher=spot_watcher(cluster, "slurm" if slurm else "none") if spot else "",
        slurm_files=slurm_files(slurm) if slurm else [],
    )


def controller_cloud_init(slurm: SlurmCluster, region: str) -> str:
    bootstrap = render(
        "training/controller-bootstrap.sh.j2",
        cluster=slurm.cluster,
        region=region,
        controller_host=CONTROLLER_HOST,
        munge_parameter=slurm.munge_parameter,
    )
    return render(
        "training/controller-cloud-init.yaml.j2",
        cluster=slurm.cluster,
        slurm_files=slurm_files(slurm),
        bootstrap=bootstrap,
    )


__all__ = [
    "CONTROLLER_HOST",
    "NODE_PREFIX",
    "LustreMount",
    "SlurmCluster",
    "controller_cloud_init",
    "nccl_env",
    "node_bootstrap",
    "node_cloud_init",
    "node_range",
    "rack_node_ranges",
    "slurm_files",
    "spot_watcher",
]
