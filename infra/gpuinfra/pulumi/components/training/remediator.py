"""On premises, nothing else notices a failed GPU: a CronJob in the team's namespace runs the GPU remediation script
(templates/training/gpu-remediator.sh.j2) over this cluster's nodes, cordoning a node whose device plugin marked a
GPU unhealthy (allocatable below capacity) or that a node-problem-detector condition the site lists reports, and
uncordoning the nodes it cordoned once healthy. EKS has its own node repair (node monitoring agent + node auto
repair); PCS has the login node's repair loop (node_repair.py).

RBAC: a ClusterRole that may get, list and patch nodes, nothing else (Kubernetes API: nodes are cluster-scoped, so a
Role cannot grant them); the script only patches nodes carrying this cluster's domain label. The pod runs as
nobody with no capabilities, the runtime's seccomp profile and a read-only root file system (Pod Security
Standards, restricted), so the namespace's enforced level admits it whatever it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from gpuinfra.pulumi.templates import render

TYPE = "gpuinfra:training:GpuRemediation"
SCHEDULE = "*/2 * * * *"
MARK = "gpuinfra.io/gpu-remediation"
MAX_CORDONS = 2
"""Per run: one failing system is the usual case; a site-wide glitch (a driver update, a DCGM restart) must not
cordon the whole cluster. A real second failure is cordoned two minutes later."""
SCRIPT_DIR = "/opt/gpuinfra"
NOBODY = 65534


@dataclass(frozen=True)
class RemediationArgs:
    cluster: str
    namespace: pulumi.Input[str]
    image: str
    selector: str
    """Label selector of this cluster's nodes (its fabric domain)."""
    resource: str
    """The GPU resource the device plugin advertises (nvidia.com/gpu)."""
    conditions: tuple[str, ...] = ()
    labels: dict[str, str] | None = None


def remediation_script() -> str:
    """The script (its configuration is the CronJob's environment, remediation_env: data, never code)."""
    return render("training/gpu-remediator.sh.j2")


def remediation_env(args: RemediationArgs) -> list[dict[str, str]]:
    values = {
        "GPUINFRA_NODE_SELECTOR": args.selector,
        "GPUINFRA_GPU_RESOURCE": args.resource,
        "GPUINFRA_NODE_CONDITIONS": ",".join(args.conditions),
        "GPUINFRA_REMEDIATION_MARK": MARK,
        "GPUINFRA_MAX_CORDONS": str(MAX_CORDONS),
    }
    return [{"name": k, "value": v} for k, v in values.items()]


def restricted_container() -> dict[str, object]:
    return {
        "runAsNonRoot": True,
        "runAsUser": NOBODY,
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


class GpuRemediation(pulumi.ComponentResource):
    def __init__(self, name: str, args: RemediationArgs, provider: k8s.Provider) -> None:
        super().__init__(TYPE, name, None, None)
        o = pulumi.ResourceOptions(parent=self, provider=provider)
        labels = dict(args.labels or {})
        account = f"{args.cluster}-gpu-remediation"
        meta = {"name": account, "namespace": args.namespace, "labels": labels}
        k8s.core.v1.ServiceAccount(f"{name}-sa", metadata=meta, opts=o)
        role = k8s.rbac.v1.ClusterRole(
            f"{name}-role",
            metadata={"name": account, "labels": labels},
            rules=[{"api_groups": [""], "resources": ["nodes"], "verbs": ["get", "list", "patch"]}],
            opts=o,
        )
        k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-binding",
            metadata={"name": account, "labels": labels},
            role_ref={"api_group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role.metadata["name"]},
            subjects=[{"kind": "ServiceAccount", "name": account, "namespace": args.namespace}],
            opts=o,
        )
        script = k8s.core.v1.ConfigMap(
            f"{name}-script", metadata=meta, data={"gpu-remediator": remediation_script()}, opts=o
        )
        pod = {
            "serviceAccountName": account,
            "restartPolicy": "Never",
            "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [
                {
                    "name": "remediate",
                    "image": args.image,
                    "command": ["/bin/bash", f"{SCRIPT_DIR}/gpu-remediator"],
                    "env": remediation_env(args),
                    "securityContext": restricted_container(),
                    "resources": {
                        "requests": {"cpu": "50m", "memory": "64Mi"},
                        "limits": {"cpu": "200m", "memory": "128Mi"},
                    },
                    "volumeMounts": [{"name": "script", "mountPath": SCRIPT_DIR, "readOnly": True}],
                }
            ],
            "volumes": [{"name": "script", "configMap": {"name": script.metadata["name"], "defaultMode": 0o555}}],
        }
        k8s.batch.v1.CronJob(
            f"{name}-cronjob",
            metadata=meta,
            spec={
                "schedule": SCHEDULE,
                "concurrencyPolicy": "Forbid",
                "successfulJobsHistoryLimit": 1,
                "failedJobsHistoryLimit": 3,
                "jobTemplate": {"spec": {"backoffLimit": 0, "template": {"spec": pod}}},
            },
            opts=o,
        )
        self.register_outputs({})


__all__ = [
    "MARK",
    "MAX_CORDONS",
    "SCHEDULE",
    "GpuRemediation",
    "RemediationArgs",
    "remediation_env",
    "remediation_script",
]
