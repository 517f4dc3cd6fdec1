"""GPU nodes for a Kubernetes fleet: a Karpenter EC2NodeClass and NodePools per region, so replicas the autoscaler
adds beyond the existing GPU nodes get a node instead of staying Pending.

Shapes follow the CRDs of aws/karpenter-provider-aws at v1.14.1 (bde00654cd316fddb3dccfba3f5ac07039865429,
pkg/apis/crds/karpenter.sh_nodepools.yaml and karpenter.k8s.aws_ec2nodeclasses.yaml; both served as v1 only):
NodePool `spec.template.spec` requires nodeClassRef {group, kind, name} and requirements; `limits` is a map of
resource quantities; `disruption` requires consolidateAfter; EC2NodeClass requires amiSelectorTerms,
subnetSelectorTerms, securityGroupSelectorTerms and exactly one of role / instanceProfile. tests/components/
test_kubernetes_nodes.py checks the generated objects against those fields.

One NodePool per way of buying (on-demand, and spot when the spec allows a spot share), each pinned to the instance
types the plan pins for it (the on-demand type; the spot types the spec allows) and limited to what the plan buys
that way: the plan's nodes times the type's vCPUs and accelerators, and never more vCPUs than the quota grant
leaves (a quota is the account's: the grant less what the account's other stacks hold). The on-demand pool weighs
more, so Karpenter fills it to its limit before it buys spot: the spec's on-demand base, then the spot burst
(Karpenter docs, concepts/nodepools.md "spec.weight": the highest weight among matching NodePools is used)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuinfra.catalog import Catalog
from gpuinfra.clouds import type_part
from gpuinfra.graph import tokens
from gpuinfra.plan.quotas import QuotaNeed
from gpuinfra.plan.rollout import KUBERNETES_SURGE
from gpuinfra.plan.serving import RegionPlan
from gpuinfra.spec import InferenceSpec
from gpuinfra.spec.org import KarpenterOnCluster

NODE_POOL_API = "karpenter.sh/v1"
NODE_CLASS_API = "karpenter.k8s.aws/v1"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
DISCOVERY_TAG = "karpenter.sh/discovery"
REGION = "topology.kubernetes.io/region"
ON_DEMAND_WEIGHT = 10
CAPACITY_TYPES = {"on_demand": "on-demand", "spot": "spot"}
"""The plan's ways of buying, as Karpenter's capacity-type values (nodepools.md: spot, on-demand, reserved)."""


def ami_alias() -> str:
    """The EKS-optimized AL2023 release the catalog pins, as a Karpenter alias (nodeclasses.md: `al2023@v20240703`
    pins the AMI by its release tag; with an alias Karpenter picks the accelerated variant for GPU types). The
    catalog's node releases (`1.33.13-20260714`) share one AMI release date across Kubernetes minors."""
    releases = type_part(tokens.EKS_CLUSTER, "eks_versions")().node_releases.releases
    dates = {release.rsplit("-", 1)[1] for release in releases.values()}
    assert len(dates) == 1, f"the catalog's EKS node releases span several AMI releases: {sorted(dates)}"
    return f"al2023@v{dates.pop()}"


@dataclass(frozen=True)
class PoolLimits:
    """What one NodePool may launch in total (node capacity, as Karpenter counts it)."""

    cpu: int
    accelerators: int


