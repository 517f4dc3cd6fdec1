"""The Ray engine's stack on the registered dataprep cluster: the KubeRay operator (a Helm release of the chart at
1.7.0, waiting for its NodePool), Karpenter NodePools for the operator and heads, the CPU workers and the MinHash
cluster step, judged against the upstream CRDs and chart values at the pins (../shared/upstream: KubeRay v1.7.0,
Karpenter v1.14.1); the CPU pool priced at its limits, by hand; the pack counting it against the account's grant.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import jsonschema
import pytest
import yaml
from gpuinfra.catalog import Catalog, load_catalog
from gpuinfra.cost import HOURS_PER_MONTH, price_graph
from gpuinfra.graph import Graph, Resource
from gpuinfra.plan import DataprepPlan, build_plan
from gpuinfra.policy.pack import pack_config, police
from gpuinfra.spec import DataprepSpec
from helpers import DELETE, graph_for, inputs_for
from policy_helpers import facts_for
from preflight.upstream import UPSTREAM, crd_errors, crd_schema, require, unknown_values

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/acme/datatrove-ray@sha256:" + "ab" * 32
CURATOR_IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/acme/nemo-curator@sha256:" + "cd" * 32
KUBECONFIG = {"gpuinfra:kube-prep": {"secure": "v1:UExBQ0VIT0xERVI=:UExBQ0VIT0xERVI="}}
RAY: dict[str, Any] = {
    "engine": "datatrove-ray",
    "image_id": DELETE,
    "ray": {
        "kubeconfig_key": "gpuinfra:kube-prep",
        "image": IMAGE,
        "oidc_provider_arn": "arn:aws:iam::555555555555:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/PREP",
        "karpenter": {"version": "1.14.1", "node_role": "prep-karpenter-node", "discovery_tag": "prep-us-east-1"},
    },
}
POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
RELEASE = "kubernetes:helm.sh/v3:Release"


@pytest.fixture(scope="module")
def graph() -> Graph:
    return graph_for("corpus-prep", RAY, config=KUBECONFIG)


@pytest.fixture(scope="module")
def plan() -> DataprepPlan:
    inputs = inputs_for("corpus-prep", RAY, config=KUBECONFIG)
    found = build_plan(inputs.spec, inputs.org.org, load_catalog())
    assert isinstance(found, DataprepPlan)
    return found


def of(graph: Graph, type_: str) -> dict[str, Resource]:
    return {r.name: r for r in graph.resources if r.type == type_}


def test_the_stack_makes_the_operator_pools_namespace_and_identity(graph: Graph) -> None:
    pools = of(graph, POOL)
    assert set(pools) == {"corpus-prep-system-nodes", "corpus-prep-cpu-nodes", "corpus-prep-cluster-nodes"}
    (release,) = of(graph, RELEASE).values()
    i = release.inputs
    assert (i["chart"], i["version"], i["repositoryOpts"]["repo"]) == (
        "kuberay-operator",
        "1.7.0",
        "https://ray-project.github.io/kuberay-helm/",
    )
    # the operator waits for the pool its pod lands on (its nodeSelector is the pool's node label)
    system = pools["corpus-prep-system-nodes"]
    assert system.urn in release.dependencies
    labels = system.inputs["spec"]["template"]["metadata"]["labels"]
    assert i["values"]["nodeSelector"].items() <= labels.items()
    taints = {(t["key"], t["value"], t["effect"]) for t in system.inputs["spec"]["template"]["spec"]["taints"]}
    assert taints and taints <= {(t["key"], t["value"], t["effect"]) for t in i["values"]["tolerations"]}
    (account,) = of(graph, "kubernetes:core/v1:ServiceAccount").values()
    assert account.inputs["metadata"]["name"] == "corpus-prep"
    (config,) = of(graph, "kubernetes:core/v1:ConfigMap").values()
    assert "from datatrove" in config.inputs["data"]["pipeline.py"]


def test_nodepools_and_node_classes_fit_karpenters_crds(graph: Graph) -> None:
    objects = [*of(graph, POOL).values(), *of(graph, NODE_CLASS).values()]
    assert len(objects) == 4
    assert {r.name: crd_errors(r) for r in objects} == {r.name: [] for r in objects}


def test_a_misspelt_nodepool_field_is_refused_by_the_crd(graph: Graph) -> None:
    pool = of(graph, POOL)["corpus-prep-cpu-nodes"]
    bad = Resource(pool.urn, pool.type, pool.name, inputs={**pool.inputs, "spec": {**pool.inputs["spec"], "limit": {}}})
    assert any("limit" in e for e in crd_errors(bad))


def test_the_operator_values_are_the_charts_own(graph: Graph) -> None:
    """Every value the release sets is a key of the chart's values.yaml at 1.7.0 (watchNamespace is documented
    there commented out), and the operator image is the CRDs' release."""
    path = require(UPSTREAM / "k8s" / "kuberay-v1.7.0" / "values.yaml")
    defaults = yaml.safe_load(path.read_text())
    (release,) = of(graph, RELEASE).values()
    values = release.inputs["values"]
    assert unknown_values({k: v for k, v in values.items() if k != "watchNamespace"}, defaults) == []
    assert "# watchNamespace:" in path.read_text()
    assert defaults["image"]["tag"] == "v" + release.inputs["version"]


