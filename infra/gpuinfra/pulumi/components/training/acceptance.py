"""The NCCL acceptance job of a Kubernetes training cluster (EKS and on premises): the same all-reduce gate as the
Slurm cluster's sbatch job (nccl-tests' all_reduce_perf over every node, one rank per GPU, the bus-bandwidth floor
from the catalog's network figure, gpuinfra.plan.pcs.acceptance_floor_gb_s), as a JobSet the operator submits to
the team's LocalQueue before a run.

Shape: one Indexed Job of one pod per node, each requesting what a training pod requests (GPUs, EFA or RDMA
devices, CPU, memory: Kueue admits it into the same quota, so it runs only while no training run holds the nodes).
nccl-tests spans nodes only through MPI (NVIDIA/nccl-tests README: "NCCL tests rely on MPI to work on multiple
processes, hence multiple nodes"), so pod 0 starts the ranks with Open MPI's mpirun over ssh to the other pods, as
Kubeflow's MPI Operator does for aws-samples' nccl-tests MPIJob, without another site controller: the JobSet's
headless Service gives each pod its DNS name, and the Job's success policy (index 0 succeeded; Kubernetes Job
successPolicy, GA in 1.33) ends the ssh servers. The ssh key is the stack's, held in a Secret in the namespace.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pulumi_random as random
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from gpuinfra.catalog.pins import IMAGES
from gpuinfra.plan.pcs import ACCEPTANCE_SHARE, acceptance_floor_gb_s, busbw_ceiling_gb_s
from gpuinfra.pulumi.components.training.bootstrap import NCCL_MAX_BYTES
from gpuinfra.pulumi.templates import render

SCRIPT_DIR = "/opt/gpuinfra"
SCRIPT = "nccl-acceptance"
JOBSET_KEY = "nccl-acceptance.yaml"
KEYS_DIR = "/etc/gpuinfra/ssh"
REPLICATED_JOB = "nccl"
WORKLOAD = "nccl-acceptance"
"""The pods' gpuinfra.io/workload label: not `training`, so the training PodDisruptionBudget does not count them."""
MPIRUN = "/opt/amazon/openmpi/bin/mpirun"
ALL_REDUCE_PERF = "/opt/nccl-tests/build/all_reduce_perf"
"""Where the pinned image has them (awsome-distributed-training nccl-tests.Dockerfile: Open MPI from the EFA
installer, nccl-tests built in /opt/nccl-tests)."""
PEER_WAIT_SECONDS = 900
"""How long the leader waits for every other pod's sshd: they start together once Kueue admits the JobSet, but a
fresh node pulls the ~10 GB image first."""
DEADLINE_SECONDS = 2700
"""The Job's activeDeadlineSeconds: the peer wait plus an 8 GiB all_reduce_perf sweep (minutes) and margin."""
FINISHED_TTL_SECONDS = 86400
"""The finished JobSet (and its pods' logs) stays a day."""
FABRIC_PREFIXES = ("NCCL_", "FI_")
"""The training environment's fabric settings, the only part of it the acceptance job takes."""


@dataclass(frozen=True)
class ImagePaths:
    """Where the acceptance image keeps its tools, and what the script must do for them."""

    mpirun: str = MPIRUN
    all_reduce_perf: str = ALL_REDUCE_PERF
    env_script: str | None = None
    """A file the leader sources before mpirun for the fabric's NCCL settings (None: the pod's env has them)."""
    ssh_port: int | None = None
    """The port sshd listens on and ssh dials (None: sshd's own, 22)."""


def key_pair(seed: bytes) -> dict[str, str]:
    """An ECDSA P-256 key pair derived from `seed` (the stack's random bytes): the private key as PEM, which OpenSSH
    reads, and the public key as an authorized_keys line. Derived, not generated, so the Secret is the same on every
    `pulumi up` (ed25519's OpenSSH private format carries random check bytes, which would change it each time)."""
    order = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551  # SEC 2, secp256r1 n
    scalar = int.from_bytes(hashlib.sha256(seed).digest(), "big") % (order - 1) + 1
    key = ec.derive_private_key(scalar, ec.SECP256R1())
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    ).decode()
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return {"id_ecdsa": private, "id_ecdsa.pub": public.decode() + " gpuinfra-nccl-acceptance\n"}