def pool_limits(rp: RegionPlan, purchase: str, nodes: int, vcpus: int, quotas: list[QuotaNeed]) -> PoolLimits:
    """The plan's `nodes` of this purchase at `vcpus` each (the largest type the pool may launch), within the vCPUs
    the quota grant leaves for them (unknown grant: the plan's own need)."""
    cpu = nodes * vcpus
    for need in quotas:
        if need.region == rp.region and need.purchase == purchase and need.granted is not None:
            room = need.granted - (need.vcpus - need.own)
            cpu = max(0, min(cpu, room))
    return PoolLimits(cpu, min(nodes, cpu // vcpus) * max(1, rp.accelerators_per_instance))


def node_class_name(spec: InferenceSpec) -> str:
    return f"{spec.name}-gpu"


def node_class_spec(karpenter: KarpenterOnCluster, root_gib: int, tags: dict[str, str]) -> dict[str, Any]:
    """EC2NodeClass spec (CRD fields, camelCase: passed through untranslated). The root volume holds the OS, the
    server image and the pod's emptyDirs (weights, caches), which kubelet counts as ephemeral storage; IMDSv2 with a
    hop limit of 1, so containers cannot reach the node role (the CRD's default, stated)."""
    selector = [{"tags": {DISCOVERY_TAG: karpenter.discovery_tag}}]
    return {
        "role": karpenter.node_role,
        "amiSelectorTerms": [{"alias": ami_alias()}],
        "subnetSelectorTerms": selector,
        "securityGroupSelectorTerms": selector,
        "blockDeviceMappings": [
            {
                "deviceName": "/dev/xvda",
                "rootVolume": True,
                "ebs": {
                    "volumeSize": f"{root_gib}Gi",
                    "volumeType": "gp3",
                    "encrypted": True,
                    "deleteOnTermination": True,
                },
            }
        ],
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpTokens": "required",
            "httpPutResponseHopLimit": 1,
            "httpProtocolIPv6": "disabled",
        },
        "tags": tags,
    }


def node_pool_spec(
    spec: InferenceSpec,
    purchase: str,
    instance_types: list[str],
    limits: PoolLimits,
    taint: dict[str, str],
    resource: str,
    node_labels: dict[str, str],
    region: str | None = None,
) -> dict[str, Any]:
    """NodePool spec for one way of buying. `taint`: the accelerator toleration the pods carry, as the nodes' taint;
    `node_labels`: the pods' node selector, set on the nodes at launch so Karpenter knows the nodes it makes satisfy
    it (a selector on a label no NodePool sets leaves the pod unschedulable to Karpenter; GPU feature discovery later
    sets the same value). Empty nodes go after the scale-in cooldown; busy ones are not consolidated (a replica's
    move costs a cold start). `region`: the cluster's, as a requirement on the well-known label
    topology.kubernetes.io/region (kubernetes-sigs/karpenter pkg/apis/v1/labels.go, WellKnownLabels): every node
    of the cluster satisfies it, and it says where the pool's nodes bill (cost prices them there)."""
    labels = {k: v for k, v in node_labels.items() if k != INSTANCE_TYPE}
    return {
        **({"weight": ON_DEMAND_WEIGHT} if purchase == "on_demand" else {}),
        "template": {
            "metadata": {"labels": {**labels, "gpuinfra.io/fleet": spec.name}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": node_class_name(spec)},
                "requirements": [
                    {"key": INSTANCE_TYPE, "operator": "In", "values": instance_types},
                    {"key": CAPACITY_TYPE, "operator": "In", "values": [CAPACITY_TYPES[purchase]]},
                    *([{"key": REGION, "operator": "In", "values": [region]}] if region else []),
                ],
                "taints": [{"key": taint["key"], "value": "true", "effect": taint["effect"]}],
            },
        },
        "limits": {"cpu": str(limits.cpu), resource: str(limits.accelerators)},
        "disruption": {
            "consolidationPolicy": "WhenEmpty",
            "consolidateAfter": f"{spec.autoscaling.scale_in_cooldown_seconds}s",
        },
    }


@dataclass(frozen=True)
class NodePoolPlan:
    """One NodePool to create: its name, the types it may launch and its limits."""

    name: str
    purchase: str
    instance_types: list[str]
    limits: PoolLimits
    region: str | None = None


def node_pools(spec: InferenceSpec, rp: RegionPlan, catalog: Catalog, quotas: list[QuotaNeed]) -> list[NodePoolPlan]:
    """On-demand for the plan's on-demand nodes; spot for its spot nodes, when the spec allows any."""
    assert rp.instance_type is not None
    out = [
        NodePoolPlan(
            f"{spec.name}-on-demand",
            "on_demand",
            [rp.instance_type],
            # Surge room: a rolling update at max_replicas adds KUBERNETES_SURGE pods, each on a node of its own.
            pool_limits(
                rp,
                "on_demand",
                rp.max_on_demand + KUBERNETES_SURGE,
                _largest_vcpus(catalog, [rp.instance_type]),
                quotas,
            ),
            rp.region,
        )
    ]
    if rp.max_spot > 0:
        types = rp.spot_types or [rp.instance_type]
        limits = pool_limits(rp, "spot", rp.max_spot, _largest_vcpus(catalog, types), quotas)
        out.append(NodePoolPlan(f"{spec.name}-spot", "spot", types, limits, rp.region))
    return out


def _largest_vcpus(catalog: Catalog, types: list[str]) -> int:
    sizes = [info.vcpu for info in (catalog.instance(t) for t in types) if info is not None]
    assert sizes, f"{types}: not in the catalog"
    return max(sizes)


__all__ = [
    "CAPACITY_TYPE",
    "NODE_CLASS_API",
    "NODE_POOL_API",
    "NodePoolPlan",
    "PoolLimits",
    "ami_alias",
    "node_class_name",
    "node_class_spec",
    "node_pool_spec",
    "node_pools",
    "pool_limits",
]
