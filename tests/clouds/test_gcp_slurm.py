"""The managed Slurm path on Google Cloud (scheduler slurm: Cluster Director, hypercomputecluster.Cluster):
llm-train-gcp-slurm previews, passes preflight and the pack and is priced (figures by hand from
clouds/gcp/catalog/data/training.yaml); the cluster is the arguments the hypercomputecluster v1 API takes, on the
stack's own network and storage; what the API has no field for is refused by name; preflight refuses what Google
would."""

from __future__ import annotations

from decimal import Decimal

import gpuinfra.spec  # noqa: F401  (first: importing Google's spec models before it drops them from the org's accounts)
import pytest
from gpuinfra.clouds import CLOUDS
from gpuinfra.validators import Level
from helpers import DELETE, checked, example_graph, graph_for, planted_google_check

STACK = "llm-train-gcp-slurm"
CLUSTER = "llm-train-gcp-slurm-slurm"
CLUSTER_TYPE = "gcp:hypercomputecluster/cluster:Cluster"
HOURS = Decimal(730)
SPOT_VM = Decimal("3.74713") + Decimal("37.2472")
"""One Spot a3-ultragpu-8g in us-central1: host plus eight H200 (skypilot-gcp-vms)."""
LOGIN = Decimal("0.388472")
"""One n2-standard-8 in us-central1 on demand (cyclenerd-gcp-pricing, fd66b26: compute.instance.n2-standard-8)."""


@pytest.fixture(scope="module")
def report() -> object:
    from gpuinfra.commands.preview import preview_stacks

    found = preview_stacks([STACK])
    assert found.stacks, found
    return found.stacks[0]  # type: ignore[attr-defined]


def _cluster(graph: object = None) -> dict[str, object]:
    graph = graph or example_graph(STACK)
    return next(r for r in graph.resources if r.name == CLUSTER).inputs  # type: ignore[attr-defined]


def test_the_example_previews_passes_preflight_and_the_pack(report: object) -> None:
    assert [f for f in report.findings if f.level == "error"] == []  # type: ignore[attr-defined]
    assert [p for p in report.preflight if p.level in ("error", "info")] == []  # type: ignore[attr-defined]
    policy = report.policy  # type: ignore[attr-defined]
    assert policy is not None and policy.violations == []
    passed = {p.name for p in policy.policies if p.status == "passed"}
    assert {"quota-gcp-slurm-bounded", "separation-gcp-edges", "unrecognised-resource"} <= passed
    assert "budget-within-account" in passed


def test_the_cluster_is_priced_node_by_node(report: object) -> None:
    """2 Spot a3-ultragpu-8g and one n2-standard-8 login node a month; the controller unknown, never zero."""
    cost = report.cost  # type: ignore[attr-defined]
    gpu, login, controller = next(r for r in cost.resources if r.name == CLUSTER).lines
    assert gpu.monthly_usd == 2 * SPOT_VM * HOURS and gpu.sources == ["skypilot-gcp-vms"]
    assert login.monthly_usd == LOGIN * HOURS and login.sources == ["cyclenerd-gcp-pricing"]
    assert controller.monthly_usd is None and "not-in-catalog" in controller.flags
    assert "gcp:hypercomputecluster/cluster:Cluster: Slurm controller" in CLOUDS["gcp"].accepted_unpriced
    nat = next(r for r in cost.resources if r.name == "llm-train-gcp-slurm-nat")
    gateway = next(line for line in nat.lines if line.name.startswith("NAT gateway"))
    assert gateway.quantity == 2 + 1  # the GPU nodes and the login node reach out through the NAT


def test_the_cluster_is_on_the_stacks_own_network_and_storage() -> None:
    resources = {r.name: r for r in example_graph(STACK).resources}
    p = _cluster()
    subnet = resources["llm-train-gcp-slurm-sub-0"]
    (network,) = p["networkResources"]  # type: ignore[misc]
    assert network["config"]["existingNetwork"]["network"] == subnet.inputs["network"]
    assert p["location"] == "us-central1" and p["clusterId"] == "llmslurm"
    # one network only: no RoCE VPC, no second gVNIC network (Cluster Director could attach neither)
    assert not [r for r in resources.values() if r.type == "gcp:compute/network:Network" and r.name.endswith("-1")]
    assert not [r for r in resources.values() if "rdma" in r.name]
    storage = {s["id"]: s["config"] for s in p["storageResources"]}  # type: ignore[attr-defined]
    assert set(storage) == {"home", "lustre", "data", "checkpoints"}
    assert set(storage["home"]) == {"existingFilestore"} and set(storage["lustre"]) == {"existingLustre"}
    assert storage["data"]["existingBucket"]["bucket"] == "acme-pretrain-data-gcp-slurm"
    assert resources["llm-train-gcp-slurm-lustre"].inputs["gkeSupportEnabled"] is False
    lustre_and_home = {resources["llm-train-gcp-slurm-lustre"].urn, resources["llm-train-gcp-slurm-home"].urn}
    assert lustre_and_home <= set(resources[CLUSTER].dependencies)


