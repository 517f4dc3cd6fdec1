"""What a Kubernetes training cluster needs on top of its nodes: device plugins, Kueue (flavors, a
ClusterQueue holding the cluster's GPUs, the team's LocalQueue; on premises a rack/host Topology),
the Lustre volume, rack labels on named nodes, and a JobSet template that requests GPUs and the fabric.

Shared by EKS (AWS) and on-premises clusters; everything goes through the explicit provider given.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from infra.plan.racks import NodePlacement
from infra.pulumi.templates import render

TYPE = "gpuinfra:training:Kubernetes"
KUEUE_API = "kueue.x-k8s.io/v1beta1"
KUEUE_TOPOLOGY_API = "kueue.x-k8s.io/v1alpha1"
GPU = "nvidia.com/gpu"
EFA = "vpc.amazonaws.com/efa"
RDMA = "rdma/ib"
RACK_LABEL = "gpuinfra.io/rack"
COOLING_LABEL = "gpuinfra.io/cooling-loop"
POWER_LABEL = "gpuinfra.io/power-domain"
SITE_LABEL = "gpuinfra.io/site"
HOST_LABEL = "kubernetes.io/hostname"
TRAINER_IMAGE = "nvcr.io/nvidia/pytorch:25.01-py3"

# Add-on charts, pinned: bump deliberately (a chart upgrade restarts its pods). Versions as each chart
# repository spells them: eks-charts publishes "v"-prefixed chart versions (terraform-aws-eks-blueprints pins
# aws-efa-k8s-device-plugin that way); the others are bare semver.
CHARTS = {
    "kueue": ("oci://registry.k8s.io/kueue/charts/kueue", None, "0.13.4", "kueue-system"),
    "jobset": ("oci://registry.k8s.io/jobset/charts/jobset", None, "0.10.1", "jobset-system"),
    "nvidia-device-plugin": (
        "nvidia-device-plugin",
        "https://nvidia.github.io/k8s-device-plugin",
        "0.17.4",
        "kube-system",
    ),
    "aws-efa-k8s-device-plugin": (
        "aws-efa-k8s-device-plugin",
        "https://aws.github.io/eks-charts",
        "v0.5.7",
        "kube-system",
    ),
    "aws-fsx-csi-driver": (
        "aws-fsx-csi-driver",
        "https://kubernetes-sigs.github.io/aws-fsx-csi-driver",
        "1.11.0",
        "kube-system",
    ),
}


@dataclass(frozen=True)
class Flavor:
    """A Kueue ResourceFlavor: which nodes it means and the GPUs (and fabric devices) it contributes."""

    name: str
    node_labels: dict[str, str]
    gpus: int
    fabric_devices: int = 0
    topology: str | None = None


@dataclass(frozen=True)
class LustreVolume:
    capacity_gib: int
    mount_path: str
    csi: Mapping[str, Any] | None = None
    """FSx: {"driver", "volumeHandle", "volumeAttributes"}; values may be Outputs."""
    host_path: str | None = None
    """On premises: where every node mounts the site's file system."""
    annotations: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkloadArgs:
    cluster: str
    namespace: str
    queue: str
    platform: str
    """eks or onprem."""
    fabric: str
    """efa, infiniband or none."""
    nodes: int
    gpus_per_node: int
    fabric_per_node: int
    flavors: Sequence[Flavor]
    lustre: LustreVolume | None
    env: dict[str, str]
    labels: dict[str, str]
    placements: Sequence[NodePlacement] = ()
    site: str | None = None
    topology: str | None = None


def fabric_resource(fabric: str) -> str | None:
    return {"efa": EFA, "infiniband": RDMA}.get(fabric)


def cluster_queue_spec(args: WorkloadArgs) -> dict[str, Any]:
    """Nominal quota = the GPUs (and fabric devices) each flavor's nodes have: the whole cluster."""
    fabric = fabric_resource(args.fabric)
    covered = [GPU, *([fabric] if fabric else [])]
    return {
        "namespaceSelector": {},
        "queueingStrategy": "BestEffortFIFO",
        "resourceGroups": [
            {
                "coveredResources": covered,
                "flavors": [
                    {
                        "name": f.name,
                        "resources": [
                            {"name": GPU, "nominalQuota": f.gpus},
                            *([{"name": fabric, "nominalQuota": f.fabric_devices}] if fabric else []),
                        ],
                    }
                    for f in args.flavors
                ],
            }
        ],
    }


