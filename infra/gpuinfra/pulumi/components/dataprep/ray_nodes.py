"""The Ray engine's nodes: Karpenter NodePools on the dataprep cluster, one per kind of Ray pod, each pinned to the
plan's instance type and limited to the plan's node count, so quotas and the budget count each at its maximum
(graph/launchers.py) and cost prices it there (cost/node_pools.py), as the inference NodePools are.

- `system`: on-demand, one LOGIN_TYPE node for the KubeRay operator and the Ray heads (a head holds the driver and
  the GCS: a reclaimed head fails the RayJob);
- `cpu`: the datatrove workers, spot by default (a reclaimed task reruns: datatrove's completion markers);
- `cluster`: on-demand, one node for the single MinHash cluster task (its memory: plan.cluster);
- `gpu`: on-demand, the GPU dedup stage's nodes (NeMo Curator resumes no task).

Shapes follow the CRDs of aws/karpenter-provider-aws at v1.14.1 (pkg/apis/crds/karpenter.sh_nodepools.yaml and
karpenter.k8s.aws_ec2nodeclasses.yaml), as components/inference/nodes.py's do; tests/dataprep/test_ray_stack.py
validates the objects against those CRDs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from gpuinfra.catalog import Catalog
from gpuinfra.plan.dataprep import LOGIN_TYPE, DataprepPlan
from gpuinfra.pulumi.components.inference.nodes import (
    CAPACITY_TYPE,
    CAPACITY_TYPES,
    INSTANCE_TYPE,
    REGION,
    node_class_spec,
)
from gpuinfra.spec.dataprep import DataprepSpec

Role = Literal["system", "cpu", "cluster", "gpu"]
POOL_LABEL = "gpuinfra.io/pool"
"""Set on every node a pool launches; each Ray pod selects its pool's nodes by it."""
TAINT_KEY = "gpuinfra.io/dataprep"
"""The pools' nodes are tainted so only the run's pods and the operator (which tolerate it) land there."""
GPU_RESOURCE = "nvidia.com/gpu"
CPU_ROOT_GIB = 100
"""The CPU nodes' root volume: the Ray image, the tokenizer's local working folder, Ray's spill space."""
GPU_ROOT_GIB = 200
"""The GPU nodes' root volume: NeMo Curator's image (RAPIDS inside) is larger; its shuffles spill to the instance
store (RAID0 below)."""
CONSOLIDATE_AFTER = "120s"
"""An empty node goes two minutes after its last Ray pod (Ray's autoscaler removes idle workers after 60 s by
default); busy nodes are never consolidated (WhenEmpty): moving a task restarts it."""


@dataclass(frozen=True)
class RayPool:
    """One NodePool: the Ray pods it holds, how it buys, its type and the most nodes it may launch."""

    name: str
    role: Role
    purchase: Literal["on_demand", "spot"]
    instance_type: str
    nodes: int
    vcpus: int
    accelerators: int
    memory_gib: int

    @property
    def node_class(self) -> str:
        return self.name.rsplit("-", 1)[0] + ("-gpu" if self.role == "gpu" else "-cpu")

    def limits(self) -> dict[str, str]:
        """Karpenter stops launching at these (nodepools.md, spec.limits): the plan's nodes of the pool's type."""
        out = {"cpu": str(self.nodes * self.vcpus)}
        if self.accelerators:
            out[GPU_RESOURCE] = str(self.nodes * self.accelerators)
        return out

    def taints(self) -> list[dict[str, str]]:
        """Every pool is tainted, the system one too: another workload's pods landing on its one node would leave
        the operator or a head Pending."""
        out = [{"key": TAINT_KEY, "value": "true", "effect": "NoSchedule"}]
        if self.role == "gpu":
            out.append({"key": GPU_RESOURCE, "value": "true", "effect": "NoSchedule"})
        return out

    def tolerations(self) -> list[dict[str, str]]:
        """What the pool's pods tolerate: its taints."""
        return [
            {"key": t["key"], "operator": "Equal", "value": t["value"], "effect": t["effect"]} for t in self.taints()
        ]


def ray_pools(spec: DataprepSpec, plan: DataprepPlan, catalog: Catalog) -> list[RayPool]:
    """The pools the plan needs: system and workers always, the cluster step's node when the plan has one, the GPU
    nodes when the plan has a GPU stage."""

    def pool(role: Role, purchase: Literal["on_demand", "spot"], instance_type: str, nodes: int) -> RayPool:
        info = catalog.instance(instance_type)
        assert info is not None, f"{instance_type}: the plan names a type the catalog does not list"
        accelerators = info.accelerator_count if info.accelerator else 0
        return RayPool(
            f"{spec.name}-{role}", role, purchase, instance_type, nodes, info.vcpu, accelerators, info.memory_gib
        )

    out = [
        pool("system", "on_demand", LOGIN_TYPE, 1),
        pool("cpu", "spot" if plan.spot else "on_demand", plan.instance_type, plan.nodes),
    ]
    if plan.cluster.instance_type is not None:
        out.append(pool("cluster", "on_demand", plan.cluster.instance_type, 1))
    if plan.gpu_instance_type is not None and plan.gpu_nodes:
        out.append(pool("gpu", "on_demand", plan.gpu_instance_type, plan.gpu_nodes))
    return out


def node_pool_spec(spec: DataprepSpec, pool: RayPool) -> dict[str, Any]:
    """NodePool spec (CRD fields, camelCase): the pool's one type, way of buying and the stack's region (where its
    nodes bill: cost prices them there), its taints, its limits."""
    return {
        "template": {
            "metadata": {"labels": {POOL_LABEL: pool.name, "gpuinfra.io/dataprep": spec.name}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool.node_class},
                "requirements": [
                    {"key": INSTANCE_TYPE, "operator": "In", "values": [pool.instance_type]},
                    {"key": CAPACITY_TYPE, "operator": "In", "values": [CAPACITY_TYPES[pool.purchase]]},
                    {"key": REGION, "operator": "In", "values": [spec.region]},
                ],
                "taints": pool.taints(),
            },
        },
        "limits": pool.limits(),
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": CONSOLIDATE_AFTER},
    }


def node_class_specs(spec: DataprepSpec, pools: list[RayPool], tags: dict[str, str]) -> dict[str, dict[str, Any]]:
    """EC2NodeClass specs by name: one for the CPU pools, one for the GPU pool (a larger root volume, the NVMe
    instance store as one RAID0 volume for Curator's spill: EC2NodeClass `instanceStorePolicy`)."""
    assert spec.ray is not None
    out: dict[str, dict[str, Any]] = {}
    for pool in pools:
        if pool.node_class in out:
            continue
        if pool.role == "gpu":
            out[pool.node_class] = {
                **node_class_spec(spec.ray.karpenter, GPU_ROOT_GIB, tags),
                "instanceStorePolicy": "RAID0",
            }
        else:
            out[pool.node_class] = node_class_spec(spec.ray.karpenter, CPU_ROOT_GIB, tags)
    return out


__all__ = [
    "GPU_RESOURCE",
    "POOL_LABEL",
    "TAINT_KEY",
    "RayPool",
    "node_class_specs",
    "node_pool_spec",
    "ray_pools",
]
