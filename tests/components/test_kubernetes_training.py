"""Training on Kubernetes, judged as Kueue, the device plugins and the kubelet would judge it: the job fits
one flavor's quota, the device plugins select the GPU nodes (chart values at the pins, read from ../shared),
topology-aware scheduling is on and its levels are labels the nodes carry, the entrypoint is under the
mounted Lustre, requests are set, and the EKS endpoint and pod credentials are private.

Expected figures are computed here by hand from the cited formulas, not by the code under test."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from gpuinfra.graph import Graph, Resource
from gpuinfra.validators.base import Level
from helpers import ample_quotas, checked, example_graph, graph_for
from preflight.upstream import UPSTREAM, chart_values, require
from ruamel.yaml import YAML

RELEASE = "kubernetes:helm.sh/v3:Release"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2"
FLAVOR = f"{KUEUE}:ResourceFlavor"
CLUSTER_QUEUE = f"{KUEUE}:ClusterQueue"
LOCAL_QUEUE = f"{KUEUE}:LocalQueue"
TOPOLOGY = f"{KUEUE}:Topology"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
P5_VCPUS, P5_MEMORY_GIB = 192, 2048  # EC2 instance types: p5.48xlarge
DGX_H100_VCPUS = 224  # 2 x Xeon Platinum 8480C, 56 cores each, 2 threads per core
EKS_TOPOLOGY_LABELS = {
    # EKS user guide, ml-workload-topology: labels EKS puts on nodes of types with an instance topology
    "topology.k8s.aws/network-node-layer-1",
    "topology.k8s.aws/network-node-layer-2",
    "topology.k8s.aws/network-node-layer-3",
}
WELL_KNOWN = {"kubernetes.io/hostname", "node.kubernetes.io/instance-type", "eks.amazonaws.com/capacityType"}
yaml = YAML(typ="safe", pure=True)


def quantity(value: Any) -> float:
    """A Kubernetes quantity as a number (the suffixes used here)."""
    text = str(value)
    for suffix, factor in (("Mi", 2**20), ("Gi", 2**30), ("m", 1e-3)):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor
    return float(text)


def job_template(graph: Graph) -> dict[str, Any]:
    (config,) = [c for c in graph.of_type("kubernetes:core/v1:ConfigMap") if "jobset.yaml" in c.inputs.get("data", {})]
    return dict(yaml.load(config.inputs["data"]["jobset.yaml"]))


def pod(template: dict[str, Any]) -> dict[str, Any]:
    return dict(template["spec"]["replicatedJobs"][0]["template"]["spec"]["template"])


def trainer(template: dict[str, Any]) -> dict[str, Any]:
    return dict(pod(template)["spec"]["containers"][0])


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value") for e in container["env"]}


def release(graph: Graph, chart: str) -> Resource:
    (r,) = [r for r in graph.of_type(RELEASE) if r.inputs["name"] == chart]
    return r


def tolerates(tolerations: list[dict[str, Any]], taint: dict[str, Any]) -> bool:
    """Kubernetes taint/toleration matching (concepts/scheduling-eviction/taint-and-toleration)."""
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("operator", "Equal") == "Exists":
            if not t.get("key") or t["key"] == taint["key"]:
                return True
        elif t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def selected_by(affinity: dict[str, Any], labels: dict[str, str]) -> bool:
    """A required node affinity: any term whose every expression matches (In / NotIn / Exists)."""
    for term in affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]:
        ok = True
        for e in term["matchExpressions"]:
            value = labels.get(e["key"])
            if e["operator"] == "In":
                ok &= value in e["values"]
            elif e["operator"] == "NotIn":
                ok &= value not in e["values"]
            elif e["operator"] == "Exists":
                ok &= value is not None
        if ok:
            return True
    return False


def eks_node_labels(graph: Graph, group: Resource) -> dict[str, str]:
    """What a node of the group carries: the group's labels, the kubelet's well-known labels and EKS's topology
    labels (p5.48xlarge has an EC2 instance topology)."""
    lt = (
        graph.named(LT, "llm-train-eks-eks-gpu-lt").inputs if group.inputs.get("amiType", "").endswith("NVIDIA") else {}
    )
    instance = lt.get("instanceType") or (group.inputs.get("instanceTypes") or [""])[0]
    labels = {**group.inputs.get("labels", {}), "node.kubernetes.io/instance-type": instance}
    labels.update({k: "x" for k in WELL_KNOWN if k not in labels})
    if instance == "p5.48xlarge":
        labels.update({k: "nn-1" for k in EKS_TOPOLOGY_LABELS})
    return labels


def taints(group: Resource) -> list[dict[str, Any]]:
    effect = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}
    return [{**t, "effect": effect[t["effect"]]} for t in group.inputs.get("taints", [])]


@pytest.fixture(scope="module")
def eks() -> Graph:
    return example_graph("llm-train-eks")


@pytest.fixture(scope="module")
def onprem() -> Graph:
    return example_graph("llm-train-onprem")


# ---- Kueue admits the job: one flavor, quota = the job ------------------------------------------------
@pytest.mark.parametrize("stack", ["llm-train-eks", "llm-train-onprem"])
def test_the_job_fits_one_flavors_quota_and_every_resource_it_requests_is_covered(stack: str) -> None:
    graph = example_graph(stack)
    (flavor,) = graph.of_type(FLAVOR)
    spec = graph.one(CLUSTER_QUEUE).inputs["spec"]
    (group,) = spec["resourceGroups"]
    (queue_flavor,) = group["flavors"]  # one flavor: Kueue fits a pod set into one flavor, never two
    assert queue_flavor["name"] == flavor.inputs["metadata"]["name"]
    quota = {r["name"]: quantity(r["nominalQuota"]) for r in queue_flavor["resources"]}
    template = job_template(graph)
    replicated = template["spec"]["replicatedJobs"][0]
    pods = replicated["replicas"] * replicated["template"]["spec"]["parallelism"]
    requests = trainer(template)["resources"]["requests"]
    assert set(requests) <= set(group["coveredResources"])
    for name, value in requests.items():
        assert pods * quantity(value) <= quota[name], name
    # and the quota is exactly the job: nothing left over for a second job to straddle into
    assert quota["nvidia.com/gpu"] == pods * 8


def test_eks_quota_is_the_placement_groups_gpus_and_efa_devices(eks: Graph) -> None:
    quota = {
        r["name"]: r["nominalQuota"]
        for r in eks.one(CLUSTER_QUEUE).inputs["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    }
    assert quota["nvidia.com/gpu"] == 16 * 8 and quota["vpc.amazonaws.com/efa"] == 16 * 32


def test_a_spot_job_says_so_and_gets_its_own_flavor_and_queue(eks: Graph) -> None:
    (flavor,) = eks.of_type(FLAVOR)
    assert flavor.inputs["metadata"]["name"] == "llm-train-eks-spot"
    # the flavor selects the fabric domain's nodes whatever their capacity type (a node-group concern)
    assert flavor.inputs["spec"]["nodeLabels"] == {
        "gpuinfra.io/pool": "gpu",
        "gpuinfra.io/fabric-domain": "llm-train-eks",
    }
    local = eks.one(LOCAL_QUEUE).inputs
    assert local["metadata"]["name"] == "research-spot" and local["spec"]["clusterQueue"] == "llm-train-eks-spot"
    labels = job_template(eks)["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/queue-name"] == "research-spot" and labels["gpuinfra.io/capacity"] == "spot"
    on_demand = graph_for(
        "llm-train-eks", {"compute.capacity": {"type": "on_demand"}, "job.spot": False}, ample_quotas()
    )
    assert [f.inputs["metadata"]["name"] for f in on_demand.of_type(FLAVOR)] == ["llm-train-eks"]
    assert job_template(on_demand)["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "research"


def test_a_job_on_spot_nodes_that_does_not_say_so_is_refused() -> None:
    result = checked("llm-train-eks", {"job.spot": False})
    (finding,) = [f for f in result.findings if f.rule == "spot-job-not-declared"]
    assert finding.level == Level.ERROR and "12 of them spot" in finding.message


def test_onprem_queue_is_in_the_sites_cohort_with_preemption(onprem: Graph) -> None:
    spec = onprem.one(CLUSTER_QUEUE).inputs["spec"]
    assert spec["cohortName"] == "dc-east"
    assert spec["preemption"]["reclaimWithinCohort"] == "Any"
    assert spec["preemption"]["withinClusterQueue"] == "LowerPriority"
    assert spec["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "training"}}


# ---- device plugins select the GPU nodes ------------------------------------------------------------------
def test_the_nvidia_plugin_selects_and_tolerates_every_gpu_node_and_no_system_node(eks: Graph) -> None:
    nvidia = release(eks, "nvidia-device-plugin").inputs
    defaults = chart_values(nvidia["chart"], nvidia["version"])
    affinity = nvidia["values"].get("affinity", defaults["affinity"])  # the chart's default affinity applies
    assert nvidia["values"]["gfd"]["enabled"] is True  # EKS user guide: install with gfd.enabled=true
    groups = eks.of_type(NODE_GROUP)
    gpu = [g for g in groups if g.inputs["amiType"].endswith("NVIDIA")]
    assert len(gpu) == 2
    for group in gpu:
        assert selected_by(affinity, eks_node_labels(eks, group)), group.name
        for taint in taints(group):
            assert tolerates(nvidia["values"]["tolerations"], taint), (group.name, taint)
            assert tolerates(nvidia["values"]["nfd"]["worker"]["tolerations"], taint), (group.name, taint)
            # the chart's own NFD toleration would not (it expects value "present")
            assert not tolerates(defaults["nfd"]["worker"]["tolerations"], taint)
    (system,) = [g for g in groups if g not in gpu]
    assert not selected_by(affinity, eks_node_labels(eks, system))


def test_the_efa_plugin_selects_and_tolerates_every_gpu_node(eks: Graph) -> None:
    efa = release(eks, "aws-efa-k8s-device-plugin").inputs
    defaults = chart_values(efa["chart"], efa["version"])
    supported = defaults["supportedInstanceLabels"]
    for group in eks.of_type(NODE_GROUP):
        if not group.inputs["amiType"].endswith("NVIDIA"):
            continue
        labels = eks_node_labels(eks, group)
        assert any(labels.get(key) in supported["values"] for key in supported["keys"])
        fixed = [{"key": "CriticalAddonsOnly", "operator": "Exists"}]  # template-facts.json
        for taint in taints(group):
            assert tolerates(fixed + efa["values"]["tolerations"], taint)


# ---- topology-aware scheduling is on, on labels the nodes carry ----------------------------------------------
def test_kueue_config_enables_tas_and_waits_for_pods_ready() -> None:
    # EKS only: on premises Kueue is the site's (tests/components/test_onprem_site.py).
    kueue = release(example_graph("llm-train-eks"), "kueue").inputs
    gates = {g["name"]: g["enabled"] for g in kueue["values"]["controllerManager"]["featureGates"]}
    assert gates == {"TopologyAwareScheduling": True}
    facts = json.loads(require(UPSTREAM / f"k8s/kueue-v{kueue['version']}/facts.json").read_text())
    assert "TopologyAwareScheduling" in facts["feature_gates"]  # a gate Kueue knows at the pin
    config = yaml.load(kueue["values"]["managerConfig"]["controllerManagerConfigYaml"])
    default = yaml.load(chart_values(kueue["chart"], kueue["version"])["managerConfig"]["controllerManagerConfigYaml"])
    assert config["apiVersion"] == default["apiVersion"] and config["kind"] == "Configuration"
    for key in ("health", "metrics", "webhook", "leaderElection"):  # what the chart's Deployment and Services use
        assert config[key] == default[key], key
    assert "jobset.x-k8s.io/jobset" in config["integrations"]["frameworks"]
    assert config["waitForPodsReady"]["timeout"] == "30m"


@pytest.mark.parametrize("stack", ["llm-train-eks", "llm-train-onprem"])
def test_the_kueue_api_emitted_is_served_and_stored_at_the_pin(stack: str) -> None:
    graph = example_graph(stack)
    if stack == "llm-train-onprem":  # the site's Kueue, as the organization file declares it
        version = yaml.load((Path(__file__).parents[2] / "stacks/org.yaml").read_text())["onprem_sites"]["dc-east"][
            "components"
        ]["kueue"]["version"]
    else:
        version = release(graph, "kueue").inputs["version"]
    for kind, plural in (
        ("Topology", "topologies"),
        ("ResourceFlavor", "resourceflavors"),
        ("ClusterQueue", "clusterqueues"),
        ("LocalQueue", "localqueues"),
    ):
        crd = yaml.load(require(UPSTREAM / f"k8s/kueue-v{version}/kueue.x-k8s.io_{plural}.yaml").read_text())
        stored = [v["name"] for v in crd["spec"]["versions"] if v["served"] and v["storage"]]
        (resource,) = [
            r
            for r in graph.resources
            if r.type.startswith("kubernetes:kueue.x-k8s.io/") and r.type.endswith(f":{kind}")
        ]
        assert resource.type.split(":")[1].split("/")[1] in stored, kind


def test_eks_topology_is_ec2s_network_layers_and_the_host(eks: Graph) -> None:
    topology = eks.one(TOPOLOGY).inputs
    levels = [level["nodeLabel"] for level in topology["spec"]["levels"]]
    assert levels == [*sorted(EKS_TOPOLOGY_LABELS), "kubernetes.io/hostname"]
    (flavor,) = eks.of_type(FLAVOR)
    assert flavor.inputs["spec"]["topologyName"] == topology["metadata"]["name"]
    for group in eks.of_type(NODE_GROUP):
        if group.inputs["amiType"].endswith("NVIDIA"):
            assert set(levels) <= set(eks_node_labels(eks, group)), group.name
    annotations = pod(job_template(eks))["metadata"]["annotations"]
    assert annotations["kueue.x-k8s.io/podset-preferred-topology"] in levels


def test_onprem_topology_levels_are_labels_every_node_carries(onprem: Graph) -> None:
    topology = onprem.one(TOPOLOGY).inputs
    levels = [level["nodeLabel"] for level in topology["spec"]["levels"]]
    assert levels == ["gpuinfra.io/rack", "kubernetes.io/hostname"]
    for patch in onprem.of_type("kubernetes:core/v1:NodePatch"):
        assert set(levels) <= set(patch.inputs["metadata"]["labels"]) | {"kubernetes.io/hostname"}
    (flavor,) = onprem.of_type(FLAVOR)
    assert flavor.inputs["spec"]["topologyName"] == topology["metadata"]["name"]
    for patch in onprem.of_type("kubernetes:core/v1:NodePatch"):  # the flavor selects every node of the job
        assert flavor.inputs["spec"]["nodeLabels"].items() <= patch.inputs["metadata"]["labels"].items()


def test_onprem_labels_are_the_inventorys_not_the_name_order(onprem: Graph) -> None:
    labels = {
        p.inputs["metadata"]["name"]: p.inputs["metadata"]["labels"]
        for p in onprem.of_type("kubernetes:core/v1:NodePatch")
    }
    # the stack's inventory: dgx-031 replaced a failed system in rack r06, dgx-023 sits in r08
    assert labels["dgx-031"]["gpuinfra.io/rack"] == "r06" and labels["dgx-023"]["gpuinfra.io/rack"] == "r08"
    assert labels["dgx-031"]["gpuinfra.io/cooling-loop"] == "loop-c"
    assert labels["dgx-031"]["gpuinfra.io/power-domain"] == "pdu-r06"
    assert labels["dgx-000"]["gpuinfra.io/rack"] == "r01"


def test_onprem_without_an_inventory_is_refused() -> None:
    result = checked("llm-train-onprem", {"onprem.inventory": [], "onprem.node_name_pattern": "dgx-{index:03d}"})
    assert "onprem-inventory-missing" in {f.rule for f in result.findings if f.level == Level.ERROR}


# ---- the job: entrypoint under the mounted Lustre, requests, restarts, NCCL -------------------------------------
@pytest.mark.parametrize(("stack", "mount"), [("llm-train-eks", "/fsx"), ("llm-train-onprem", "/lustre")])
def test_the_entrypoint_is_under_the_mounted_lustre(stack: str, mount: str) -> None:
    template = job_template(example_graph(stack))
    container = trainer(template)
    (lustre,) = [m for m in container["volumeMounts"] if m["name"] == "lustre"]
    assert lustre["mountPath"] == mount
    script = container["args"][
        container["args"].index("--rdzv-endpoint=$(JOBSET_NAME)-workers-0-0.$(JOBSET_NAME):29500") + 1
    ]
    assert script == f"{mount}/code/train.py"


def test_onprem_lustre_is_a_checked_host_mount_not_a_rwx_hostpath_volume(onprem: Graph) -> None:
    assert onprem.of_type("kubernetes:core/v1:PersistentVolume") == []  # hostPath offers no ReadWriteMany
    spec = pod(job_template(onprem))["spec"]
    (volume,) = [v for v in spec["volumes"] if v["name"] == "lustre"]
    assert volume["hostPath"]["path"] == "/lustre"
    (check,) = spec["initContainers"]
    assert "m=/lustre" in check["args"] and "f=:/scratch" in check["args"] and check["args"][-1] == "/proc/mounts"


def test_the_onprem_mount_check_passes_only_on_the_sites_lustre(onprem: Graph, tmp_path: Any) -> None:
    import shutil
    import subprocess

    awk = shutil.which("awk")
    if awk is None:
        pytest.skip("no awk on this machine")
    (check,) = pod(job_template(onprem))["spec"]["initContainers"]
    mounts = {
        "lustre": "10.40.0.11@o2ib,10.40.0.12@o2ib:/scratch /lustre lustre rw,flock 0 0\n",
        "empty": "/dev/nvme0n1p1 / ext4 rw 0 0\n",
        "other-fs": "10.40.0.11@o2ib:/scratch2 /lustre lustre rw 0 0\n",
    }
    results = {}
    for name, text in mounts.items():
        path = tmp_path / name
        path.write_text(text)
        run = subprocess.run([awk, *check["args"][:-1], str(path)], capture_output=True, text=True)
        results[name] = run.returncode
    assert results == {"lustre": 0, "empty": 1, "other-fs": 1}


def test_eks_pod_requests_come_from_the_nodes_allocatable(eks: Graph) -> None:
    container = trainer(job_template(eks))
    resources = container["resources"]
    assert resources["requests"] == resources["limits"]  # Guaranteed QoS: never the first eviction target
    # EKS AMI kube-reserved CPU: 6% of core 1, 1% of core 2, 0.5% of cores 3-4, 0.25% above: 60+10+10+188*2.5 m
    reserved_m = 60 + 10 + 2 * 5 + (P5_VCPUS - 4) * 2.5
    assert int(resources["requests"]["cpu"]) == (P5_VCPUS * 1000 - reserved_m - 2000) // 1000 == 189
    # memory: 95% of nominal, less kube-reserved 11 MiB x 250 pods + 255 MiB, eviction 100 MiB, 8 GiB daemons
    memory_mib = math.floor(P5_MEMORY_GIB * 1024 * 0.95) - (11 * 250 + 255) - 100 - 8192
    assert quantity(resources["requests"]["memory"]) == (memory_mib // 1024) * 1024 * 2**20
    shm = next(v for v in pod(job_template(eks))["spec"]["volumes"] if v["name"] == "shm")["emptyDir"]
    assert shm["medium"] == "Memory" and quantity(shm["sizeLimit"]) == 256 * 2**30
    assert quantity(shm["sizeLimit"]) < quantity(resources["limits"]["memory"])


def test_onprem_pod_requests_fit_a_dgx_h100() -> None:
    requests = trainer(job_template(example_graph("llm-train-onprem")))["resources"]["requests"]
    assert int(requests["cpu"]) < DGX_H100_VCPUS and quantity(requests["memory"]) < 2048 * 2**30
    assert requests["nvidia.com/gpu"] == 8 and requests["rdma/ib"] == 1


def _poisson_quantile(mean: float, q: float) -> int:
    k = 0
    while sum(math.exp(-mean) * mean**i / math.factorial(i) for i in range(k + 1)) < q:
        k += 1
    return k


@pytest.mark.parametrize("stack", ["llm-train-eks", "llm-train-onprem"])
def test_an_infrastructure_disruption_restarts_the_gang_without_spending_the_budget(stack: str) -> None:
    """Review finding T13. A pod stopped by the infrastructure carries the DisruptionTarget condition (Kubernetes
    docs, "Pod disruption conditions": preemption, eviction, node shutdown by the kubelet, taint manager, pod GC);
    the Job's podFailurePolicy fails the Job on it, with the reason PodFailurePolicy (batch/v1
    JobReasonPodFailurePolicy), and the JobSet's rule restarts on that reason ignoring maxRestarts; every other
    failure is left to the default RestartJobSet, which counts."""
    template = job_template(example_graph(stack))
    policy = template["spec"]["failurePolicy"]
    (rule,) = policy["rules"]
    assert (rule["action"], rule["onJobFailureReasons"]) == ("RestartJobSetAndIgnoreMaxRestarts", ["PodFailurePolicy"])
    assert "targetReplicatedJobs" not in rule and policy["maxRestarts"] > 0
    (job,) = template["spec"]["replicatedJobs"]
    (pod_rule,) = job["template"]["spec"]["podFailurePolicy"]["rules"]
    assert pod_rule == {"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}
    assert pod(template)["spec"]["restartPolicy"] == "Never"  # podFailurePolicy requires it (Job API validation)


def test_max_restarts_cover_the_interruptions_expected_over_the_run(eks: Graph) -> None:
    # 16 nodes at 5,000 h MTBF, 12 spot nodes at 20% a month (730 h), over 30 days
    rate = 16 / 5000 + 12 * 0.2 / 730
    expected = _poisson_quantile(rate * 30 * 24, 0.99)
    assert job_template(eks)["spec"]["failurePolicy"]["maxRestarts"] == expected > rate * 30 * 24 > 3
    longer = graph_for("llm-train-eks", {"job.run_days": 90})
    assert job_template(longer)["spec"]["failurePolicy"]["maxRestarts"] == _poisson_quantile(rate * 90 * 24, 0.99)


def test_eks_job_runs_the_specs_efa_ready_image_with_the_fabrics_devices(eks: Graph) -> None:
    container = trainer(job_template(eks))
    assert container["image"].startswith("763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:")
    assert {k: v for k, v in container["resources"]["limits"].items() if "/" in k} == {
        "nvidia.com/gpu": 8,
        "vpc.amazonaws.com/efa": 32,
    }
    # one directory per run: the JobSet's name under the root, expanded by the kubelet (EnvVar.value's $(VAR))
    assert env_of(container)["GPUINFRA_CHECKPOINT_ROOT"] == "/fsx/checkpoints"
    assert env_of(container)["GPUINFRA_CHECKPOINT_DIR"] == "$(GPUINFRA_CHECKPOINT_ROOT)/$(JOBSET_NAME)"
    names = [e["name"] for e in container["env"]]
    assert names.index("JOBSET_NAME") < names.index("GPUINFRA_CHECKPOINT_ROOT") < names.index("GPUINFRA_CHECKPOINT_DIR")
    assert "FI_PROVIDER" not in env_of(container)  # aws-ofi-nccl doc/efa-env-var.md: only for plugin <= 1.5.0


def test_infiniband_nccl_matches_the_compute_rails_exactly_and_lets_nccl_choose_gdr(onprem: Graph) -> None:
    env = env_of(trainer(job_template(onprem)))
    # NCCL docs: a leading "=" makes NCCL_IB_HCA an exact match (else mlx5_1 also selects mlx5_10/11)
    assert env["NCCL_IB_HCA"] == "=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11"
    assert "NCCL_NET_GDR_LEVEL" not in env
    assert trainer(job_template(onprem))["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]


@pytest.mark.parametrize("stack", ["llm-train-eks", "llm-train-onprem"])
def test_trainers_keep_only_the_privileges_docs_security_states(stack: str) -> None:
    """Issue 47: no privilege escalation, NET_RAW dropped, no API token; root and IPC_LOCK stay (docs/security.md).
    The on-premises mount check reads only the mount table, so it runs Restricted (pod_security judges it)."""
    from gpuinfra.graph.pod_security import restricted_problems

    spec = pod(job_template(example_graph(stack)))["spec"]
    context = spec["containers"][0]["securityContext"]
    assert context["allowPrivilegeEscalation"] is False
    assert context["capabilities"] == {"drop": ["NET_RAW"], "add": ["IPC_LOCK"]}  # both examples: EFA, InfiniBand
    assert spec["automountServiceAccountToken"] is False
    inits = spec.get("initContainers", [])
    assert len(inits) == (stack == "llm-train-onprem")  # the Lustre mount check, on premises only
    for init in inits:
        assert restricted_problems({"containers": [init]}) == [], init["name"]


# ---- EKS: private endpoint and pod credentials --------------------------------------------------------------
def test_eks_endpoint_is_public_only_to_the_specs_cidrs_or_private(eks: Graph) -> None:
    vpc = eks.one("aws:eks/cluster:Cluster").inputs["vpcConfig"]
    assert vpc["endpointPrivateAccess"] is True
    assert vpc["endpointPublicAccess"] is True and vpc["publicAccessCidrs"] == ["203.0.113.0/24"]
    private = graph_for("llm-train-eks", {"scheduler.api_access.public_cidrs": []})
    vpc = private.one("aws:eks/cluster:Cluster").inputs["vpcConfig"]
    assert vpc["endpointPublicAccess"] is False and "publicAccessCidrs" not in vpc


def test_pods_get_credentials_from_pod_identity_not_the_nodes(eks: Graph) -> None:
    for lt in eks.of_type(LT):
        assert lt.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 1, lt.name
    roles = {r.name: r for r in eks.of_type("aws:iam/role:Role")}
    node_role = roles["llm-train-eks-eks-node-role"]
    inline = [p for p in eks.of_type("aws:iam/rolePolicy:RolePolicy") if node_role.urn in p.dependencies]
    assert inline == []  # the nodes hold no data grants
    trainer_role = roles["llm-train-eks-eks-trainer-role"]
    trust = json.loads(trainer_role.inputs["assumeRolePolicy"])["Statement"][0]
    assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert sorted(trust["Action"]) == ["sts:AssumeRole", "sts:TagSession"]
    (policy,) = [p for p in eks.of_type("aws:iam/rolePolicy:RolePolicy") if trainer_role.urn in p.dependencies]
    resources = {r for s in json.loads(policy.inputs["policy"])["Statement"] for r in s["Resource"]}
    assert "arn:aws:s3:::acme-llm-train-eks-checkpoints/checkpoints/*" in resources
    assert "arn:aws:s3:::acme-datasets/pretrain/v7/*" in resources
    (association,) = [
        a.inputs
        for a in eks.of_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
        if a.name.endswith("-trainer-identity")
    ]
    (account,) = [
        sa.inputs["metadata"]
        for sa in eks.of_type("kubernetes:core/v1:ServiceAccount")
        if sa.name.endswith("-trainer-sa")
    ]
    assert (association["namespace"], association["serviceAccount"]) == (account["namespace"], account["name"])
    assert pod(job_template(eks))["spec"]["serviceAccountName"] == account["name"]
    assert "eks-pod-identity-agent" in {a.inputs["addonName"] for a in eks.of_type("aws:eks/addon:Addon")}


def test_every_kubernetes_object_uses_the_explicit_provider_and_carries_workload_labels(eks: Graph) -> None:
    (kube,) = [p for p in eks.providers() if p.type == "pulumi:providers:kubernetes"]
    assert kube.inputs["kubeconfig"] == "[secret]"
    for resource in eks.resources:
        if resource.type.startswith("kubernetes:"):
            assert resource.provider == kube.urn
            labels = (resource.inputs.get("metadata") or {}).get("labels") or {}
            if resource.type != RELEASE and "NodePatch" not in resource.type:
                assert labels.get("gpuinfra.io/workload") == "training", resource.name


def test_eks_gpu_nodes_use_the_efa_template_in_the_placement_group(eks: Graph) -> None:
    groups = {g.name.rsplit("-", 1)[-1]: g.inputs for g in eks.of_type(NODE_GROUP)}
    assert groups["ondemand"]["capacityType"] == "ON_DEMAND" and groups["ondemand"]["scalingConfig"]["desiredSize"] == 4
    assert groups["spot"]["capacityType"] == "SPOT" and groups["spot"]["scalingConfig"]["desiredSize"] == 12
    gpu_lt = eks.named(LT, "llm-train-eks-eks-gpu-lt").inputs
    assert len(gpu_lt["networkInterfaces"]) == 32 and gpu_lt["metadataOptions"]["httpTokens"] == "required"
    assert gpu_lt["placement"]["groupName"].startswith("llm-train-eks-eks-pg")
    cluster = eks.one("aws:eks/cluster:Cluster").inputs
    assert len(cluster["vpcConfig"]["subnetIds"]) == 2  # the control plane spans two zones, the nodes one


# ---- pins ----------------------------------------------------------------------------------------------------
def test_every_chart_is_installed_at_its_one_pin_and_the_pin_is_an_upstream_release(eks: Graph, onprem: Graph) -> None:
    from gpuinfra.catalog.pins import CHARTS

    charts = json.loads(require(UPSTREAM / "k8s/helm/charts.json").read_text())["charts"]
    verified = {(c["chart"], v) for c in charts for v in c["versions"]}
    seen = set()
    for graph in (eks, onprem):
        for r in graph.of_type(RELEASE):
            pin = CHARTS[r.inputs["name"]]
            assert (r.inputs["chart"], r.inputs["version"]) == (pin.source, pin.version)
            assert (pin.source, pin.version) in verified
            seen.add(pin.name)
    assert seen == set(CHARTS)
    assert CHARTS["kueue"].version == "0.19.2" and CHARTS["jobset"].version == "0.12.0"


def test_the_readme_pins_table_is_the_pins() -> None:
    from pathlib import Path

    from gpuinfra.catalog.pins import CHARTS, IMAGES

    readme = (Path(__file__).resolve().parents[2] / "docs" / "training.md").read_text()  # moved from README
    for pin in [*CHARTS.values(), *IMAGES.values()]:
        row = f"| {pin.name} | {pin.version} | {pin.checked} | {pin.newest or 'not checked'} |"
        assert row in readme, row


def test_the_fsx_controller_is_told_its_region_rather_than_asking_imds(eks: Graph) -> None:
    fsx = release(eks, "aws-fsx-csi-driver").inputs
    defaults = chart_values(fsx["chart"], fsx["version"])
    assert "region" in defaults["controller"]  # the chart's own key
    assert fsx["values"]["controller"]["region"] == "us-east-1"


def test_a_type_ec2_describes_no_topology_for_gets_no_topology() -> None:
    """The catalog's topology.yaml (EC2 API Reference, DescribeInstanceTopology, "Supported instance types")
    lists p5.48xlarge but not p5en.48xlarge: that cluster runs without a Kueue Topology, never refused."""
    from helpers import graph_for

    graph = graph_for("llm-train-eks", {"compute.instance_type": "p5en.48xlarge"})
    assert graph.of_type(TOPOLOGY) == []
    assert "topologyName" not in graph.of_type(FLAVOR)[0].inputs["spec"]


def test_charts_wait_for_the_system_nodes_and_have_time_to_become_ready(eks: Graph) -> None:
    """Expert-training review, finding 10: the releases started before any node could run their pods. Now the
    cluster's provider depends on the system node group, so every release (which waits for its pods to be ready)
    starts after it, with 900 s instead of Helm's 300 s default."""
    (provider,) = [r for r in eks.resources if r.type == "pulumi:providers:kubernetes"]
    (system,) = [g for g in eks.of_type(NODE_GROUP) if g.name.endswith("-system")]
    assert system.urn in provider.dependencies
    releases = eks.of_type(RELEASE)
    assert releases and all(r.provider == provider.urn for r in releases)
    assert {r.inputs["timeout"] for r in releases} == {900}