def node_labels(placement: NodePlacement, site: str | None) -> dict[str, str]:
    labels = {
        RACK_LABEL: f"rack-{placement.rack:02d}",
        COOLING_LABEL: f"loop-{placement.cooling_loop:02d}",
        POWER_LABEL: f"pd-{placement.power_domain:02d}",
    }
    if site:
        labels[SITE_LABEL] = site
    return labels


def job_template(args: WorkloadArgs, claim: str) -> str:
    devices = {GPU: args.gpus_per_node}
    fabric = fabric_resource(args.fabric)
    if fabric:
        devices[fabric] = args.fabric_per_node
    return render(
        "kubernetes/jobset.yaml.j2",
        cluster=args.cluster,
        namespace=args.namespace,
        queue=args.queue,
        nodes=args.nodes,
        gpus_per_node=args.gpus_per_node,
        devices=devices,
        env=args.env,
        image=TRAINER_IMAGE,
        mount_path=args.lustre.mount_path if args.lustre else "/fsx",
        claim=claim,
        topology_level=RACK_LABEL if args.topology else None,
        ipc_lock=args.fabric == "infiniband",
        max_restarts=3,
    )


def rdma_config(resource: str = RDMA) -> str:
    """k8s-rdma-shared-dev-plugin config: one shared resource over the InfiniBand HCAs."""
    return json.dumps(
        {
            "periodicUpdateInterval": 300,
            "configList": [
                {
                    "resourceName": resource.split("/", 1)[1],
                    "resourcePrefix": resource.split("/", 1)[0],
                    "rdmaHcaMax": 64,
                    "selectors": {"linkTypes": ["infiniband"]},
                }
            ],
        },
        sort_keys=True,
    )