def test_the_nodeset_partition_and_login_nodes() -> None:
    slurm = _cluster()["orchestrator"]["slurm"]  # type: ignore[index]
    (nodeset,) = slurm["nodeSets"]
    assert (nodeset["id"], nodeset["computeId"], nodeset["staticNodeCount"]) == ("h200", "gpu", "2")
    disk = nodeset["computeInstance"]["bootDisk"]
    assert disk == {
        "type": "projects/acme-train-prod/zones/us-central1-b/diskTypes/hyperdisk-balanced",
        "sizeGb": "500",
    }
    mounts = {m["id"]: m["localMount"] for m in nodeset["storageConfigs"]}
    assert mounts == {"home": "/home", "lustre": "/lustre", "data": "/gcs", "checkpoints": "/gcs-checkpoints"}
    assert slurm["partitions"] == [{"id": "train", "nodeSetIds": ["h200"]}]
    login = slurm["loginNodes"]
    assert (login["machineType"], login["count"], login["zone"]) == ("n2-standard-8", "1", "us-central1-b")
    assert login["enableOsLogin"] is True and login["enablePublicIps"] is True
    assert "/etc/profile.d/gpuinfra-checkpoint.sh" in login["startupScript"]
    assert len(slurm["prologBashScripts"]) == 1 and "mountpoint -q" in slurm["prologBashScripts"][0]
    assert len(slurm["epilogBashScripts"]) == 1


def test_ssh_reaches_the_login_nodes_from_the_public_cidrs_only() -> None:
    resources = {r.name: r for r in example_graph(STACK).resources}
    rule = resources["llm-train-gcp-slurm-login-ssh"].inputs
    assert rule["sourceRanges"] == ["203.0.113.0/24"] and rule["allows"] == [{"protocol": "tcp", "ports": ["22"]}]
    private = graph_for(STACK, {"scheduler.api_access.public_cidrs": []})
    assert not [r for r in private.resources if r.name.endswith("-login-ssh")]
    assert _cluster(private)["orchestrator"]["slurm"]["loginNodes"]["enablePublicIps"] is False  # type: ignore[index]


@pytest.mark.parametrize(
    ("capacity", "config"),
    [
        (
            {"spot": True},
            {
                "newSpotInstances": {
                    "machineType": "a3-ultragpu-8g",
                    "zone": "us-central1-b",
                    "terminationAction": "DELETE",
                }
            },
        ),
        (
            {"reservation": "acme-h200-train"},
            {
                "newReservedInstances": {
                    "reservation": "projects/acme-train-prod/zones/us-central1-b/reservations/acme-h200-train"
                }
            },
        ),
        (  # 168 hours: seven days of 3,600 s
            {"flex_start": True, "max_run_hours": 168},
            {
                "newFlexStartInstances": {
                    "machineType": "a3-ultragpu-8g",
                    "zone": "us-central1-b",
                    "maxDuration": "604800s",
                }
            },
        ),
        ({}, {"newOnDemandInstances": {"machineType": "a3-ultragpu-8g", "zone": "us-central1-b"}}),
    ],
)
def test_capacity_is_bought_as_the_spec_says(capacity: dict[str, object], config: dict[str, object]) -> None:
    on_demand = {"accounts.gcp-research.quotas.us-central1.NVIDIA_H200_GPUS": 16}  # on-demand H200s need quota
    graph = graph_for(STACK, {"compute.capacity": capacity}, on_demand)
    (compute,) = _cluster(graph)["computeResources"]  # type: ignore[misc]
    assert compute == {"id": "gpu", "config": config}


def test_a_reserved_nodeset_is_priced_from_its_machine_label() -> None:
    """A reserved-instances config names no machine type: the nodeset's label carries it to the cost preview,
    which bills reserved VMs at on-demand rates (12.266 + 74.49392 an hour, us-central1)."""
    from gpuinfra.clouds.gcp.cost.slurm import nodesets

    inputs = _cluster(graph_for(STACK, {"compute.capacity": {"reservation": "acme-h200-train"}}))
    assert nodesets(inputs) == [("a3-ultragpu-8g", "on_demand", 2, 2)]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("mutation", "rule"),
    [
        ({"network.roce_vpc": True}, "gcp-slurm-roce-vpc"),
        ({"compute.placement": "compact"}, "gcp-slurm-placement"),
        ({"compute.capacity": {"reservation": "acme-h200-train/reservationBlocks/b1"}}, "gcp-slurm-reservation-block"),
        ({"job": {"image": "nvcr.io/nvidia/pytorch:25.01-py3", "script": "train.py"}}, "gcp-slurm-job-template"),
        ({"scheduler.slurm": DELETE}, "gcp-slurm-settings"),
    ],
)
def test_what_the_api_has_no_field_for_is_refused_by_name(mutation: dict[str, object], rule: str) -> None:
    found = [f for f in checked(STACK, mutation).findings if f.level >= Level.ERROR]
    assert rule in {f.rule for f in found}, [f.rule for f in found]