def test_the_vpc_cni_enforces_the_namespace_network_policies(eks: Graph) -> None:
    """A NetworkPolicy does nothing on EKS until the VPC CNI's network policy agent runs (EKS User Guide, "Limit
    Pod traffic with Kubernetes network policies": the vpc-cni add-on with enableNetworkPolicy "true")."""
    (cni,) = [a for a in eks.of_type("aws:eks/addon:Addon") if a.inputs["addonName"] == "vpc-cni"]
    assert json.loads(cni.inputs["configurationValues"]) == {"enableNetworkPolicy": "true"}
    assert cni.inputs["resolveConflictsOnCreate"] == "OVERWRITE"
    assert eks.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")


def test_every_helm_release_depends_on_the_system_node_group() -> None:
    """A Helm release waits for its pods to be ready (pulumi-kubernetes helm/v3 Release), which cannot happen before
    a node group exists: each release names the system node group among its dependencies (the review's finding 10
    read the releases' own dependency lists, which the provider's dependency does not show)."""
    from helpers import example_graph

    graph = example_graph("llm-train-eks")
    (system,) = [g for g in graph.of_type("aws:eks/nodeGroup:NodeGroup") if g.name.endswith("-system")]
    releases = graph.of_type("kubernetes:helm.sh/v3:Release")
    assert len(releases) == 5
    for release in releases:
        assert system.urn in release.dependencies, release.name
