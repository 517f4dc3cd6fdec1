"""Training on Kubernetes: EKS with EFA (device plugins, Kueue flavors and quotas, FSx volume, JobSet
template) and on premises (rack labels from the planner, Topology, InfiniBand RDMA, site Lustre)."""

from __future__ import annotations

import json

import pytest
from helpers import checked, example_graph
from ruamel.yaml import YAML

from infra.graph import Graph
from infra.plan import TrainingPlan

RELEASE = "kubernetes:helm.sh/v3:Release"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta1:ResourceFlavor"
CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta1:ClusterQueue"


def job_template(graph: Graph) -> dict:
    (config,) = [c for c in graph.of_type("kubernetes:core/v1:ConfigMap") if "jobset.yaml" in c.inputs.get("data", {})]
    return YAML(typ="safe", pure=True).load(config.inputs["data"]["jobset.yaml"])


def trainer(template: dict) -> dict:
    pod = template["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    return pod["spec"]["containers"][0]


def quotas(graph: Graph) -> dict[str, int]:
    spec = graph.one(CLUSTER_QUEUE).inputs["spec"]
    totals: dict[str, int] = {}
    for flavor in spec["resourceGroups"][0]["flavors"]:
        for resource in flavor["resources"]:
            totals[resource["name"]] = totals.get(resource["name"], 0) + resource["nominalQuota"]
    return totals


@pytest.fixture(scope="module")
def eks() -> Graph:
    return example_graph("llm-train-eks")


@pytest.fixture(scope="module")
def onprem() -> Graph:
    return example_graph("llm-train-onprem")


def test_eks_device_plugins_csi_kueue_and_jobset_are_installed(eks: Graph) -> None:
    charts = {r.inputs["name"] for r in eks.of_type(RELEASE)}
    assert {"nvidia-device-plugin", "aws-efa-k8s-device-plugin", "aws-fsx-csi-driver", "kueue", "jobset"} <= charts


def test_eks_flavors_per_capacity_type_and_quota_equals_the_gpus(eks: Graph) -> None:
    flavors = {f.inputs["metadata"]["name"]: f.inputs["spec"]["nodeLabels"] for f in eks.of_type(FLAVOR)}
    assert flavors == {
        "on-demand": {"eks.amazonaws.com/capacityType": "ON_DEMAND"},
        "spot": {"eks.amazonaws.com/capacityType": "SPOT"},
    }
    assert quotas(eks) == {"nvidia.com/gpu": 16 * 8, "vpc.amazonaws.com/efa": 16 * 32}
    local = eks.one("kubernetes:kueue.x-k8s.io/v1beta1:LocalQueue").inputs
    assert local["spec"]["clusterQueue"] == "llm-train-eks" and local["metadata"]["namespace"] == "training"


def test_eks_gpu_nodes_use_the_efa_template_in_the_placement_group(eks: Graph) -> None:
    groups = {g.name.rsplit("-", 1)[-1]: g.inputs for g in eks.of_type("aws:eks/nodeGroup:NodeGroup")}
    assert groups["ondemand"]["capacityType"] == "ON_DEMAND" and groups["ondemand"]["scalingConfig"]["desiredSize"] == 4
    assert groups["spot"]["capacityType"] == "SPOT" and groups["spot"]["scalingConfig"]["desiredSize"] == 12
    gpu_lt = eks.named("aws:ec2/launchTemplate:LaunchTemplate", "llm-train-eks-eks-gpu-lt").inputs
    assert len(gpu_lt["networkInterfaces"]) == 32 and gpu_lt["metadataOptions"]["httpTokens"] == "required"
    assert gpu_lt["placement"]["groupName"].startswith("llm-train-eks-eks-pg")
    private = eks.named("aws:ec2/subnet:Subnet", "llm-train-eks-net-private")
    for group in eks.of_type("aws:eks/nodeGroup:NodeGroup"):
        assert private.urn in group.dependencies and len(group.inputs["subnetIds"]) == 1
    cluster = eks.one("aws:eks/cluster:Cluster").inputs
    assert len(cluster["vpcConfig"]["subnetIds"]) == 2  # the control plane spans two zones, the nodes one


def test_eks_job_template_requests_efa_and_gpus_and_mounts_lustre(eks: Graph) -> None:
    template = job_template(eks)
    assert template["kind"] == "JobSet" and template["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "research"
    container = trainer(template)
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert "FI_PROVIDER" not in env and env["GPUINFRA_CHECKPOINT_DIR"] == "/fsx/checkpoints"  # aws-ofi-nccl: legacy
    assert env["GPUINFRA_CHECKPOINT_INTERVAL_SECONDS"] == str(150 * 60)
    assert {"name": "lustre", "mountPath": "/fsx"} in container["volumeMounts"]
    pv = eks.one("kubernetes:core/v1:PersistentVolume").inputs["spec"]
    assert pv["csi"]["driver"] == "fsx.csi.aws.com" and pv["csi"]["volumeAttributes"]["dnsname"].endswith(
        ".amazonaws.com"
    )


def test_every_kubernetes_object_uses_the_explicit_provider_and_carries_workload_labels(eks: Graph) -> None:
    (kube,) = [p for p in eks.providers() if p.type == "pulumi:providers:kubernetes"]
    assert kube.inputs["kubeconfig"] == "[secret]"
    for resource in eks.resources:
        if resource.type.startswith("kubernetes:"):
            assert resource.provider == kube.urn
            labels = (resource.inputs.get("metadata") or {}).get("labels") or {}
            if resource.type != RELEASE and "NodePatch" not in resource.type:
                assert labels.get("gpuinfra.io/workload") == "training", resource.name


def test_onprem_node_labels_match_the_planners_rack_layout(onprem: Graph) -> None:
    plan = checked("llm-train-onprem").plan
    assert isinstance(plan, TrainingPlan) and plan.racks
    patches = {
        p.inputs["metadata"]["name"]: p.inputs["metadata"]["labels"]
        for p in onprem.of_type("kubernetes:core/v1:NodePatch")
    }
    assert len(patches) == 32 == sum(r.nodes for r in plan.racks.racks)
    for placement in plan.node_placements:
        labels = patches[placement.node]
        assert labels["gpuinfra.io/rack"] == f"rack-{placement.rack:02d}"
        assert labels["gpuinfra.io/cooling-loop"] == f"loop-{placement.rack // 2:02d}"
        assert labels["gpuinfra.io/power-domain"] == f"pd-{placement.rack:02d}"
    assert patches["dgx-000"]["gpuinfra.io/rack"] == "rack-00" and patches["dgx-031"]["gpuinfra.io/rack"] == "rack-07"


def test_onprem_topology_flavor_and_quota(onprem: Graph) -> None:
    topology = onprem.one("kubernetes:kueue.x-k8s.io/v1alpha1:Topology").inputs["spec"]
    assert topology["levels"] == [{"nodeLabel": "gpuinfra.io/rack"}, {"nodeLabel": "kubernetes.io/hostname"}]
    (flavor,) = onprem.of_type(FLAVOR)
    assert flavor.inputs["spec"]["topologyName"] == "dc-east-racks"
    assert quotas(onprem) == {"nvidia.com/gpu": 256, "rdma/ib": 32}


def test_onprem_job_template_requests_rdma_with_ib_nccl_settings(onprem: Graph) -> None:
    template = job_template(onprem)
    pod = template["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert pod["metadata"]["annotations"]["kueue.x-k8s.io/podset-preferred-topology"] == "gpuinfra.io/rack"
    container = trainer(template)
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 8, "rdma/ib": 1}
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["NCCL_IB_HCA"] == ",".join(f"mlx5_{i}" for i in range(8)) and env["NCCL_NET_GDR_LEVEL"] == "SYS"
    assert container["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    config = onprem.named("kubernetes:core/v1:ConfigMap", "llm-train-dc-rdma-config").inputs["data"]["config.json"]
    assert json.loads(config)["configList"][0]["resourceName"] == "ib"


def test_onprem_uses_no_cloud_and_mounts_the_site_lustre(onprem: Graph) -> None:
    assert all(p.type == "pulumi:providers:kubernetes" for p in onprem.providers())
    pv = onprem.one("kubernetes:core/v1:PersistentVolume").inputs
    assert pv["spec"]["hostPath"] == {"path": "/lustre", "type": "Directory"}
    assert pv["metadata"]["annotations"]["gpuinfra.io/lustre-mgs"].startswith("10.40.0.11@o2ib")
