"""Google's RDMA binary and NCCL installer for A3 Ultra and A4 nodes: a DaemonSet whose init container copies the gIB
NCCL plugin (and its NCCL) onto each GPU node, into /home/kubernetes/bin/gib and the driver's lib64, where the
trainer mounts them (jobset.py HOST_MOUNTS). Without it `NCCL_NET=gIB` finds no plugin and a trainer fails at its
first collective.

It is GoogleCloudPlatform/container-engine-accelerators `gpudirect-rdma/nccl-rdma-installer.yaml` at
992db81257553607f1477945f1b3219632991829 (2026-06-11; the repository's tags stop in 2022, so the pin is the
commit), with one change: the node affinity names the cluster's own accelerator rather than both of Google's
(nvidia-h200-141gb, nvidia-b200). tests/clouds/test_gcp_networks.py holds the rest equal to that file."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

MANIFEST_COMMIT = "992db81257553607f1477945f1b3219632991829"
"""container-engine-accelerators' commit the DaemonSet follows."""
GIB_VERSION = "v1.1.1"
"""The gIB plugin's release the installer at that commit pins (its image tag); Google's NCCL test manifests use
the diagnostic image of the same release."""
INSTALLER_IMAGE = f"us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib:{GIB_VERSION}"
PAUSE_IMAGE = "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830"
NAME = "nccl-rdma-installer"
ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
INSTALL = """set -ex
/scripts/container_entry.sh install
cp -r /var/lib/gib/lib64/. /usr/local/home/kubernetes/bin/nvidia/lib64
cp -r /var/lib/gib/. /usr/local/home/kubernetes/bin/gib
echo "installation finishes"
"""
"""The init container's script, as Google's manifest runs it: the image's installer, then the plugin and its NCCL
copied onto the node."""


def installer_spec(accelerator: str) -> dict[str, Any]:
    """The DaemonSet's spec: on every node of the accelerator, privileged (it writes the host's directories), then a
    pause container keeps the pod (and so the install) in place."""
    selector = {"k8s-app": NAME}
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": ACCELERATOR_LABEL, "operator": "In", "values": [accelerator]}]}
                ]
            }
        }
    }
    pod = {
        "priorityClassName": "system-node-critical",
        "affinity": affinity,
        "tolerations": [{"operator": "Exists"}],
        "hostNetwork": True,
        "hostPID": True,
        "volumes": [
            {
                "name": "library-dir-host",
                "hostPath": {"path": "/home/kubernetes/bin/nvidia/lib64", "type": "DirectoryOrCreate"},
            },
            {"name": "gib", "hostPath": {"path": "/home/kubernetes/bin/gib"}},
        ],
        "initContainers": [
            {
                "image": INSTALLER_IMAGE,
                "name": NAME,
                "resources": {"requests": {"cpu": "150m"}},
                "securityContext": {"privileged": True},
                "volumeMounts": [
                    {"name": "library-dir-host", "mountPath": "/usr/local/home/kubernetes/bin/nvidia/lib64"},
                    {"name": "gib", "mountPath": "/usr/local/home/kubernetes/bin/gib"},
                ],
                "command": ["/bin/sh", "-c"],
                "args": [INSTALL],
            }
        ],
        "containers": [{"image": PAUSE_IMAGE, "name": "pause"}],
    }
    return {
        "selector": {"matchLabels": selector},
        "updateStrategy": {"type": "RollingUpdate"},
        "template": {"metadata": {"labels": {"name": NAME, **selector}}, "spec": pod},
    }


def create_installer(
    name: str, accelerator: str, labels: dict[str, str], o: pulumi.ResourceOptions
) -> k8s.apps.v1.DaemonSet:
    return k8s.apps.v1.DaemonSet(
        f"{name}-{NAME}",
        metadata={"name": NAME, "namespace": "kube-system", "labels": {**labels, "k8s-app": NAME}},
        spec=installer_spec(accelerator),
        opts=o,
    )


__all__ = ["GIB_VERSION", "INSTALLER_IMAGE", "MANIFEST_COMMIT", "create_installer", "installer_spec"]
