"""EKS GPU nodes as EKS and nodeadm would read them: the launch template's user data parsed the way nodeadm parses
it (MIME multi-part, parts of media type application/node.eks.aws) and checked against nodeadm's NodeConfig
schema; every node group pinned to the AMI release the amazon-eks-ami release notes give for the version; node
auto repair and the node monitoring agent (field names from the botocore EKS model and the agent's add-on
configuration schema); and the control plane's upgrade policy set explicitly.

Expected values are written here from the cited upstream text, not read from the code under test."""

from __future__ import annotations

import base64
import email
import gzip
import json
from typing import Any

import botocore.session
import jsonschema
import pytest
import yaml
from gpuinfra.graph import Graph
from helpers import example_graph

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
ADDON = "aws:eks/addon:Addon"

# awslabs/amazon-eks-ami at 81fec2e8 (2026-07-23), nodeadm/crds/node.eks.aws_nodeconfigs.yaml: the schema of
# NodeConfig.spec.instance.localStorage (the only part the stacks set), with the API server's pruning made strict;
# apiVersion node.eks.aws/v1alpha1 (nodeadm/api/v1alpha1/groupversion_info.go, +groupName=node.eks.aws).
NODECONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["apiVersion", "kind", "spec"],
    "properties": {
        "apiVersion": {"const": "node.eks.aws/v1alpha1"},
        "kind": {"const": "NodeConfig"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "instance": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "localStorage": {
                            "type": "object",
                            "additionalProperties": False,
                            "properties": {
                                "strategy": {"type": "string", "enum": ["RAID0", "RAID10", "Mount"]},
                                "mountPath": {"type": "string"},
                                "disabledMounts": {
                                    "type": "array",
                                    "items": {"type": "string", "enum": ["Containerd", "PodLogs", "SOCI"]},
                                },
                            },
                        },
                        "environment": {"type": "object"},
                        "network": {"type": "object"},
                    },
                },
                "cluster": {"type": "object"},
                "containerd": {"type": "object"},
                # KubeletOptions: config (a KubeletConfiguration merged with nodeadm's; values are any JSON, e.g.
                # shutdownGracePeriod: 30s in nodeadm/doc/examples.md) and flags.
                "kubelet": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "config": {"type": "object"},
                        "flags": {"type": "array", "items": {"type": "string"}},
                    },
                },
                "featureGates": {"type": "object"},
            },
        },
    },
}
# amazon-eks-ami CHANGELOG.md, "AMI Release v20260714", Kubernetes 1.33: amazon-eks-node-al2023-x86_64-nvidia-1.33-
# v20260714 (and -standard-) have release version 1.33.13-20260714. The example stack pins Kubernetes 1.33.
RELEASE_1_33 = "1.33.13-20260714"


@pytest.fixture(scope="module")
def eks() -> Graph:
    return example_graph("llm-train-eks")


@pytest.fixture(scope="module")
def eks_model() -> Any:
    return botocore.session.get_session().get_service_model("eks")


def nodeadm_configs(user_data_b64: str) -> list[dict[str, Any]]:
    """What nodeadm reads from user data (nodeadm/internal/configprovider/mime.go ParseMultipart): every part of
    media type application/node.eks.aws, base64- or gzip-decoded if so, as YAML."""
    message = email.message_from_bytes(base64.b64decode(user_data_b64))
    assert message.get_content_type().startswith("multipart/"), "managed node groups merge MIME multi-part only"
    found = []
    for part in message.walk():
        if part.get_content_type() != "application/node.eks.aws":
            continue
        body = part.get_payload(decode=True)
        if body[:2] == b"\x1f\x8b":
            body = gzip.decompress(body)
        found.append(yaml.safe_load(body))
    return found


def test_gpu_nodes_stripe_their_instance_stores_with_a_nodeconfig_nodeadm_accepts(eks: Graph) -> None:
    lt = eks.named(LT, "llm-train-eks-eks-gpu-lt").inputs
    (config,) = nodeadm_configs(lt["userData"])
    jsonschema.validate(config, NODECONFIG_SCHEMA)
    # p5.48xlarge has 8 x 3.84 TB NVMe instance store (EC2 instance types): one RAID0 array.
    assert config["spec"]["instance"] == {"localStorage": {"strategy": "RAID0"}}
    # Graceful node shutdown covers the training pod's grace period: a 1,120 GB checkpoint at 11.7 GB/s takes 96 s,
    # capped at 120 s (spot notice) - 30 s (torchrun's shutdown) - 15 s = 75 s; grace = 75 + 30 + 15 = 120 s; plus
    # 30 s for critical pods. Field names: KubeletConfiguration shutdownGracePeriod, shutdownGracePeriodCriticalPods
    # (nodeadm/internal/kubelet/config.go json tags).
    assert config["spec"]["kubelet"] == {
        "config": {"shutdownGracePeriod": "150s", "shutdownGracePeriodCriticalPods": "30s"}
    }
    # The system nodes (m7i, EBS only) get no user data: EKS's own NodeConfig is all they need.
    assert "userData" not in eks.named(LT, "llm-train-eks-eks-system-lt").inputs


