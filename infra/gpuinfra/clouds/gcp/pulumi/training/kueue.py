"""Kueue and JobSet on the training cluster's GKE, as Cluster Toolkit's gke-a3-ultragpu blueprint runs them: the two
charts at the pins AWS's clusters use (pins.py), and Kueue's objects for topology-aware scheduling on Google's
topology labels (cloud.google.com/gce-topology-block, -subblock, -host: the blueprint's kueue-configuration), one
ResourceFlavor for the GPU pool and a ClusterQueue holding the cluster's GPUs, a LocalQueue in the team's namespace.

GKE installs the NVIDIA driver and device plugin itself (the node pool's gpu_driver_installation_config), and the
Lustre CSI driver is a GKE add-on: neither is a chart here."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from gpuinfra.clouds.gcp.pulumi.base import opts
from gpuinfra.clouds.gcp.pulumi.training.provisioning import QUEUED_TAINT, create_check, queue_check
from gpuinfra.graph import pod_security
from gpuinfra.pulumi.components.kueue import queues, resource_flavor, topology
from gpuinfra.pulumi.components.training.kubernetes import (
    device_toleration,
    isolate,
    kueue_values,
    pinned_release,
)

TOPOLOGY_LEVELS = (
    "cloud.google.com/gce-topology-block",
    "cloud.google.com/gce-topology-subblock",
    "cloud.google.com/gce-topology-host",
    "kubernetes.io/hostname",
)
"""Google's placement labels on GKE nodes, broadest first (Cluster Toolkit examples/gke-a3-ultragpu
kueue-configuration.yaml.tftpl)."""
POOL_LABEL = "cloud.google.com/gke-nodepool"
GPU = "nvidia.com/gpu"
AUTH_PLUGIN = "gke-gcloud-auth-plugin"
"""The credential plugin kubectl and client-go use for GKE (GKE docs: install-kubectl, "Install required plugins")."""


@dataclass(frozen=True)
class QueueArgs:
    name: str
    namespace: str
    gpu_pool: str
    """The GPU node pool's name (its nodes carry it as cloud.google.com/gke-nodepool)."""
    gpus: int
    labels: dict[str, str]
    """Kubernetes labels on every object (the workload tag among them: separation-workload-tag)."""
    queued_run_seconds: int | None = None
    """Flex-start: the nodes come through queued provisioning for at most this long (provisioning.py); None: the
    pool's nodes are there (a reservation, Spot, on-demand) and no admission check waits for them."""


def kubeconfig(cluster: gcp.container.Cluster) -> pulumi.Output[str]:
    """A kubeconfig for the cluster the stack creates: its endpoint and CA, credentials from GKE's auth plugin."""

    def document(args: list[Any]) -> str:
        name, endpoint, ca = args
        return json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {"name": name, "cluster": {"server": f"https://{endpoint}", "certificate-authority-data": ca}}
                ],
                "users": [
                    {
                        "name": name,
                        "user": {
                            "exec": {
                                "apiVersion": "client.authentication.k8s.io/v1beta1",
                                "command": AUTH_PLUGIN,
                                "provideClusterInfo": True,
                                "interactiveMode": "Never",
                            }
                        },
                    }
                ],
                "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
                "current-context": name,
            },
            sort_keys=True,
        )

    ca = cluster.master_auth.apply(lambda auth: auth.cluster_ca_certificate if auth else None)
    return pulumi.Output.all(cluster.name, cluster.endpoint, ca).apply(document)


def cluster_queue(args: QueueArgs, flavor: str) -> dict[str, Any]:
    """The queue's nominal quota: the GPU pool's GPUs, in its one flavor; jobs of the team's namespace only; on
    flex-start, admitted only once queued provisioning has their nodes."""
    check = queue_check(args.name) if args.queued_run_seconds is not None else {}
    return {
        **check,
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": args.namespace}},
        "queueingStrategy": "BestEffortFIFO",
        "resourceGroups": [
            {
                "coveredResources": [GPU],
                "flavors": [{"name": flavor, "resources": [{"name": GPU, "nominalQuota": args.gpus}]}],
            }
        ],
    }


class GkeQueues(pulumi.ComponentResource):
    """The charts and Kueue's objects, on a provider for the stack's own GKE cluster."""

    def __init__(
        self,
        name: str,
        args: QueueArgs,
        cluster: gcp.container.Cluster,
        pools: list[pulumi.Resource],
        parent: pulumi.Resource,
        pods: list[dict[str, Any]] | None = None,
    ) -> None:
        """`pods`: the pod specs the namespace will run (the training JobSet's), which set its Pod Security level."""
        super().__init__("gpuinfra:training:GkeQueues", name, None, opts(parent))
        provider = k8s.Provider(
            f"{name}-k8s", kubeconfig=kubeconfig(cluster).apply(pulumi.Output.secret), opts=opts(self, depends_on=pools)
        )
        o = pulumi.ResourceOptions(parent=self, provider=provider)
        charts = [self._chart(name, chart, o) for chart in ("kueue", "jobset")]
        after = pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=charts))
        # The strictest Pod Security level the namespace's pods meet (none given: Restricted), the default deny
        # with the training allowances (its pods, DNS, HTTPS out) as on EKS.
        enforce = pod_security.labels(pod_security.strictest_for(pods or []))
        namespace = k8s.core.v1.Namespace(
            f"{name}-ns", metadata={"name": args.namespace, "labels": {**args.labels, **enforce}}, opts=o
        )
        isolate(name, namespace.metadata["name"], args.labels, o)
        self._queues(name, args, namespace.metadata["name"], after)
        self.namespace: pulumi.Output[str] = namespace.metadata["name"]
        self.kubernetes = o
        self.register_outputs({"namespace": args.namespace})

    @staticmethod
    def _chart(name: str, chart: str, o: pulumi.ResourceOptions) -> k8s.helm.v3.Release:
        return pinned_release(name, chart, kueue_values() if chart == "kueue" else {}, o)

    @staticmethod
    def _queues(name: str, args: QueueArgs, namespace: pulumi.Input[str], o: pulumi.ResourceOptions) -> None:
        topology_name, flavor = f"{args.name}-topology", f"{args.name}-gpu"
        topology(name, topology_name, TOPOLOGY_LEVELS, args.labels, o)
        flavor_spec = {
            "nodeLabels": {POOL_LABEL: args.gpu_pool},
            "tolerations": [device_toleration(GPU)] + ([QUEUED_TAINT] if args.queued_run_seconds else []),
            "topologyName": topology_name,
        }
        resource_flavor(name, flavor, flavor_spec, args.labels, o)
        if args.queued_run_seconds is not None:
            check = create_check(name, args.name, GPU, args.queued_run_seconds, args.labels, o)
            o = pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[check]))
        queues(name, args.name, cluster_queue(args, flavor), args.name, namespace, args.labels, o)


__all__ = ["TOPOLOGY_LEVELS", "GkeQueues", "QueueArgs", "cluster_queue", "kubeconfig"]