def test_the_example_has_no_slurm_finding_and_roce_is_not_asked_of_it() -> None:
    rules = {f.rule for f in checked(STACK).findings}
    assert not {r for r in rules if r.startswith("gcp-slurm")} and "gcp-rdma-without-roce" not in rules
    assert "gcp-slurm-placement" not in {
        f.rule
        for f in checked(STACK, {"compute.capacity": {"reservation": "r1"}, "compute.placement": "compact"}).findings
    }


def _planted(path: tuple[object, ...], value: object) -> list[object]:
    return planted_google_check(STACK, CLUSTER, path, value)


SLURM = ("orchestrator", "slurm")


@pytest.mark.parametrize(
    ("path", "value", "where", "says"),
    [
        (
            ("computeResources", 0, "config", "newSpotInstances", "terminationAction"),
            "KILL",
            "terminationAction",
            "STOP, DELETE",
        ),
        ((*SLURM, "loginNodes", "machineType"), "n2-standard-64", "loginNodes.machineType", "32 vCPUs"),
        ((*SLURM, "loginNodes", "bootDisk", "sizeGb"), "20", "bootDisk.sizeGb", "at least 40"),
        ((*SLURM, "nodeSets", 0, "id"), "h200nodesforthepretrainrun", "nodeSets[0].id", "up to 14"),
        ((*SLURM, "partitions", 0, "nodeSetIds"), ["a100"], "partitions[0].nodeSetIds", "names a nodeset"),
        ((*SLURM, "nodeSets", 0, "storageConfigs", 0, "id"), "scratch", "storageConfigs[0].id", "storage resource"),
        ((*SLURM, "prologBashScripts"), [" "], "prologBashScripts[0]", "not empty"),
        (("clusterId",), "llm-train-gcp", "clusterId", "at most 10"),
        (
            ("storageResources", 2, "config"),
            {"newBucket": {"bucket": "b", "storageClass": "HOT"}},
            "storageClass",
            "STANDARD",
        ),
    ],
)
def test_preflight_refuses_what_google_would(path: tuple[object, ...], value: object, where: str, says: str) -> None:
    found = [f for f in _planted(path, value) if where in f.path]  # type: ignore[attr-defined]
    assert found, _planted(path, value)
    assert found[0].rule == "PF-GCP-API" and says in found[0].message  # type: ignore[attr-defined]


def test_two_networks_are_refused_as_the_api_takes_exactly_one() -> None:
    networks = _cluster()["networkResources"]
    (finding,) = _planted(("networkResources",), [*networks, {**networks[0], "id": "net2"}])  # type: ignore[list-item]
    assert finding.path == "networkResources" and "exactly one" in finding.message  # type: ignore[attr-defined]


def test_the_example_cluster_passes_preflight_by_the_discovery_document() -> None:
    from gpuinfra.clouds.gcp.preflight.discovery import check, judges

    graph = example_graph(STACK)
    google = [r for r in graph.resources if r.type.startswith("gcp:")]
    assert all(judges(r.type) for r in google)
    assert [f for r in google for f in check(r, graph)] == []


@pytest.mark.parametrize(
    ("type_token", "path", "effect", "why"),
    [
        # file v1: Instance.protocol "Immutable. The protocol ..."; FileShareConfig.name "... Immutable."
        ("gcp:filestore/instance:Instance", "protocol", "replace", "Instance.protocol is Immutable"),
        ("gcp:filestore/instance:Instance", "fileShares.name", "replace", "FileShareConfig.name is Immutable"),
        ("gcp:filestore/instance:Instance", "fileShares.capacityGb", "update", None),
        ("gcp:filestore/instance:Instance", "location", "replace", "part of a projects.locations.instances"),
        # hypercomputecluster v1: ComputeResource.config "Required. Immutable."; counts are not marked
        (CLUSTER_TYPE, "computeResources[0].config.newSpotInstances.machineType", "replace", "ComputeResource.config"),
        (CLUSTER_TYPE, "orchestrator.slurm.nodeSets[0].staticNodeCount", "update", None),
        (CLUSTER_TYPE, "clusterId", "replace", "part of a projects.locations.clusters"),
        (CLUSTER_TYPE, "labels.team", "update", None),
    ],
)
def test_replacements_are_read_from_the_discovery_documents(
    type_token: str, path: str, effect: str, why: str | None
) -> None:
    from gpuinfra.review.effects import replacements

    found, source = replacements().effect(type_token, path, "a", "b", {})
    assert found == effect
    assert (source is None) if why is None else (why in str(source) and "v1 Discovery document" in str(source))
