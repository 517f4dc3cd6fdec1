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


def node_config(instance_store_gb: int) -> dict[str, Any] | None:
    """The NodeConfig for a node with `instance_store_gb` of NVMe instance store; None when it has none."""
    if instance_store_gb <= 0:
        return None
    return {
        "apiVersion": API_VERSION,
        "kind": "NodeConfig",
        "spec": {"instance": {"localStorage": {"strategy": LOCAL_STORAGE}}},
    }


def mime_user_data(config: dict[str, Any]) -> str:
    """The NodeConfig as the one part of a MIME multi-part document (what nodeadm and EKS's merge read)."""
    part = Message()
    part["Content-Type"] = MEDIA_TYPE
    part.set_payload(yaml.safe_dump(config, sort_keys=False))
    message = MIMEMultipart(boundary=BOUNDARY)
    message.attach(part)
    return message.as_string()


def launch_template_user_data(instance_store_gb: int) -> str | None:
    """Base64 user data for the GPU launch template (EC2 takes it encoded), or None: nothing to configure."""
    config = node_config(instance_store_gb)
    if config is None:
        return None
    return base64.b64encode(mime_user_data(config).encode()).decode()


__all__ = ["API_VERSION", "LOCAL_STORAGE", "MEDIA_TYPE", "launch_template_user_data", "mime_user_data", "node_config"]
