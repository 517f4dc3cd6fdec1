"""Flex-start for a gang: GKE's queued provisioning driven by Kueue. A flex-start GPU pool that takes only
ProvisioningRequests (gke.py: `queued_provisioning`, from zero nodes) gets its nodes all at once, when Dynamic
Workload Scheduler finds them, for at most the request's `maxRunDurationSeconds`; Kueue makes that request when it
would admit a job, and admits the job once the nodes are there (GKE docs, "Run a large-scale workload with
flex-start with queued provisioning"; Cluster Toolkit examples/gke-dws-flex-start dws-queues.yaml.tftpl).

The objects, in Kueue v1beta2 (the chart pin, 0.19.2), held to its CRDs at that tag by tests/clouds/test_gcp_flex.py:

- a `ProvisioningRequestConfig`: the class `queued-provisioning.gke.io`, the GPUs as the managed resource, and the
  spec's run duration as the requests' `maxRunDurationSeconds` (Kueue copies a config's parameters into each
  ProvisioningRequest; a job's `provreq.kueue.x-k8s.io/maxRunDurationSeconds` annotation overrides it);
- an `AdmissionCheck` run by Kueue's provisioning controller (`kueue.x-k8s.io/provisioning-request`) with it;
- the ClusterQueue's `admissionChecksStrategy` naming the check (v1beta2 has no plain `admissionChecks` list, which
  Google's v1beta1 examples use);
- the GPU flavor's toleration of the taint GKE puts on queued-provisioning nodes (`cloud.google.com/gke-queued`),
  which Kueue adds to every pod it admits on the flavor."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpuinfra.pulumi.components.kueue import KUEUE_API

PROVISIONING_CLASS = "queued-provisioning.gke.io"
CONTROLLER = "kueue.x-k8s.io/provisioning-request"
"""Kueue's ProvisioningRequestControllerName (apis/kueue/v1beta2/provisioningrequestconfig_types.go)."""
QUEUED_TAINT = {"key": "cloud.google.com/gke-queued", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
"""GKE's taint on queued-provisioning nodes (Cluster Toolkit's A3 Ultra NCCL JobSet tolerates it)."""


def check_name(cluster: str) -> str:
    return f"{cluster}-flex-start"


def provisioning_config(cluster: str, resource: str, run_seconds: int, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE_API,
        "kind": "ProvisioningRequestConfig",
        "metadata": {"name": check_name(cluster), "labels": labels},
        "spec": {
            "provisioningClassName": PROVISIONING_CLASS,
            "managedResources": [resource],
            "parameters": {"maxRunDurationSeconds": str(run_seconds)},
        },
    }


def admission_check(cluster: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE_API,
        "kind": "AdmissionCheck",
        "metadata": {"name": check_name(cluster), "labels": labels},
        "spec": {
            "controllerName": CONTROLLER,
            "parameters": {
                "apiGroup": KUEUE_API.split("/")[0],
                "kind": "ProvisioningRequestConfig",
                "name": check_name(cluster),
            },
        },
    }


def queue_check(cluster: str) -> dict[str, Any]:
    """The ClusterQueue's share: every workload it admits passes the check first."""
    return {"admissionChecksStrategy": {"admissionChecks": [{"name": check_name(cluster)}]}}


def create_check(
    name: str, cluster: str, resource: str, run_seconds: int, labels: dict[str, str], o: pulumi.ResourceOptions
) -> pulumi.Resource:
    """The config and the check naming it (the ClusterQueue depends on the check)."""
    made: list[pulumi.Resource] = []
    for manifest in (provisioning_config(cluster, resource, run_seconds, labels), admission_check(cluster, labels)):
        made.append(
            k8s.apiextensions.CustomResource(
                f"{name}-{manifest['kind'].lower()}",
                api_version=manifest["apiVersion"],
                kind=manifest["kind"],
                metadata=manifest["metadata"],
                spec=manifest["spec"],
                opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=made)),
            )
        )
    return made[-1]


__all__ = [
    "CONTROLLER",
    "PROVISIONING_CLASS",
    "QUEUED_TAINT",
    "admission_check",
    "check_name",
    "create_check",
    "provisioning_config",
    "queue_check",
]