class TrainingWorkloads(pulumi.ComponentResource):
    def __init__(
        self, name: str, args: WorkloadArgs, provider: k8s.Provider, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        o = pulumi.ResourceOptions(parent=self, provider=provider)
        namespace = k8s.core.v1.Namespace(
            f"{name}-ns", metadata={"name": args.namespace, "labels": args.labels}, opts=o
        )
        charts = self._addons(name, args, o)
        crds = pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=charts))
        if args.topology:
            k8s.apiextensions.CustomResource(
                f"{name}-topology",
                api_version=KUEUE_TOPOLOGY_API,
                kind="Topology",
                metadata={"name": args.topology, "labels": args.labels},
                spec={"levels": [{"nodeLabel": RACK_LABEL}, {"nodeLabel": HOST_LABEL}]},
                opts=crds,
            )
        for flavor in args.flavors:
            spec: dict[str, Any] = {
                "nodeLabels": flavor.node_labels,
                "tolerations": [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}],
            }
            if flavor.topology:
                spec["topologyName"] = flavor.topology
            k8s.apiextensions.CustomResource(
                f"{name}-flavor-{flavor.name}",
                api_version=KUEUE_API,
                kind="ResourceFlavor",
                metadata={"name": flavor.name, "labels": args.labels},
                spec=spec,
                opts=crds,
            )
        k8s.apiextensions.CustomResource(
            f"{name}-cluster-queue",
            api_version=KUEUE_API,
            kind="ClusterQueue",
            metadata={"name": args.cluster, "labels": args.labels},
            spec=cluster_queue_spec(args),
            opts=crds,
        )
        k8s.apiextensions.CustomResource(
            f"{name}-local-queue",
            api_version=KUEUE_API,
            kind="LocalQueue",
            metadata={"name": args.queue, "namespace": namespace.metadata["name"], "labels": args.labels},
            spec={"clusterQueue": args.cluster},
            opts=crds,
        )
        for placement in args.placements:
            k8s.core.v1.NodePatch(
                f"{name}-node-{placement.node}",
                metadata={"name": placement.node, "labels": node_labels(placement, args.site)},
                opts=o,
            )
        claim = f"{args.cluster}-lustre"
        if args.lustre is not None:
            self._lustre(name, args, args.lustre, claim, namespace, o)
        k8s.core.v1.ConfigMap(
            f"{name}-job-template",
            metadata={
                "name": f"{args.cluster}-job-template",
                "namespace": namespace.metadata["name"],
                "labels": args.labels,
            },
            data={"jobset.yaml": job_template(args, claim)},
            opts=o,
        )
        self.register_outputs({"namespace": args.namespace, "cluster_queue": args.cluster})

    @staticmethod
    def _addons(name: str, args: WorkloadArgs, o: pulumi.ResourceOptions) -> list[pulumi.Resource]:
        wanted = ["kueue", "jobset"]
        if args.platform == "eks":
            wanted.append("nvidia-device-plugin")
            if args.fabric == "efa":
                wanted.append("aws-efa-k8s-device-plugin")
            if args.lustre is not None:
                wanted.append("aws-fsx-csi-driver")
        values: dict[str, dict[str, Any]] = {
            "nvidia-device-plugin": {"tolerations": [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}]},
            "aws-efa-k8s-device-plugin": {"tolerations": [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}]},
            "kueue": {
                "managerConfig": {
                    "controllerManagerConfigYaml": "integrations:\n  frameworks:\n  - jobset.x-k8s.io/jobset\n"
                }
            },
        }
        releases: list[pulumi.Resource] = []
        for chart in wanted:
            source, repo, version, namespace = CHARTS[chart]
            releases.append(
                k8s.helm.v3.Release(
                    f"{name}-{chart}",
                    name=chart,
                    chart=source,
                    version=version,
                    namespace=namespace,
                    create_namespace=True,
                    repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=repo) if repo else None,
                    values=values.get(chart, {}),
                    opts=o,
                )
            )
        if args.fabric == "infiniband":
            config = k8s.core.v1.ConfigMap(
                f"{name}-rdma-config",
                metadata={"name": "rdma-devices", "namespace": "kube-system", "labels": args.labels},
                data={"config.json": rdma_config()},
                opts=o,
            )
            releases.append(
                k8s.apps.v1.DaemonSet(
                    f"{name}-rdma-device-plugin",
                    metadata={"name": "rdma-shared-dp", "namespace": "kube-system", "labels": args.labels},
                    spec={
                        "selector": {"match_labels": {"name": "rdma-shared-dp"}},
                        "template": {
                            "metadata": {"labels": {"name": "rdma-shared-dp"}},
                            "spec": {
                                "host_network": True,
                                "priority_class_name": "system-node-critical",
                                "tolerations": [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}],
                                "containers": [
                                    {
                                        "name": "rdma-shared-dp",
                                        "image": "ghcr.io/mellanox/k8s-rdma-shared-dev-plugin:v1.5.2",
                                        "security_context": {"privileged": True},
                                        "volume_mounts": [
                                            {"name": "plugins", "mount_path": "/var/lib/kubelet/device-plugins"},
                                            {"name": "config", "mount_path": "/k8s-rdma-shared-dev-plugin"},
                                            {"name": "devs", "mount_path": "/dev/"},
                                        ],
                                    }
                                ],
                                "volumes": [
                                    {"name": "plugins", "host_path": {"path": "/var/lib/kubelet/device-plugins"}},
                                    {
                                        "name": "config",
                                        "config_map": {
                                            "name": config.metadata["name"],
                                            "items": [{"key": "config.json", "path": "config.json"}],
                                        },
                                    },
                                    {"name": "devs", "host_path": {"path": "/dev/"}},
                                ],
                            },
                        },
                    },
                    opts=o,
                )
            )
        return releases

    @staticmethod
    def _lustre(
        name: str,
        args: WorkloadArgs,
        lustre: LustreVolume,
        claim: str,
        namespace: k8s.core.v1.Namespace,
        o: pulumi.ResourceOptions,
    ) -> None:
        source: dict[str, Any] = (
            {"csi": dict(lustre.csi)} if lustre.csi else {"host_path": {"path": lustre.host_path, "type": "Directory"}}
        )
        metadata: dict[str, Any] = {"name": claim, "labels": args.labels, "annotations": lustre.annotations}
        volume = k8s.core.v1.PersistentVolume(
            f"{name}-lustre-pv",
            metadata=metadata,
            spec={
                "capacity": {"storage": f"{lustre.capacity_gib}Gi"},
                "access_modes": ["ReadWriteMany"],
                "persistent_volume_reclaim_policy": "Retain",
                "storage_class_name": "",
                "mount_options": ["flock"] if lustre.csi else [],
                **source,
            },
            opts=o,
        )
        k8s.core.v1.PersistentVolumeClaim(
            f"{name}-lustre-pvc",
            metadata={"name": claim, "namespace": namespace.metadata["name"], "labels": args.labels},
            spec={
                "access_modes": ["ReadWriteMany"],
                "storage_class_name": "",
                "volume_name": volume.metadata["name"],
                "resources": {"requests": {"storage": f"{lustre.capacity_gib}Gi"}},
            },
            opts=o,
        )


__all__ = [
    "CHARTS",
    "EFA",
    "GPU",
    "RACK_LABEL",
    "RDMA",
    "TYPE",
    "Flavor",
    "LustreVolume",
    "TrainingWorkloads",
    "WorkloadArgs",
    "cluster_queue_spec",
    "fabric_resource",
    "job_template",
    "node_labels",
    "rdma_config",
]
