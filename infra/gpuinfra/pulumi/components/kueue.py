"""Kueue's objects as every stack that queues GPU jobs creates them (kueue.x-k8s.io/v1beta2 at the chart pinned in
catalog/pins.py; preflight holds them to that release's CRDs): a Topology of node labels, a ResourceFlavor, the
ClusterQueue holding the quota and a namespace's LocalQueue submitting to it. Each cloud's training cluster and
fine-tuning on an existing cluster give only their names, specs and options."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

KUEUE_API = "kueue.x-k8s.io/v1beta2"
"""Kueue 0.19 serves v1beta2 as the storage version of every CRD (v1beta1 is deprecated)."""


def topology(
    name: str, topology_name: str, levels: Sequence[str], labels: dict[str, str], opts: pulumi.ResourceOptions
) -> k8s.apiextensions.CustomResource:
    """A Topology whose levels are node labels, widest first (Topology spec.levels[].nodeLabel)."""
    return k8s.apiextensions.CustomResource(
        f"{name}-topology",
        api_version=KUEUE_API,
        kind="Topology",
        metadata={"name": topology_name, "labels": labels},
        spec={"levels": [{"nodeLabel": level} for level in levels]},
        opts=opts,
    )


def resource_flavor(
    name: str, flavor_name: str, spec: dict[str, Any], labels: dict[str, str], opts: pulumi.ResourceOptions
) -> k8s.apiextensions.CustomResource:
    """A ResourceFlavor: the nodes (labels, tolerations, topology) a ClusterQueue's quota is of."""
    return k8s.apiextensions.CustomResource(
        f"{name}-flavor",
        api_version=KUEUE_API,
        kind="ResourceFlavor",
        metadata={"name": flavor_name, "labels": labels},
        spec=spec,
        opts=opts,
    )


def local_queue(
    name: str,
    queue: str,
    namespace: pulumi.Input[str],
    cluster_queue: str,
    labels: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> k8s.apiextensions.CustomResource:
    """The namespace's LocalQueue `queue` (what a job's kueue.x-k8s.io/queue-name label names), submitting to the
    ClusterQueue `cluster_queue` (LocalQueue spec.clusterQueue)."""
    return k8s.apiextensions.CustomResource(
        f"{name}-local-queue",
        api_version=KUEUE_API,
        kind="LocalQueue",
        metadata={"name": queue, "namespace": namespace, "labels": labels},
        spec={"clusterQueue": cluster_queue},
        opts=opts,
    )


def queues(
    name: str,
    cluster_queue: str,
    cluster_queue_spec: dict[str, Any],
    queue: str,
    namespace: pulumi.Input[str],
    labels: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> None:
    """The ClusterQueue holding the quota, then the namespace's LocalQueue `queue` submitting to it."""
    k8s.apiextensions.CustomResource(
        f"{name}-cluster-queue",
        api_version=KUEUE_API,
        kind="ClusterQueue",
        metadata={"name": cluster_queue, "labels": labels},
        spec=cluster_queue_spec,
        opts=opts,
    )
    local_queue(name, queue, namespace, cluster_queue, labels, opts)


__all__ = ["KUEUE_API", "local_queue", "queues", "resource_flavor", "topology"]
