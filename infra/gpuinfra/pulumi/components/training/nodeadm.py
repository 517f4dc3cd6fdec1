"""What EKS GPU nodes are told at boot: a nodeadm `NodeConfig` (AL2023 EKS-optimized AMIs) that stripes the
instance's NVMe stores into one RAID0 array for the kubelet, containerd's image store and pod logs, so container
images and emptyDir scratch of a p5 sit on its 8 x 3.84 TB local disks instead of the EBS root.

Managed node groups merge the launch template's user data with their own `NodeConfig` (cluster name, endpoint,
CA), so ours carries only the instance options; it must be MIME multi-part with the part's media type
`application/node.eks.aws` (awslabs/amazon-eks-ami nodeadm/internal/configprovider/mime.go: parts of other types
are ignored). Field names: nodeadm/api/v1alpha1/nodeconfig_types.go (`instance.localStorage.strategy`, enum
RAID0 | RAID10 | Mount; default mount /mnt/k8s-disks)."""

from __future__ import annotations

import base64
from email.message import Message
from email.mime.multipart import MIMEMultipart
from typing import Any

import yaml

API_VERSION = "node.eks.aws/v1alpha1"
MEDIA_TYPE = "application/node.eks.aws"
BOUNDARY = "==GPUINFRA-NODEADM=="
LOCAL_STORAGE = "RAID0"
"""One array across every instance store: the fastest layout; a lost disk loses only cache (images, scratch)."""
CRITICAL_PODS_SHUTDOWN_SECONDS = 30
"""The part of the shutdown grace period kept for system-node-critical pods (nodeadm's own default share)."""
NODE_SHUTDOWN_SECONDS = 150
"""The most a GPU node may hold its shutdown for the kubelet: nodeadm's own default from Kubernetes 1.34 (2m30s, 30 s
of it for critical pods: nodeadm/internal/kubelet/config.go withVersionToggles). EC2 gives a stopping or terminating
instance "several minutes" before it forces it off (EC2 User Guide, "How Amazon EC2 instance stop and start works"),
which the EKS AMI maintainers read as 3 minutes, with 30 s left for the rest of the OS; a spot reclaim takes the same
path once its 120 s notice is over (awslabs/amazon-eks-ami PR #2390 and its review thread)."""


def node_config(instance_store_gb: int, pod_grace_seconds: int | None = None) -> dict[str, Any] | None:
    """The NodeConfig for a GPU node: RAID0 over its NVMe instance store (if any), and graceful node shutdown long
    enough for a training pod's checkpoint window and SIGTERM (`pod_grace_seconds`) plus the share the kubelet keeps
    for critical pods. Graceful shutdown is what stops the pods, through their preStop hook, when EC2 shuts the
    instance down while their PodDisruptionBudget holds off a drain (nodeadm turns it on by default only from
    Kubernetes 1.34, at 150 s with 30 s for critical pods: nodeadm/internal/kubelet/config.go). None: nothing."""
    spec: dict[str, Any] = {}
    if instance_store_gb > 0:
        spec["instance"] = {"localStorage": {"strategy": LOCAL_STORAGE}}
    if pod_grace_seconds:
        total = pod_grace_seconds + CRITICAL_PODS_SHUTDOWN_SECONDS
        # The kubelet gives regular pods the first (total - critical) seconds (KubeletConfiguration
        # shutdownGracePeriodCriticalPods); pod_stop caps the checkpoint window so a pod's grace fits.
        assert total <= NODE_SHUTDOWN_SECONDS, f"a {pod_grace_seconds} s pod grace overruns the node's shutdown"
        spec["kubelet"] = {
            "config": {
                "shutdownGracePeriod": f"{total}s",
                "shutdownGracePeriodCriticalPods": f"{CRITICAL_PODS_SHUTDOWN_SECONDS}s",
            }
        }
    return {"apiVersion": API_VERSION, "kind": "NodeConfig", "spec": spec} if spec else None


def mime_user_data(config: dict[str, Any]) -> str:
    """The NodeConfig as the one part of a MIME multi-part document (what nodeadm and EKS's merge read)."""
    part = Message()
    part["Content-Type"] = MEDIA_TYPE
    part.set_payload(yaml.safe_dump(config, sort_keys=False))
    message = MIMEMultipart(boundary=BOUNDARY)
    message.attach(part)
    return message.as_string()


def launch_template_user_data(instance_store_gb: int, pod_grace_seconds: int | None = None) -> str | None:
    """Base64 user data for the GPU launch template (EC2 takes it encoded), or None: nothing to configure."""
    config = node_config(instance_store_gb, pod_grace_seconds)
    if config is None:
        return None
    return base64.b64encode(mime_user_data(config).encode()).decode()


__all__ = [
    "API_VERSION",
    "CRITICAL_PODS_SHUTDOWN_SECONDS",
    "LOCAL_STORAGE",
    "MEDIA_TYPE",
    "NODE_SHUTDOWN_SECONDS",
    "launch_template_user_data",
    "mime_user_data",
    "node_config",
]