def test_the_schema_refuses_what_nodeadm_refuses() -> None:
    """The oracle above can fail: a misspelt field or strategy is refused."""
    for bad in (
        {"instance": {"localStorage": {"strategy": "raid0"}}},
        {"instance": {"localstorage": {"strategy": "RAID0"}}},
        {"instance": {"localStorage": {"strategy": "RAID0", "raid": 0}}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(
                {"apiVersion": "node.eks.aws/v1alpha1", "kind": "NodeConfig", "spec": bad}, NODECONFIG_SCHEMA
            )


def test_an_instance_without_local_disks_gets_no_nodeconfig() -> None:
    from gpuinfra.pulumi.components.training.nodeadm import launch_template_user_data, node_config

    assert node_config(0) is None and launch_template_user_data(0) is None
    assert node_config(0, 45) == {
        "apiVersion": "node.eks.aws/v1alpha1",
        "kind": "NodeConfig",
        "spec": {"kubelet": {"config": {"shutdownGracePeriod": "75s", "shutdownGracePeriodCriticalPods": "30s"}}},
    }
    assert nodeadm_configs(launch_template_user_data(30400) or "")[0]["kind"] == "NodeConfig"


def test_every_node_group_pins_the_ami_release_of_its_kubernetes_version(eks: Graph) -> None:
    groups = eks.of_type(NODE_GROUP)
    assert {g.name for g in groups} == {
        "llm-train-eks-eks-system",
        "llm-train-eks-eks-gpu-ondemand",
        "llm-train-eks-eks-gpu-spot",
    }
    for group in groups:
        assert group.inputs["releaseVersion"] == RELEASE_1_33, group.name
    # Launch templates without an AMI (EKS picks the AMI type's image at releaseVersion): the only case in which the
    # EKS API takes releaseVersion with a launch template (botocore EKS model, CreateNodegroupRequest.releaseVersion).
    assert all("imageId" not in lt.inputs for lt in eks.of_type(LT))


def test_gpu_node_groups_repair_one_node_at_a_time(eks: Graph, eks_model: Any) -> None:
    members = set(eks_model.shape_for("NodeRepairConfig").members)
    for group in eks.of_type(NODE_GROUP):
        repair = group.inputs.get("nodeRepairConfig")
        if "gpu" not in group.name:
            continue
        assert repair == {"enabled": True, "maxParallelNodesRepairedCount": 1}, group.name
        assert set(repair) <= members


def test_gpu_node_groups_update_without_a_surge_the_quota_cannot_hold(eks: Graph, eks_model: Any) -> None:
    # The DEFAULT update strategy first launches up to twice the zone count of extra nodes (EKS User Guide,
    # "Understand each phase of node updates"): 2 more p5.48xlarge (2 x 192 vCPUs) for a one-zone group, beyond
    # the P5 spot grant of the example org, which is exactly the two stacks' 24 nodes. MINIMAL terminates first
    # (EKS API Reference, NodegroupUpdateConfig.updateStrategy), so the group never holds more than its size.
    for group in eks.of_type(NODE_GROUP):
        if "gpu" not in group.name:
            continue
        update = group.inputs["updateConfig"]
        assert update == {"maxUnavailable": 1, "updateStrategy": "MINIMAL"}, group.name
        assert update["updateStrategy"] in eks_model.shape_for("NodegroupUpdateStrategies").enum
        assert set(update) <= set(eks_model.shape_for("NodegroupUpdateConfig").members)


def test_the_node_monitoring_agent_runs_its_gpu_checks_on_the_tainted_gpu_nodes(eks: Graph) -> None:
    addons = {a.inputs["addonName"]: a.inputs for a in eks.of_type(ADDON)}
    agent = addons["eks-node-monitoring-agent"]
    config = json.loads(agent["configurationValues"])
    # aws/eks-node-monitoring-agent charts/configuration.schema.json (e939bffc): top-level keys monitoringAgent and
    # dcgmAgent, each with tolerations (an array of objects); additionalProperties false.
    assert set(config) <= {"monitoringAgent", "dcgmAgent"} and set(config["dcgmAgent"]) <= {"resources", "tolerations"}
    taints = {(t["key"], t["effect"]) for g in eks.of_type(NODE_GROUP) if "gpu" in g.name for t in g.inputs["taints"]}
    assert taints == {("nvidia.com/gpu", "NO_SCHEDULE")}
    # A toleration matches a taint of the same key and effect with operator Exists (Kubernetes, Taints and
    # Tolerations); the EKS API spells effect NO_SCHEDULE, Kubernetes NoSchedule.
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in config["dcgmAgent"]["tolerations"]


def test_the_control_plane_upgrade_policy_is_explicit(eks: Graph, eks_model: Any) -> None:
    policy = eks.one("aws:eks/cluster:Cluster").inputs["upgradePolicy"]
    assert policy == {"supportType": "EXTENDED"}
    assert policy["supportType"] in eks_model.shape_for("SupportType").enum
