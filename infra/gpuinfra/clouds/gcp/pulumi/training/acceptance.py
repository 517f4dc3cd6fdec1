"""The NCCL acceptance job on GKE's RDMA fabric: the Kubernetes clusters' all-reduce gate (acceptance.py: an Indexed
Job of one pod per node in the training queue, pod 0 starting nccl-tests' all_reduce_perf over ssh with mpirun, the
bus-bandwidth floor 60% of the node's network rate) with what Google's own A3 Ultra NCCL test does
(container-engine-accelerators gpudirect-rdma/nccl-test.yaml and Cluster Toolkit's gke-a3-ultragpu
nccl-jobset-example.yaml):

- Google's gIB diagnostic image at the installer's release, whose nccl-tests are in /third_party/nccl-tests/build
  and whose sshd Google's manifests dial on port 222;
- the trainer's multi-network annotations and host mounts (the node's NVIDIA libraries and gIB plugin);
- `NCCL_NET=gIB`, gIB's NCCL first on LD_LIBRARY_PATH, and the leader sourcing /usr/local/gib/scripts/set_nccl_env.sh
  (the plugin's tuning) before mpirun, which passes every NCCL_ setting to the ranks;
- Open MPI's own traffic on eth0, the pod network (Google's `--mca btl self,tcp --mca btl_tcp_if_include eth0`,
  `plm_rsh_no_tree_spawn 1`, `orte_keep_fqdn_hostnames 1`, given as OMPI_MCA_ variables): the RDMA NICs carry
  NCCL only."""

from __future__ import annotations

from typing import Any

from gpuinfra.clouds.gcp.pulumi.training.rdma_installer import GIB_VERSION
from gpuinfra.pulumi.components.training.acceptance import ImagePaths, acceptance_jobset, acceptance_script
from gpuinfra.pulumi.components.training.kubernetes import WorkloadArgs, acceptance_config_map, nccl_acceptance_pod

IMAGE = f"us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib-diagnostic:{GIB_VERSION}"
PATHS = ImagePaths(
    mpirun="mpirun",
    all_reduce_perf="/third_party/nccl-tests/build/all_reduce_perf",
    env_script="/usr/local/gib/scripts/set_nccl_env.sh",
    ssh_port=222,
)
"""Google's diagnostic image: mpirun on its PATH and nccl-tests under /third_party (Cluster Toolkit's A3 Ultra NCCL
JobSet calls both so), the gIB settings script from the host mount, sshd on Google's port."""
MPI_ENV = {
    "OMPI_MCA_btl": "self,tcp",
    "OMPI_MCA_btl_tcp_if_include": "eth0",
    "OMPI_MCA_oob_tcp_if_include": "eth0",
    "OMPI_MCA_plm_rsh_no_tree_spawn": "1",
    "OMPI_MCA_orte_keep_fqdn_hostnames": "1",
}


def _on_gke(pod: dict[str, Any], args: WorkloadArgs) -> None:
    """Google's image, the pod networks, the host's NVIDIA and gIB directories, gIB's NCCL first."""
    (container,) = pod["spec"]["containers"]
    container["image"] = IMAGE
    library = args.env.get("LD_LIBRARY_PATH")
    extra = {**MPI_ENV, **({"LD_LIBRARY_PATH": library} if library else {})}
    container["env"] += [{"name": k, "value": v} for k, v in sorted(extra.items())]
    container["volumeMounts"] += [
        {"name": m.name, "mountPath": m.mount_path, "readOnly": True} for m in args.host_mounts
    ]
    pod["spec"]["volumes"] += [{"name": m.name, "hostPath": {"path": m.host_path}} for m in args.host_mounts]
    pod["metadata"].setdefault("annotations", {}).update(dict(args.pod_annotations))


def gke_acceptance(args: WorkloadArgs, network_gbps: float) -> tuple[str, dict[str, Any]]:
    """The script and the JobSet (requesting what a training pod requests, in the training queue)."""
    config_map = acceptance_config_map(args)
    pod = nccl_acceptance_pod(args)
    _on_gke(pod, args)
    jobset = acceptance_jobset(args.cluster, args.namespace, args.queue, args.nodes, pod)
    script = acceptance_script(
        args.cluster,
        args.nodes,
        args.gpus_per_node,
        args.instance_type,
        network_gbps,
        f"configmap/{config_map}",
        PATHS,
    )
    return script, jobset


def acceptance_pod_spec(jobset: dict[str, Any]) -> dict[str, Any]:
    """The JobSet's pod spec (the namespace's Pod Security level is judged on it too)."""
    return dict(jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"])


__all__ = ["IMAGE", "MPI_ENV", "PATHS", "acceptance_pod_spec", "gke_acceptance"]
