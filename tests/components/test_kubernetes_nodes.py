"""Node autoscaling for the Kubernetes fleet (review finding 38): per region a Karpenter EC2NodeClass and NodePools
that add GPU nodes for replicas beyond the existing ones, tainted as the pods tolerate, pinned to the plan's types,
limited to what the plan buys, on-demand weighted before spot.

SCHEMAS is the part of the CRDs the stack's objects use, read at aws/karpenter-provider-aws tag v1.14.1
(bde00654cd316fddb3dccfba3f5ac07039865429), pkg/apis/crds/karpenter.sh_nodepools.yaml and
karpenter.k8s.aws_ec2nodeclasses.yaml (both serve v1 only): the property names of each object level (closed here
as the API server prunes unknown fields), `required`, enums and patterns, copied by hand. CEL rules that matter
(exactly one of role / instanceProfile; an alias term stands alone) are asserted separately."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from gpuinfra.graph import Graph, Resource
from gpuinfra.plan.quotas import QuotaNeed
from gpuinfra.plan.serving import RegionPlan
from gpuinfra.pulumi.components.inference.nodes import pool_limits
from helpers import example_graph, graph_for

DURATION = r"^(([0-9]+(s|m|h))+|Never)$"
QUANTITY = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


def closed(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
        "required": required or [],
    } | extra


ANY: dict[str, Any] = {}
STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
NODE_POOL = closed(
    {
        "disruption": closed(
            {
                "budgets": {"type": "array"},
                "consolidateAfter": {"type": "string", "pattern": DURATION},
                "consolidationPolicy": {"enum": ["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"]},
            },
            ["consolidateAfter"],
        ),
        "limits": {"type": "object", "additionalProperties": {"type": ["integer", "string"], "pattern": QUANTITY}},
        "replicas": {"type": "integer"},
        "weight": {"type": "integer", "minimum": 1, "maximum": 100},
        "template": closed(
            {
                "metadata": closed({"annotations": STRING_MAP, "labels": STRING_MAP}),
                "spec": closed(
                    {
                        "expireAfter": {"type": "string", "pattern": DURATION},
                        "nodeClassRef": closed(
                            {"group": {"type": "string"}, "kind": {"type": "string"}, "name": {"type": "string"}},
                            ["group", "kind", "name"],
                        ),
                        "requirements": {
                            "type": "array",
                            "maxItems": 100,
                            "items": closed(
                                {
                                    "key": {"type": "string"},
                                    "minValues": {"type": "integer"},
                                    "operator": {
                                        "enum": ["Gte", "Lte", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
                                    },
                                    "values": {"type": "array", "items": {"type": "string"}},
                                },
                                ["key", "operator"],
                            ),
                        },
                        "startupTaints": {"type": "array"},
                        "taints": {
                            "type": "array",
                            "items": closed(
                                {
                                    "effect": {"enum": ["NoSchedule", "PreferNoSchedule", "NoExecute"]},
                                    "key": {"type": "string", "minLength": 1},
                                    "timeAdded": {"type": "string"},
                                    "value": {"type": "string"},
                                },
                                ["effect", "key"],
                            ),
                        },
                        "terminationGracePeriod": {"type": "string", "pattern": r"^([0-9]+(s|m|h))+$"},
                    },
                    ["nodeClassRef", "requirements"],
                ),
            }
        ),
    },
    ["template"],
)
SELECTOR_TERMS = {"type": "array", "minItems": 1, "maxItems": 30}
EC2_NODE_CLASS = closed(
    {
        name: ANY
        for name in [
            "amiFamily",
            "associatePublicIPAddress",
            "capacityReservationSelectorTerms",
            "connectionTracking",
            "context",
            "cpuOptions",
            "detailedMonitoring",
            "instanceProfile",
            "instanceStorePolicy",
            "ipPrefixCount",
            "kubelet",
            "networkInterfaces",
            "placementGroupSelector",
            "role",
            "tags",
            "userData",
        ]
    }
    | {
        "amiSelectorTerms": SELECTOR_TERMS
        | {
            "items": closed(
                {
                    "alias": {"type": "string", "maxLength": 30, "pattern": r"^[a-zA-Z0-9]+@.+$"},
                    "id": {"type": "string", "pattern": "ami-[0-9a-z]+"},
                    "name": {"type": "string"},
                    "owner": {"type": "string"},
                    "ssmParameter": {"type": "string"},
                    "tags": STRING_MAP,
                }
            )
        },
        "subnetSelectorTerms": SELECTOR_TERMS
        | {"items": closed({"id": {"type": "string", "pattern": "subnet-[0-9a-z]+"}, "tags": STRING_MAP})},
        "securityGroupSelectorTerms": SELECTOR_TERMS
        | {
            "items": closed(
                {"id": {"type": "string", "pattern": "sg-[0-9a-z]+"}, "name": {"type": "string"}, "tags": STRING_MAP}
            )
        },
        "blockDeviceMappings": {
            "type": "array",
            "maxItems": 50,
            "items": closed(
                {
                    "deviceName": {"type": "string"},
                    "rootVolume": {"type": "boolean"},
                    "ebs": closed(
                        {
                            "deleteOnTermination": {"type": "boolean"},
                            "encrypted": {"type": "boolean"},
                            "iops": {"type": "integer"},
                            "kmsKeyID": {"type": "string"},
                            "snapshotID": {"type": "string"},
                            "throughput": {"type": "integer"},
                            "volumeInitializationRate": {"type": "integer"},
                            "volumeSize": {"type": "string", "pattern": r"^([1-9][0-9]{0,3}|[1-5][0-9]{4})Gi$"},
                            "volumeType": {"enum": ["standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"]},
                        }
                    ),
                }
            ),
        },
        "metadataOptions": closed(
            {
                "httpEndpoint": {"enum": ["enabled", "disabled"]},
                "httpProtocolIPv6": {"enum": ["enabled", "disabled"]},
                "httpPutResponseHopLimit": {"type": "integer", "minimum": 1, "maximum": 64},
                "httpTokens": {"enum": ["required", "optional"]},
            }
        ),
    },
    ["amiSelectorTerms", "securityGroupSelectorTerms", "subnetSelectorTerms"],
)


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph("chat-serve-k8s")


def _errors(schema: dict[str, Any], resource: Resource | dict[str, Any]) -> list[str]:
    spec = resource.inputs["spec"] if isinstance(resource, Resource) else resource
    validator = jsonschema.Draft7Validator(schema)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(spec)]


def test_each_region_gets_a_node_class_and_an_on_demand_pool_that_fit_the_crds(graph: Graph) -> None:
    classes = graph.of_type("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    pools = graph.of_type("kubernetes:karpenter.sh/v1:NodePool")
    assert len(classes) == len(pools) == 2  # us-east-1, eu-central-1; spot_burst_share 0: no spot pool
    for resource in classes:
        assert _errors(EC2_NODE_CLASS, resource) == []
        spec = resource.inputs["spec"]
        assert ("role" in spec) != ("instanceProfile" in spec)  # CEL: exactly one of them
        assert len(spec["amiSelectorTerms"]) == 1  # CEL: an alias term stands alone
    for resource in pools:
        assert _errors(NODE_POOL, resource) == []


def test_a_misspelt_field_is_caught_by_the_schema(graph: Graph) -> None:
    pool = graph.of_type("kubernetes:karpenter.sh/v1:NodePool")[0]
    assert _errors(NODE_POOL, {**pool.inputs["spec"], "limit": {"cpu": "1"}})
    node_class = graph.of_type("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")[0].inputs["spec"]
    assert _errors(EC2_NODE_CLASS, {**node_class, "metadataOptions": {"httpTokens": "always"}})


def test_nodes_carry_the_taint_the_pods_tolerate_and_the_labels_they_select(graph: Graph) -> None:
    deployment = graph.of_type("kubernetes:apps/v1:Deployment")[0]
    pod = deployment.inputs["spec"]["template"]["spec"]
    (toleration,) = pod["tolerations"]
    for pool in graph.of_type("kubernetes:karpenter.sh/v1:NodePool"):
        template = pool.inputs["spec"]["template"]
        (taint,) = template["spec"]["taints"]
        assert taint == {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
        # Exists tolerates any value of the key, with the same effect (Kubernetes docs, taints and tolerations).
        assert toleration == {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}
        # Karpenter launches a node for a pod only if the pool's labels/requirements satisfy its nodeSelector.
        assert pod["nodeSelector"].items() <= template["metadata"]["labels"].items()


def test_pools_are_pinned_and_limited_to_the_plan(graph: Graph) -> None:
    """g6e.xlarge: 4 vCPUs, 1 L40S. Failover n_plus_one (the default) sizes each region for its peak plus the
    other's at 2 requests/s a replica: (30 + 14) / 2 = 22 replicas in both, all on demand (the example's
    spot_burst_share is 0), plus one node of surge room (a rolling update at 22 runs a 23rd pod): 92 vCPUs / 23 GPUs
    each, within the grants (org.yaml)."""
    pools = {p.name: p.inputs["spec"] for p in graph.of_type("kubernetes:karpenter.sh/v1:NodePool")}
    expected = {
        "us-east-1": {"cpu": "92", "nvidia.com/gpu": "23"},
        "eu-central-1": {"cpu": "92", "nvidia.com/gpu": "23"},
    }
    for region, limits in expected.items():
        spec = pools[f"chat-k8s-{region}-on-demand-nodes"]
        assert spec["limits"] == limits
        requirements = {r["key"]: r for r in spec["template"]["spec"]["requirements"]}
        assert requirements["node.kubernetes.io/instance-type"]["values"] == ["g6e.xlarge"]
        assert requirements["karpenter.sh/capacity-type"]["values"] == ["on-demand"]
        assert spec["weight"] == 10
        assert spec["template"]["spec"]["nodeClassRef"] == {
            "group": "karpenter.k8s.aws",
            "kind": "EC2NodeClass",
            "name": "chat-k8s-gpu",
        }
        # Busy GPU nodes are not consolidated (a move is a cold start); empty ones go after the scale-in cooldown.
        assert spec["disruption"] == {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "600s"}


def test_a_spot_share_adds_a_spot_pool_below_the_on_demand_one() -> None:
    """spot_burst_share 0.5 in us-east-1 (min 2, failover max 22): 20 replicas above the base, 10 on spot, 2 + 10 =
    12 on demand plus the surge node, 13 (52 vCPUs, 13 GPUs), and 10 spot (40, 10). Spot quotas raised so the stack
    builds."""
    graph = graph_for(
        "chat-serve-k8s",
        {"spot_burst_share": 0.5},
        org={
            "accounts.ml-inference.quotas.us-east-1.L-3819A6DF": 200,
            "accounts.ml-inference.quotas.eu-central-1.L-3819A6DF": 200,
        },
    )
    pools = {p.name: p.inputs["spec"] for p in graph.of_type("kubernetes:karpenter.sh/v1:NodePool")}
    on_demand, spot = pools["chat-k8s-us-east-1-on-demand-nodes"], pools["chat-k8s-us-east-1-spot-nodes"]
    assert on_demand["limits"] == {"cpu": "52", "nvidia.com/gpu": "13"}
    assert spot["limits"] == {"cpu": "40", "nvidia.com/gpu": "10"}
    spot_types = {r["key"]: r["values"] for r in spot["template"]["spec"]["requirements"]}
    assert spot_types["karpenter.sh/capacity-type"] == ["spot"]
    assert spot_types["node.kubernetes.io/instance-type"] == ["g6e.xlarge"]  # pinned: no larger type sneaks in
    assert "weight" not in spot  # weight 0: used once the on-demand pool is at its limit


def _region(**extra: Any) -> RegionPlan:
    base = {
        "region": "us-east-1",
        "instance_type": "g6e.xlarge",
        "accelerator": "L40S",
        "accelerators_per_instance": 1,
        "zones": [],
        "min_replicas": 2,
        "max_replicas": 16,
        "demand_replicas": 16,
        "planned_replicas": 16,
        "on_demand_base": 2,
        "on_demand_pct_above_base": 100,
        "max_on_demand": 16,
        "max_spot": 0,
        "warm_pool": 0,
        "cold_start_seconds": 200.0,
    }
    return RegionPlan.model_validate(base | extra)


def _need(granted: int | None, held: int) -> QuotaNeed:
    return QuotaNeed.model_validate(
        {
            "account": "ml-inference",
            "account_id": "222222222222",
            "region": "us-east-1",
            "code": "L-DB2E81BA",
            "name": "Running On-Demand G and VT instances",
            "purchase": "on_demand",
            "vcpus": 64 + held,
            "granted": granted,
            "held": [["chat-serve", held]] if held else [],
        }
    )


def test_the_limit_never_exceeds_what_the_grant_leaves() -> None:
    """16 nodes of 4 vCPUs want 64; a grant of 120 with 72 held by another stack leaves 48: 12 nodes, 12 GPUs."""
    assert pool_limits(_region(), "on_demand", 16, 4, [_need(120, 72)]).__dict__ == {"cpu": 48, "accelerators": 12}
    # An unknown grant limits nothing beyond the plan; a grant with room leaves the plan's own need.
    assert pool_limits(_region(), "on_demand", 16, 4, [_need(None, 72)]).__dict__ == {"cpu": 64, "accelerators": 16}
    assert pool_limits(_region(), "on_demand", 16, 4, [_need(500, 72)]).__dict__ == {"cpu": 64, "accelerators": 16}
