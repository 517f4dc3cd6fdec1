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
from gpuinfra.spec import DataprepSpec
from gpuinfra.policy.pack import pack_config, police
from helpers import DELETE, graph_for, inputs_for
from policy_helpers import facts_for
from preflight.upstream import UPSTREAM, crd_schema, require, unknown_values

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


def crd_errors(resource: Resource) -> list[str]:
    group_version, kind = resource.type.removeprefix("kubernetes:").split(":")
    group, version = group_version.split("/")
    obj = {"apiVersion": group_version, "kind": kind, **resource.inputs}
    validator = jsonschema.Draft7Validator(crd_schema(group, version, kind))
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(obj)]


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
    pools = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in of(graph, POOL).values()}
    head = cluster["headGroupSpec"]["template"]["spec"]
    for pod in [head, *(g["template"]["spec"] for g in groups.values())]:
        (pool_name,) = pod["nodeSelector"].values()
        template = pools[pool_name]["template"]
        tolerated = {(t["key"], t["effect"]) for t in pod.get("tolerations", [])}
        assert {(t["key"], t["effect"]) for t in template["spec"].get("taints", [])} <= tolerated


def rayjobs(spec: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The RayJobs the stack exports (the graph holds no stack outputs: rebuilt from the same spec and plan)."""
    from gpuinfra.pulumi.components.dataprep.ray_nodes import ray_pools
    from gpuinfra.pulumi.components.dataprep.rayjob import ray_jobs

    inputs = inputs_for("corpus-prep", {**RAY, **(spec or {})}, config=KUBECONFIG)
    plan = build_plan(inputs.spec, inputs.org.org, load_catalog())
    assert isinstance(plan, DataprepPlan) and isinstance(inputs.spec, DataprepSpec)
    return ray_jobs(inputs.spec, plan, ray_pools(inputs.spec, plan, load_catalog()))


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
    assert any(v.policy == "quota-within-grant" and "L-34B43A08" in v.message for v in refused.violations), [
        (v.policy, v.message) for v in refused.violations
    ]
