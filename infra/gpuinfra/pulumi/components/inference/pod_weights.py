"""How a server pod gets its weights: one init container syncs the model prefix from the region's registry
replica into the pod's `weights` emptyDir (the AWS CLI image, through the pod's IAM role), and a second checks
every file against the prefix's manifest.json before the server may start (the server image: python3, no AWS
access), the contract the EC2 prefetch checks too (templates/inference/prefetch.sh.j2).

The emptyDir lives as long as the pod: a container restart keeps the weights, a new pod downloads them again. A
node-wide cache would need a hostPath (forbidden by the restricted Pod Security Standard the namespace enforces)
or a CSI volume the cluster provides; the download is part of the planned cold start."""

from __future__ import annotations

from typing import Any

from gpuinfra.templating import renderer

AWS_CLI_IMAGE = "public.ecr.aws/aws-cli/aws-cli:2.22.0"
WEIGHTS_DIR = "/weights"
render = renderer("inference")


def verify_script(fleet: str, root: str = WEIGHTS_DIR) -> str:
    """The `verify` init container's bash script (tested as the pod runs it, and shellchecked)."""
    return render("k8s-verify-weights.sh.j2", fleet=fleet, root=root)


def weights_init_containers(
    fleet: str,
    source: str,
    region: str,
    server_image: str,
    env: list[dict[str, Any]],
    security_context: dict[str, Any],
    cache_mount: dict[str, Any],
) -> list[dict[str, Any]]:
    """Sync, then verify: init containers run in order, each to completion (Kubernetes docs, Init Containers)."""
    resources = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "2Gi"}}
    return [
        {
            "name": "weights",
            "image": AWS_CLI_IMAGE,
            "args": ["s3", "sync", source, WEIGHTS_DIR, "--only-show-errors", "--region", region],
            "env": env,
            "security_context": security_context,
            "resources": resources,
            "volume_mounts": [{"name": "weights", "mount_path": WEIGHTS_DIR}, cache_mount],
        },
        {
            "name": "verify",
            "image": server_image,
            "command": ["bash", "-c", verify_script(fleet)],
            "env": env,
            "security_context": security_context,
            "resources": resources,
            "volume_mounts": [{"name": "weights", "mount_path": WEIGHTS_DIR, "read_only": True}, cache_mount],
        },
    ]


__all__ = ["AWS_CLI_IMAGE", "WEIGHTS_DIR", "verify_script", "weights_init_containers"]
