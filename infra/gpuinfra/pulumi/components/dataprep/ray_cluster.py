"""What the Ray engine's runs need on the dataprep cluster, owned by the stack: the run's namespace, the Ray pods'
service account bound to their IAM role (IRSA), the ConfigMap holding the rendered programs, Karpenter's node
classes and NodePools (ray_nodes.py), and the KubeRay operator, a Helm release of the kuberay-operator chart at
1.7.0 that waits for its NodePool (helm/v3 Release: "the provider waits until all resources are in a ready state",
and the operator's pod can only start on a node that pool launches). The RayJobs themselves are exported for a
runner (rayjob.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpuinfra.graph import pod_security
from gpuinfra.graph.tokens import WORKLOAD_LABEL
from gpuinfra.plan import DataprepPlan
from gpuinfra.pulumi.components.dataprep.ray_nodes import RayPool, node_class_specs, node_pool_spec
from gpuinfra.pulumi.components.dataprep.rayjob import (
    CURATOR,
    OPERATOR_CHART,
    OPERATOR_REPO,
    OPERATOR_VERSION,
    PIPELINE,
    config_map_name,
    operator_values,
    ray_jobs,
)
from gpuinfra.pulumi.components.inference.nodes import NODE_CLASS_API, NODE_POOL_API
from gpuinfra.pulumi.components.training.kubernetes import isolate
from gpuinfra.spec import DataprepSpec

RELEASE_TIMEOUT_SECONDS = 900
"""Helm's default is 300 s; the operator's first node is launched by Karpenter and pulls the image."""


@dataclass(frozen=True)
class RayClusterArgs:
    spec: DataprepSpec
    plan: DataprepPlan
    pools: list[RayPool]
    programs: dict[str, str]
    """File name -> text, mounted from the ConfigMap (pipeline.py, and curator_dedup.py with a GPU stage)."""
    role_arn: pulumi.Input[str]
    tags: dict[str, str]


class DataprepRayCluster(pulumi.ComponentResource):
    """The run's namespace and identity, its NodePools and the KubeRay operator on the registered cluster."""

    def __init__(self, name: str, args: RayClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpuinfra:dataprep:RayCluster", name, None, opts)
        spec = args.spec
        assert spec.ray is not None
        namespace_, _, short = spec.ray.kubeconfig_key.rpartition(":")
        provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=pulumi.Config(namespace_ or None).require_secret(short),
            enable_server_side_apply=True,
            opts=pulumi.ResourceOptions(parent=self),
        )
        o = pulumi.ResourceOptions(parent=self, provider=provider)
        labels = {"gpuinfra/stack": spec.name, WORKLOAD_LABEL: "dataprep"}
        jobs = ray_jobs(spec, args.plan, args.pools)
        enforce = pod_security.strictest_for(pods_of(jobs))
        namespace = k8s.core.v1.Namespace(
            f"{name}-ns",
            metadata={"name": spec.ray.namespace, "labels": {**labels, **pod_security.labels(enforce)}},
            opts=o,
        )
        in_ns = pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[namespace]))
        # Deny all, then the pods of the namespace to each other (Ray's ports, the operator to the heads), DNS and
        # HTTPS out (S3, STS for IRSA, the API server the operator watches): training's isolation.
        isolate(name, spec.ray.namespace, labels, in_ns)
        self._identity(name, args, labels, in_ns)
        system = self._nodes(name, args, labels, o)
        k8s.helm.v3.Release(
            f"{name}-kuberay-operator",
            name=OPERATOR_CHART,
            chart=OPERATOR_CHART,
            version=OPERATOR_VERSION,
            namespace=spec.ray.namespace,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=OPERATOR_REPO),
            values=operator_values(spec.ray.namespace, next(p for p in args.pools if p.role == "system")),
            timeout=RELEASE_TIMEOUT_SECONDS,
            opts=pulumi.ResourceOptions.merge(in_ns, pulumi.ResourceOptions(depends_on=[namespace, system])),
        )
        pulumi.export("rayjobs", json.dumps(jobs, sort_keys=True))
        self.register_outputs({})

    @staticmethod
    def _identity(name: str, args: RayClusterArgs, labels: dict[str, str], o: pulumi.ResourceOptions) -> None:
        """The Ray pods' service account (the role's trust names it) and the programs they run."""
        spec = args.spec
        assert spec.ray is not None
        k8s.core.v1.ServiceAccount(
            f"{name}-sa",
            metadata={
                "name": spec.name,
                "namespace": spec.ray.namespace,
                "labels": labels,
                "annotations": {"eks.amazonaws.com/role-arn": args.role_arn},
            },
            opts=o,
        )
        k8s.core.v1.ConfigMap(
            f"{name}-pipeline",
            metadata={"name": config_map_name(spec), "namespace": spec.ray.namespace, "labels": labels},
            data=dict(args.programs),
            opts=o,
        )

    @staticmethod
    def _nodes(name: str, args: RayClusterArgs, labels: dict[str, str], o: pulumi.ResourceOptions) -> pulumi.Resource:
        """Node classes, then the pools (cluster-scoped objects, named after the stack); the system pool returned:
        the operator waits for it."""
        classes = [
            k8s.apiextensions.CustomResource(
                f"{name}-{class_name.removeprefix(args.spec.name + '-')}-node-class",
                api_version=NODE_CLASS_API,
                kind="EC2NodeClass",
                metadata={"name": class_name, "labels": labels},
                spec=body,
                opts=o,
            )
            for class_name, body in node_class_specs(args.spec, args.pools, args.tags).items()
        ]
        after = pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=classes))
        made = {
            pool.role: k8s.apiextensions.CustomResource(
                f"{name}-{pool.role}-nodes",
                api_version=NODE_POOL_API,
                kind="NodePool",
                metadata={"name": pool.name, "labels": labels},
                spec=node_pool_spec(args.spec, pool),
                opts=after,
            )
            for pool in args.pools
        }
        return made["system"]


def pods_of(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every pod spec the RayJobs run in the namespace (heads and worker groups)."""
    out = []
    for job in jobs:
        cluster = job["spec"]["rayClusterSpec"]
        out.append(cluster["headGroupSpec"]["template"]["spec"])
        out += [group["template"]["spec"] for group in cluster["workerGroupSpecs"]]
    return out


def programs(pipeline: str, curator: str | None) -> dict[str, str]:
    return {PIPELINE: pipeline, **({CURATOR: curator} if curator is not None else {})}


__all__ = ["DataprepRayCluster", "RayClusterArgs", "programs"]
