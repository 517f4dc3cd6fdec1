"""The one-hour host maintenance notice as an on-demand checkpoint (GKE): a DaemonSet on the GPU nodes, on the node's
network (the Compute Engine metadata server's instance/maintenance-event, which GKE's metadata server does not
serve to pods), writing the training contract's checkpoint-now file into each trainer pod's own emptyDir when the
host is to stop (templates/gcp/maintenance-notice.py.j2). Not on Spot nodes: they get a 30 s preemption notice
instead, which the trainer's preStop hook turns into its checkpoint window.

It runs the trainer's image (python3 is there: torchrun is Python), already on the node."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpuinfra.clouds.gcp.pulumi.training.kueue import GPU
from gpuinfra.pulumi.components.training.bootstrap import CHECKPOINT_NOW_FILE
from gpuinfra.pulumi.components.training.kubernetes import WorkloadArgs, device_toleration
from gpuinfra.pulumi.components.training.pod_stop import grace_seconds
from gpuinfra.pulumi.templates import render

METADATA_URL = "http://169.254.169.254/computeMetadata/v1/instance/maintenance-event"
"""The metadata server by its address (Compute Engine docs, "About VM metadata"): a host-network pod resolves no
cluster DNS name for it."""
KUBELET_PODS = "/var/lib/kubelet/pods"
"""Where the kubelet keeps each pod's volumes: <uid>/volumes/kubernetes.io~empty-dir/<volume> (kubelet's
emptyDir plugin); a Memory emptyDir is a tmpfs mounted there, which HostToContainer propagation shows the pod."""
VOLUME = "gpuinfra-run"
"""The trainer's emptyDir holding the checkpoint-now file (templates/kubernetes/jobset.yaml.j2)."""
SCRIPT_DIR = "/opt/gpuinfra"
SCRIPT = "maintenance-notice"


def lead_seconds(notice_seconds: int, args: WorkloadArgs) -> int:
    """From the notice to the deadline: the notice less the trainer's own stop (its grace period)."""
    return notice_seconds - (args.job.grace_seconds or grace_seconds(args.job.checkpoint_window))


def notice_script(args: WorkloadArgs, notice_seconds: int) -> str:
    return render(
        "gcp/maintenance-notice.py.j2",
        cluster=args.cluster,
        metadata_url=METADATA_URL,
        kubelet_pods=KUBELET_PODS,
        volume=VOLUME,
        now_file_name=CHECKPOINT_NOW_FILE.rsplit("/", 1)[1],
        lead_seconds=lead_seconds(notice_seconds, args),
    )


def notice_pod(args: WorkloadArgs, config_map: str, tolerations: list[dict[str, str]]) -> dict[str, Any]:
    """On every GPU node, on the host's network; it writes only into the kubelet's pod volumes (root with
    DAC_OVERRIDE, nothing else), reads no Kubernetes API."""
    return {
        "hostNetwork": True,
        "automountServiceAccountToken": False,
        "nodeSelector": dict(args.flavor.node_labels),
        "tolerations": tolerations,
        "containers": [
            {
                "name": "notice",
                "image": args.job.image,
                "command": ["python3", f"{SCRIPT_DIR}/{SCRIPT}"],
                "resources": {
                    "requests": {"cpu": "10m", "memory": "64Mi"},
                    "limits": {"cpu": "100m", "memory": "64Mi"},
                },
                "securityContext": {
                    "runAsUser": 0,
                    "allowPrivilegeEscalation": False,
                    "readOnlyRootFilesystem": True,
                    "capabilities": {"drop": ["ALL"], "add": ["DAC_OVERRIDE"]},
                },
                "volumeMounts": [
                    {"name": "pods", "mountPath": KUBELET_PODS, "mountPropagation": "HostToContainer"},
                    {"name": "script", "mountPath": SCRIPT_DIR, "readOnly": True},
                ],
            }
        ],
        "volumes": [
            {"name": "pods", "hostPath": {"path": KUBELET_PODS, "type": "Directory"}},
            {"name": "script", "configMap": {"name": config_map}},
        ],
    }


def notice_daemonset(args: WorkloadArgs, queued: list[dict[str, str]]) -> dict[str, Any]:
    """The DaemonSet's spec (`queued`: the flavor's extra tolerations, GKE's queued-provisioning taint)."""
    labels = {"gpuinfra.io/workload": SCRIPT}
    tolerations = [device_toleration(args.device_resource or GPU), *queued]
    return {
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": notice_pod(args, f"{args.cluster}-{SCRIPT}", tolerations),
        },
    }


def create_notice(
    name: str,
    args: WorkloadArgs,
    notice_seconds: int,
    queued: list[dict[str, str]],
    namespace: pulumi.Input[str],
    o: pulumi.ResourceOptions,
) -> k8s.apps.v1.DaemonSet:
    config_map = f"{args.cluster}-{SCRIPT}"
    k8s.core.v1.ConfigMap(
        f"{name}-{SCRIPT}",
        metadata={"name": config_map, "namespace": namespace, "labels": args.labels},
        data={SCRIPT: notice_script(args, notice_seconds)},
        opts=o,
    )
    return k8s.apps.v1.DaemonSet(
        f"{name}-{SCRIPT}",
        metadata={"name": config_map, "namespace": namespace, "labels": args.labels},
        spec=notice_daemonset(args, queued),
        opts=o,
    )


__all__ = ["METADATA_URL", "create_notice", "lead_seconds", "notice_daemonset", "notice_script"]