KEY_FILES = ("id_ecdsa", "id_ecdsa.pub")


def secret_data(seed_hex: str | None) -> dict[str, str]:
    """The Secret's files from the seed; an offline preview (engine mocks) has no seed and shows where they come
    from."""
    if not seed_hex:
        return {name: "(derived at apply from the stack's random seed)" for name in KEY_FILES}
    return key_pair(bytes.fromhex(seed_hex))


def fabric_env(env: Mapping[str, str], fabric: str) -> dict[str, str]:
    """The training pod's fabric settings; on InfiniBand also NCCL_NET=IB: the image carries aws-ofi-nccl for EFA,
    and NCCL_NET "forces NCCL to use a specific network" rather than the plugin it would load first ("Internal
    network names are "IB" (generic IB verbs) and "Socket"": NCCL User Guide, environment variables, NCCL_NET)."""
    out = {k: v for k, v in env.items() if k.startswith(FABRIC_PREFIXES)}
    if fabric == "infiniband":
        out["NCCL_NET"] = "IB"
    return out


def acceptance_script(
    cluster: str,
    nodes: int,
    gpus_per_node: int,
    instance_type: str,
    network_gbps: float,
    jobset_path: str,
    image: ImagePaths | None = None,
) -> str:
    """The script every pod of the acceptance JobSet runs (pod 0 leads, the others serve ssh); `image`: where an
    image other than the pinned nccl-tests one keeps its tools (a platform vendor's own NCCL test image)."""
    paths = image or ImagePaths()
    return render(
        "kubernetes/nccl-acceptance.sh.j2",
        cluster=cluster,
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        instance_type=instance_type,
        network_gbps=f"{network_gbps:g}",
        ceiling=f"{busbw_ceiling_gb_s(network_gbps):g}",
        share_percent=f"{ACCEPTANCE_SHARE * 100:g}",
        floor=f"{acceptance_floor_gb_s(network_gbps):g}",
        keys_dir=KEYS_DIR,
        replicated_job=REPLICATED_JOB,
        wait_seconds=PEER_WAIT_SECONDS,
        max_bytes=NCCL_MAX_BYTES,
        mpirun=paths.mpirun,
        all_reduce_perf=paths.all_reduce_perf,
        env_script=paths.env_script,
        ssh_port=paths.ssh_port,
        jobset_path=jobset_path,
    )


def acceptance_pod(
    resources: Mapping[str, Any],
    env: Mapping[str, str],
    fabric: str,
    toleration: dict[str, str],
    config_map: str,
    secret: str,
    shm: str,
    ipc_lock: bool,
    topology_level: str | None,
) -> dict[str, Any]:
    """One node's pod: the training pod's requests (= limits), the GPU toleration, the fabric environment."""
    container: dict[str, Any] = {
        "name": "nccl-tests",
        "image": f"{IMAGES['nccl-tests'].source}:{IMAGES['nccl-tests'].version}",
        "command": ["/bin/bash", f"{SCRIPT_DIR}/{SCRIPT}"],
        "env": [
            {
                "name": "JOBSET_NAME",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['jobset.sigs.k8s.io/jobset-name']"}},
            },
            *({"name": k, "value": v} for k, v in sorted(fabric_env(env, fabric).items())),
        ],
        "resources": {"requests": dict(resources), "limits": dict(resources)},
        "volumeMounts": [
            {"name": "script", "mountPath": SCRIPT_DIR, "readOnly": True},
            {"name": "ssh", "mountPath": KEYS_DIR, "readOnly": True},
            {"name": "shm", "mountPath": "/dev/shm"},
        ],
    }
    # Root with the runtime's default capabilities but NET_RAW (sshd's privilege separation uses SETUID, SETGID
    # and SYS_CHROOT), plus IPC_LOCK on EFA and InfiniBand, as the trainers (docs/security.md).
    capabilities: dict[str, list[str]] = {"drop": ["NET_RAW"], **({"add": ["IPC_LOCK"]} if ipc_lock else {})}
    container["securityContext"] = {"allowPrivilegeEscalation": False, "capabilities": capabilities}
    template: dict[str, Any] = {
        "metadata": {"labels": {"gpuinfra.io/workload": WORKLOAD}},
        "spec": {
            "restartPolicy": "Never",
            "automountServiceAccountToken": False,
            "tolerations": [toleration],
            "containers": [container],
            "volumes": [
                {"name": "script", "configMap": {"name": config_map, "items": [{"key": SCRIPT, "path": SCRIPT}]}},
                {"name": "ssh", "secret": {"secretName": secret, "defaultMode": 0o400}},
                {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": shm}},
            ],
        },
    }
    if topology_level:
        template["metadata"]["annotations"] = {"kueue.x-k8s.io/podset-preferred-topology": topology_level}
    return template


def acceptance_jobset(cluster: str, namespace: str, queue: str, nodes: int, pod: dict[str, Any]) -> dict[str, Any]:
    """The JobSet: one Indexed Job of `nodes` pods in the team's LocalQueue; it succeeds when pod 0 does (the
    leader's verdict) and fails at the first failed pod (backoffLimit 0, no JobSet restart)."""
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "generateName": f"{cluster}-nccl-",
            "namespace": namespace,
            "labels": {"kueue.x-k8s.io/queue-name": queue, "gpuinfra.io/workload": WORKLOAD},
        },
        "spec": {
            "failurePolicy": {"maxRestarts": 0},
            "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
            "ttlSecondsAfterFinished": FINISHED_TTL_SECONDS,
            "replicatedJobs": [
                {
                    "name": REPLICATED_JOB,
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "parallelism": nodes,
                            "completions": nodes,
                            "completionMode": "Indexed",
                            "backoffLimit": 0,
                            "activeDeadlineSeconds": DEADLINE_SECONDS,
                            "successPolicy": {"rules": [{"succeededIndexes": "0"}]},
                            "template": pod,
                        }
                    },
                }
            ],
        },
    }