def test_the_rayjobs_fit_kuberays_crd_and_land_on_the_pools(graph: Graph, plan: DataprepPlan) -> None:
    jobs = rayjobs()
    assert [j["metadata"]["name"] for j in jobs] == ["corpus-prep"]
    jsonschema.validate(jobs[0], crd_schema("ray.io", "v1", "RayJob"), cls=jsonschema.Draft7Validator)
    cluster = jobs[0]["spec"]["rayClusterSpec"]
    groups = {g["groupName"]: g for g in cluster["workerGroupSpecs"]}
    assert groups["cpu"]["maxReplicas"] == plan.nodes
    # m7i.2xlarge: 8 vCPU, 32 GiB -> 7 CPUs and 28 GiB a worker pod; r7i.8xlarge: 32 vCPU, 256 GiB -> 31 and 230
    assert groups["cpu"]["template"]["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "7", "memory": "28Gi"}
    assert groups["cluster"]["template"]["spec"]["containers"][0]["resources"]["limits"] == {
        "cpu": "31",
        "memory": "230Gi",
    }
    # the one cluster task asks Ray for FineWeb's 8 CPUs x 25 GB (datatrove: mem_per_cpu_gb x cpus x 2**30 bytes);
    # the node's object store (a tenth of 230 GiB) leaves 207 GiB of the pod for it
    store = int(groups["cluster"]["rayStartParams"]["object-store-memory"])
    assert store == (23 * 2**30) and 230 * 2**30 - store >= 8 * 25 * 2**30
    pools = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in of(graph, POOL).values()}
    head = cluster["headGroupSpec"]["template"]["spec"]
    for pod in [head, *(g["template"]["spec"] for g in groups.values())]:
        (pool_name,) = pod["nodeSelector"].values()
        template = pools[pool_name]["template"]
        tolerated = {(t["key"], t["effect"]) for t in pod["tolerations"]}
        assert {(t["key"], t["effect"]) for t in template["spec"]["taints"]} <= tolerated


