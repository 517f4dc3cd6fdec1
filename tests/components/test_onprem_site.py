"""On premises the cluster is shared: the stack creates only its team's objects (namespace, queues, node labels,
job template, pruner) and requests the fabric as the site's RDMA plugin advertises it. It installs no Helm release
and nothing in another namespace (review finding 8: a second install of Kueue/JobSet fails on the release names,
and a first one replaces the site's one Kueue Configuration for every team)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpuinfra.graph import Graph
from gpuinfra.plan.site import JOBSET_MINIMUM, KUEUE_MINIMUM, RDMA_PLUGIN_MINIMUM
from gpuinfra.spec.org import release_tuple
from helpers import example_graph, graph_for

ROOT = Path(__file__).resolve().parents[2]
CLUSTER_SCOPED = {
    "Namespace",
    "NodePatch",
    "ResourceFlavor",
    "ClusterQueue",
    "Topology",
    "ClusterRole",
    "ClusterRoleBinding",
}


@pytest.fixture(scope="module")
def onprem() -> Graph:
    return example_graph("llm-train-onprem")


def kind(type_: str) -> str:
    return type_.rsplit(":", 1)[-1]


def jobset_pods(graph: Graph) -> list[dict[str, Any]]:
    (config,) = [c for c in graph.of_type("kubernetes:core/v1:ConfigMap") if "jobset.yaml" in c.inputs["data"]]
    jobset = yaml.safe_load(config.inputs["data"]["jobset.yaml"])
    return [job["template"]["spec"]["template"]["spec"] for job in jobset["spec"]["replicatedJobs"]]


def test_the_stack_installs_nothing_cluster_wide(onprem: Graph) -> None:
    k8s = [r for r in onprem.resources if r.custom and r.type.startswith("kubernetes:")]
    assert k8s and not [r for r in k8s if r.type == "kubernetes:helm.sh/v3:Release"]
    assert not [r for r in k8s if kind(r.type) in ("DaemonSet", "Deployment")]
    # The one cluster-wide grant: the GPU remediation's (training/remediator.py), named for this cluster, nodes only
    # (nodes are cluster-scoped: no Role can grant them); it collides with nothing of the site's or another team's.
    roles = [r for r in k8s if kind(r.type) == "ClusterRole"]
    assert [(r.inputs["metadata"]["name"], r.inputs["rules"]) for r in roles] == [
        (
            "llm-train-dc-gpu-remediation",
            [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "patch"]}],
        )
    ]
    for r in k8s:
        meta = r.inputs.get("metadata", {})
        if kind(r.type) in CLUSTER_SCOPED:
            name = meta["name"]
            # cluster-scoped names are the team's own: its namespace, its inventory's nodes, its cluster's queues
            assert kind(r.type) in ("Namespace", "NodePatch") or name.startswith("llm-train-dc"), (r.type, name)
        else:
            assert meta.get("namespace") == "training", (r.type, meta)


def test_pods_request_the_fabric_resource_the_site_declares() -> None:
    graph = graph_for(
        "llm-train-onprem", org={"onprem_sites.dc-east.components.rdma_shared_device_plugin.resource": "rdma/rails"}
    )
    for pod in jobset_pods(graph):
        (trainer,) = [c for c in pod["containers"] if c["name"] == "trainer"]
        assert trainer["resources"]["requests"]["rdma/rails"] == 1 and "rdma/ib" not in trainer["resources"]["requests"]
    (queue,) = graph.of_type("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")
    assert "rdma/rails" in queue.inputs["spec"]["resourceGroups"][0]["coveredResources"]


def test_the_example_site_and_the_docs_install_what_the_stack_needs() -> None:
    from gpuinfra.catalog.pins import CHARTS, IMAGES

    site = yaml.safe_load((ROOT / "stacks/org.yaml").read_text())["onprem_sites"]["dc-east"]["components"]
    docs = (ROOT / "docs/training.md").read_text()
    section = docs[docs.index("**Site prerequisites") :]
    installs = dict(re.findall(r"helm (?:upgrade --install|install) (\S+) \S+ --version (\S+)", section))
    # The docs install the charts at the pins the EKS stack installs (one version to verify), which the example
    # site declares, and which meet the minimums the validator asks for.
    assert installs == {"kueue": CHARTS["kueue"].version, "jobset": CHARTS["jobset"].version}
    assert site["kueue"]["version"] == installs["kueue"] and site["jobset"]["version"] == installs["jobset"]
    assert release_tuple(installs["kueue"]) >= release_tuple(KUEUE_MINIMUM)
    assert release_tuple(installs["jobset"]) >= release_tuple(JOBSET_MINIMUM)
    rdma = IMAGES["rdma-shared-dev-plugin"].version
    assert site["rdma_shared_device_plugin"]["version"] == rdma
    kustomization = yaml.safe_load(re.search(r"```yaml\n(resources:.*?)```", section, re.S).group(1))  # type: ignore[union-attr]
    assert kustomization["resources"][0].endswith(f"?ref={rdma}")
    assert kustomization["images"] == [{"name": "ghcr.io/mellanox/k8s-rdma-shared-dev-plugin", "newTag": rdma}]
    assert release_tuple(rdma) >= release_tuple(RDMA_PLUGIN_MINIMUM)


def test_the_documented_rdma_config_hands_out_the_compute_rails_only() -> None:
    """The config the docs give the site, judged by the plugin's own config types at v1.5.2 (../shared facts)."""
    import json

    from preflight.upstream import UPSTREAM, require

    docs = (ROOT / "docs/training.md").read_text()
    config = json.loads(re.search(r"```json\n(.*?)```", docs[docs.index("**Site prerequisites") :], re.S).group(1))  # type: ignore[union-attr]
    facts = json.loads(require(UPSTREAM / "k8s/rdma-shared-dev-plugin-v1.5.2/facts.json").read_text())
    assert set(config) <= set(facts["UserConfigList"])
    (resource,) = config["configList"]
    assert set(resource) <= set(facts["UserConfig"]) and set(resource["selectors"]) <= set(facts["Selectors"])
    site = yaml.safe_load((ROOT / "stacks/org.yaml").read_text())["onprem_sites"]["dc-east"]["components"]
    assert f"{resource['resourcePrefix']}/{resource['resourceName']}" == site["rdma_shared_device_plugin"]["resource"]
    # selectors are ANDed: InfiniBand link AND one of the example's compute rails (its interconnect.netdevs)
    stack = yaml.safe_load((ROOT / "stacks/Pulumi.llm-train-onprem.yaml").read_text())
    assert resource["selectors"] == {
        "linkTypes": ["infiniband"],
        "ifNames": stack["config"]["gpuinfra:training"]["interconnect"]["netdevs"],
    }


def test_pods_are_sized_from_the_allocatable_the_site_declares() -> None:
    """Review finding 18: a site kubelet's reservations are its own. Declared allocatable 216,000m CPU and
    1,900,000 MiB, less the room the plan keeps for node daemons (2 cores, 8 GiB: plan/jobs.py, an estimate),
    in whole cores and GiB: 214 CPUs and floor((1,900,000 - 8,192) / 1,024) x 1,024 = 1,891,328 MiB."""
    graph = graph_for(
        "llm-train-onprem",
        org={"onprem_sites.dc-east.node_allocatable": {"cpu_millicores": 216000, "memory_mib": 1_900_000}},
    )
    for pod in jobset_pods(graph):
        (trainer,) = [c for c in pod["containers"] if c["name"] == "trainer"]
        assert trainer["resources"]["requests"]["cpu"] == "214"
        assert trainer["resources"]["requests"]["memory"] == "1891328Mi"
    (queue,) = graph.of_type("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")
    quotas = {
        q["name"]: q["nominalQuota"] for q in queue.inputs["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    }
    assert quotas["cpu"] == str(214 * 32) and quotas["memory"] == f"{1891328 * 32}Mi"