def jobset_yaml(jobset: dict[str, Any], config_map: str) -> str:
    """The JobSet as the operator submits it, with how."""
    namespace = jobset["metadata"]["namespace"]
    key = JOBSET_KEY.replace(".", "\\.")
    pod0 = "batch.kubernetes.io/job-completion-index=0"
    header = (
        "# NCCL acceptance job, rendered by gpuinfra: run it before a training run (it takes the training quota).\n"
        f"#   kubectl -n {namespace} get configmap {config_map} -o jsonpath='{{.data.{key}}}' \\\n"
        "#     | kubectl create -f -\n"
        f"#   kubectl -n {namespace} wait jobset/<name> --for=condition=Completed --timeout=45m\n"
        f"#   kubectl -n {namespace} logs -l jobset.sigs.k8s.io/jobset-name=<name>,{pod0}\n"
    )
    return header + yaml.safe_dump(jobset, sort_keys=False)


def create_acceptance(
    name: str,
    cluster: str,
    namespace: pulumi.Input[str],
    labels: dict[str, str],
    script: str,
    jobset: dict[str, Any],
    o: pulumi.ResourceOptions,
) -> None:
    """The ssh key (stack state, a Pulumi secret), its Secret, and the ConfigMap with the script and the JobSet."""
    config_map = f"{cluster}-nccl-acceptance"
    generator = random.Provider(f"{name}-nccl-random", opts=pulumi.ResourceOptions(parent=o.parent))
    seed = random.RandomBytes(
        f"{name}-nccl-ssh-seed", length=32, opts=pulumi.ResourceOptions(parent=o.parent, provider=generator)
    )
    k8s.core.v1.Secret(
        f"{name}-nccl-ssh",
        metadata={"name": f"{config_map}-ssh", "namespace": namespace, "labels": labels},
        # RandomBytes.hex is a secret output, and so is what is derived from it.
        string_data=seed.hex.apply(secret_data),
        opts=o,
    )
    k8s.core.v1.ConfigMap(
        f"{name}-nccl-acceptance",
        metadata={"name": config_map, "namespace": namespace, "labels": labels},
        data={SCRIPT: script, JOBSET_KEY: jobset_yaml(jobset, config_map)},
        opts=o,
    )


__all__ = [
    "ALL_REDUCE_PERF",
    "JOBSET_KEY",
    "MPIRUN",
    "SCRIPT",
    "ImagePaths",
    "acceptance_jobset",
    "acceptance_pod",
    "acceptance_script",
    "create_acceptance",
    "fabric_env",
    "jobset_yaml",
    "key_pair",
]