def rayjobs(spec: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The RayJobs the stack exports (the graph holds no stack outputs: rebuilt from the same spec and plan)."""
    from gpuinfra.pulumi.components.dataprep.ray_nodes import ray_pools
    from gpuinfra.pulumi.components.dataprep.rayjob import ray_jobs

    inputs = inputs_for("corpus-prep", {**RAY, **(spec or {})}, config=KUBECONFIG)
    plan = build_plan(inputs.spec, inputs.org.org, load_catalog())
    assert isinstance(plan, DataprepPlan) and isinstance(inputs.spec, DataprepSpec)
    return ray_jobs(inputs.spec, plan, ray_pools(inputs.spec, plan, load_catalog()))


def test_ray_workers_are_not_billed_through_the_cluster_step(plan: DataprepPlan) -> None:
    """Ray's autoscaler removes idle workers (the RayCluster says idleTimeoutSeconds 60), so while the one cluster
    task runs the workers cost nothing: compute = workers x (wall hours - cluster hours) + the cluster node for its
    hours. (PCS node groups hold their size: there the workers are billed through it.)"""
    cluster = next(s for s in plan.stages if s.serial)
    assert plan.usd_per_node_hour is not None and plan.cluster.usd_per_hour is not None
    workers = plan.usd_per_node_hour * plan.nodes * Decimal(repr(plan.hours - cluster.hours))
    expected = workers + plan.cluster.usd_per_hour * Decimal(repr(cluster.hours))
    assert plan.compute_usd == pytest.approx(expected, rel=Decimal("1e-9"))
    assert rayjobs()[0]["spec"]["rayClusterSpec"]["autoscalerOptions"] == {"idleTimeoutSeconds": 60}


def test_the_plans_quotas_are_the_pools(plan: DataprepPlan) -> None:
    """The on-demand Standard quota counts the system node (m7i.xlarge, 4 vCPUs) and the cluster node (r7i.8xlarge,
    32): 36; the spot one the workers (8 vCPUs each): what the pools' limits allow."""
    codes = {q.code: q.vcpus for q in plan.quotas}
    assert codes["L-1216C47A"] == 4 + 32
    assert codes["L-34B43A08"] == 8 * plan.nodes


def test_the_cpu_pool_is_priced_at_its_limits(graph: Graph, plan: DataprepPlan, catalog: Catalog) -> None:
    """plan.nodes m7i.2xlarge (8 vCPUs) at most: the pool's cpu limit is 8 x nodes, priced at the catalog's spot
    price in us-east-1, in the dataprep account; its 100 GiB gp3 roots too."""
    pool = of(graph, POOL)["corpus-prep-cpu-nodes"]
    assert pool.inputs["spec"]["limits"] == {"cpu": str(8 * plan.nodes)}
    cost = price_graph(graph, catalog).get(f"{POOL}::corpus-prep-cpu-nodes")
    assert cost is not None and (cost.where.region, cost.where.account) == ("us-east-1", "555555555555")
    spot = catalog.on_demand("m7i.2xlarge", "us-east-1")
    assert spot is not None
    per_hour = spot.usd_per_hour * (Decimal(1) - catalog.spot_discount("m7i.2xlarge", "us-east-1").discount)
    instances = next(line for line in cost.lines if line.name.startswith("Instances"))
    assert instances.monthly_max == pytest.approx(plan.nodes * per_hour * HOURS_PER_MONTH, rel=Decimal("1e-6"))
    gp3 = catalog.service("ebs/gp3")
    assert gp3 is not None
    root = next(line for line in cost.lines if line.name.startswith("EBS"))
    assert root.monthly_max == plan.nodes * 100 * gp3.usd


def test_the_pack_counts_the_pools_against_the_accounts_spot_grant(graph: Graph, plan: DataprepPlan) -> None:
    """The example's grant holds the plan (and the pack passes the whole stack); cut the spot grant below the CPU
    pool's vCPUs and the pack refuses it."""
    ok = police(graph, facts_for("corpus-prep", RAY), pack_config())
    assert [v.message for v in ok.violations if v.level == "mandatory"] == []
    # the same graph judged under a smaller grant (the validators would refuse to build it: quota-short)
    small = {"accounts.corpus-prep.quotas.us-east-1.L-34B43A08": 8 * plan.nodes - 8}
    refused = police(graph, facts_for("corpus-prep", RAY, small), pack_config())
    assert any(v.rule == "quota-within-grant" and "L-34B43A08" in v.message for v in refused.violations), [
        (v.rule, v.message) for v in refused.violations
    ]


# ---- the GPU dedup stage (NeMo Curator) -------------------------------------------------------------
GPU_SPEC: dict[str, Any] = {"stages.dedup.accelerator": "gpu", "ray.curator_image": CURATOR_IMAGE}
GPU_ORG: dict[str, Any] = {
    "accounts.corpus-prep.allow_accelerators": True,
    "accounts.corpus-prep.quotas.us-east-1.L-417A185B": 576,  # Running On-Demand P: 3 x p5.48xlarge (192 vCPUs)
    # the budget policy counts every NodePool at its limits for a whole month: 3 p5.48xlarge alone are ~$120,000
    "accounts.corpus-prep.monthly_budget_usd": 140_000,
}


@pytest.fixture(scope="module")
def gpu_graph() -> Graph:
    return graph_for("corpus-prep", {**RAY, **GPU_SPEC}, GPU_ORG, config=KUBECONFIG)


def test_the_gpu_pool_holds_the_planned_p5_nodes_and_fits_the_crd(gpu_graph: Graph) -> None:
    """22.11 TB of text at 8 TB a node (Curator's one-node benchmark): ceil(2.76) = 3 p5.48xlarge, 8 H100 and 192
    vCPUs each; on-demand; no CPU cluster node (connected components run on the GPUs)."""
    pools = of(gpu_graph, POOL)
    assert set(pools) == {"corpus-prep-system-nodes", "corpus-prep-cpu-nodes", "corpus-prep-gpu-nodes"}
    spec = pools["corpus-prep-gpu-nodes"].inputs["spec"]
    assert spec["limits"] == {"cpu": str(3 * 192), "nvidia.com/gpu": str(3 * 8)}
    requirements = {r["key"]: r["values"] for r in spec["template"]["spec"]["requirements"]}
    assert requirements["node.kubernetes.io/instance-type"] == ["p5.48xlarge"]
    assert requirements["karpenter.sh/capacity-type"] == ["on-demand"]
    classes = of(gpu_graph, NODE_CLASS)
    assert classes["corpus-prep-gpu-node-class"].inputs["spec"]["instanceStorePolicy"] == "RAID0"
    objects = [*pools.values(), *classes.values()]
    assert {r.name: crd_errors(r) for r in objects} == {r.name: [] for r in objects}


def test_the_gpu_chain_is_three_rayjobs_each_fitting_the_crd() -> None:
    jobs = rayjobs(GPU_SPEC)
    names = [j["metadata"]["name"] for j in jobs]
    assert names == ["corpus-prep-filter", "corpus-prep-gpu-dedup", "corpus-prep-tokenize"]
    schema = crd_schema("ray.io", "v1", "RayJob")
    for job in jobs:
        jsonschema.validate(job, schema, cls=jsonschema.Draft7Validator)
    entrypoints = [j["spec"]["entrypoint"] for j in jobs]
    assert entrypoints == [
        "python /home/ray/pipeline/pipeline.py ray filter",
        "python /home/ray/pipeline/curator_dedup.py",
        "python /home/ray/pipeline/pipeline.py ray tokenize",
    ]
    (gpu,) = jobs[1]["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    pod = gpu["template"]["spec"]
    assert pod["containers"][0]["image"] == CURATOR_IMAGE
    # p5.48xlarge: 192 vCPUs, 2,048 GiB, 8 GPUs -> 191 CPUs, 1,843 GiB and the 8 GPUs a pod
    assert pod["containers"][0]["resources"]["limits"] == {"cpu": "191", "memory": "1843Gi", "nvidia.com/gpu": "8"}
    assert {t["key"] for t in pod["tolerations"]} == {"gpuinfra.io/dataprep", "nvidia.com/gpu"}
    assert gpu["maxReplicas"] == 3


def test_the_gpu_stage_is_planned_from_curators_throughput(catalog: Catalog) -> None:
    """By hand: text = 60 TB x 0.52/2.8/0.504 = 22.109 TB; 8 TB in 2.05 h on one node is 3.902 TB a node-hour;
    3 nodes take 22.109 / 3.902 / 3 = 1.889 h, at the catalog's p5.48xlarge on-demand price."""
    inputs = inputs_for("corpus-prep", {**RAY, **GPU_SPEC}, GPU_ORG, config=KUBECONFIG)
    plan = build_plan(inputs.spec, inputs.org.org, load_catalog())
    assert isinstance(plan, DataprepPlan)
    text = 60 * 0.52 / 2.8 / 0.504
    stages = {s.stage: s for s in plan.stages}
    assert "minhash-cluster" not in stages and plan.cluster.instance_type is None
    gpu = stages["curator-fuzzy-dedup"]
    assert (gpu.accelerated, gpu.tasks, plan.gpu_nodes) == (True, 3, 3)
    assert gpu.core_hours == pytest.approx(text * 2.05 / 8, rel=1e-9)
    assert gpu.hours == pytest.approx(text * 2.05 / 8 / 3, rel=1e-9) == pytest.approx(1.889, abs=0.001)
    # Curator's CPU removal runs in the same RayJob, on the 3 x 192 CPUs of the GPU nodes, at FineWeb's dedup
    # filter allowance (1000 tasks x 5 h per dump: 5,000 core-hours)
    removal = stages["curator-removal"]
    assert removal.accelerated and removal.core_hours == pytest.approx(5000, rel=1e-9)
    assert removal.hours == pytest.approx(5000 / (3 * 192), rel=1e-9)
    assert plan.gpu_hours == pytest.approx(gpu.hours + removal.hours, rel=1e-9)
    assert plan.serial_hours == plan.gpu_hours  # more CPU workers cannot shorten what runs on the GPU nodes
    p5 = catalog.on_demand("p5.48xlarge", "us-east-1")
    assert p5 is not None and plan.gpu_usd_per_node_hour == p5.usd_per_hour
    # the compute cost splits into the workers (all but the GPU stage), and the GPU nodes for the GPU stage
    assert plan.usd_per_node_hour is not None and plan.compute_usd is not None
    workers = plan.usd_per_node_hour * plan.nodes * Decimal(repr(plan.hours - plan.gpu_hours))
    gpus = p5.usd_per_hour * 3 * Decimal(repr(plan.gpu_hours))
    assert plan.compute_usd == pytest.approx(workers + gpus, rel=Decimal("1e-9"))
    # the P quota counts the three nodes
    assert any(q.code == "L-417A185B" and q.vcpus == 3 * 192 for q in plan.quotas)


def test_a_gpu_pool_is_refused_in_an_account_not_allowed_gpus(gpu_graph: Graph) -> None:
    allowed = police(gpu_graph, facts_for("corpus-prep", {**RAY, **GPU_SPEC}, GPU_ORG), pack_config())
    assert [v.message for v in allowed.violations if v.level == "mandatory"] == []
    denied_org = {**GPU_ORG, "accounts.corpus-prep.allow_accelerators": False}
    denied = police(gpu_graph, facts_for("corpus-prep", {**RAY, **GPU_SPEC}, denied_org), pack_config())
    found = [v.message for v in denied.violations if v.rule == "dataprep-no-accelerators"]
    assert found and all("p5.48xlarge" in m and "allow_accelerators" in m for m in found), found


CURATOR_API = {
    "FuzzyDeduplicationWorkflow": {
        "cache_path", "output_path", "input_path", "input_filetype", "input_blocksize", "input_file_extensions",
        "read_kwargs", "cache_kwargs", "write_kwargs", "text_field", "perform_removal", "seed", "char_ngrams",
        "num_bands", "minhashes_per_band", "use_64_bit_hash", "normalize_text", "bands_per_iteration",
        "lsh_num_output_partitions", "lsh_rmm_pool_size", "lsh_spill_memory_limit", "env_vars", "use_async_memory",
    },
    "TextDuplicatesRemovalWorkflow": {
        "input_path", "ids_to_remove_path", "output_path", "input_filetype", "input_fields", "id_field",
        "input_files_per_partition", "input_blocksize", "input_file_extensions", "input_task_limit", "input_kwargs",
        "duplicate_id_field", "duplicate_id_read_kwargs", "id_generator_path", "id_generator_storage_options",
        "output_file_extension", "output_filetype", "output_kwargs", "output_fields", "output_mode", "drop_id_field",
    },
}  # fmt: skip
"""The keyword parameters of NeMo Curator 1.4.0 (the wheel on PyPI): FuzzyDeduplicationWorkflow.__init__ in
nemo_curator/stages/deduplication/fuzzy/workflow.py, the TextDuplicatesRemovalWorkflow dataclass fields in
nemo_curator/stages/text/deduplication/removal_workflow.py, copied by hand."""


def test_the_curator_program_calls_curators_api_with_the_specs_bands() -> None:
    """The rendered program compiles, calls each workflow with keywords Curator 1.4.0 takes (and every required
    one), reads the filter stage's gzipped JSONL and writes where datatrove's tokenize stage reads."""
    import ast

    from gpuinfra.pulumi.components.dataprep.pipeline import CURATOR_OUT, curator_settings, render_curator
    from gpuinfra.pulumi.components.dataprep.stack import cluster_where

    inputs = inputs_for("corpus-prep", {**RAY, **GPU_SPEC}, GPU_ORG, config=KUBECONFIG)
    spec = inputs.spec
    assert isinstance(spec, DataprepSpec)
    text = render_curator(spec, cluster_where(spec))
    tree = ast.parse(text)
    calls = {
        node.func.id: {k.arg for k in node.keywords}
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in CURATOR_API
    }
    assert set(calls) == set(CURATOR_API)
    for name, used in calls.items():
        assert used <= CURATOR_API[name], used - CURATOR_API[name]
    assert {"cache_path", "output_path", "input_path"} <= calls["FuzzyDeduplicationWorkflow"]
    assert {"input_path", "ids_to_remove_path", "output_path"} <= calls["TextDuplicatesRemovalWorkflow"]
    s = curator_settings(spec, cluster_where(spec))
    assert (s["num_bands"], s["minhashes_per_band"], s["use_64_bit_hash"]) == (14, 8, True)
    assert s["input"] == "s3://acme-corpus-scratch/cc-2024-51/filtered/" and s["extensions"] == [".jsonl.gz"]
    assert s["output"] == "s3://acme-corpus-scratch/cc-2024-51/" + CURATOR_OUT
