"""/home on Filestore for a Google training cluster: the tiers' capacities follow Google's Service tiers page, a
capacity off its tier's steps and a basic tier's long share name are refused by name, the instance is on the
nodes' network over private services access and exported to the node subnet alone, GKE's trainers mount it
through the Filestore CSI driver, preflight holds it to the file v1 Discovery document, and its price is unknown,
never zero (no dated source carries one)."""

from __future__ import annotations

import gpuinfra.spec  # noqa: F401  (first: importing Google's spec models before it drops them from the org's accounts)
import pytest
import yaml
from gpuinfra.clouds import CLOUDS
from gpuinfra.clouds.gcp.catalog.filestore import filestore_book
from gpuinfra.validators import Level
from helpers import DELETE, checked, example_graph, graph_for, planted_google_check

STACK = "llm-train-gcp"


def _by_name(stack: str = STACK) -> dict[str, object]:
    return {r.name: r for r in example_graph(stack).resources}


def test_the_tiers_follow_googles_service_tiers_page() -> None:
    """Zonal: 1 TiB to 9.75 TiB in 256 GiB units, 10 TiB to 100 TiB in 2.5 TiB units; Basic SSD from 2.5 TiB, in
    1 GiB units (cloud.google.com/filestore/docs/service-tiers)."""
    zonal = filestore_book().tiers["ZONAL"]
    assert zonal.allows(1024) and zonal.allows(1024 + 256) and zonal.allows(9984)
    assert not zonal.allows(1024 + 100) and not zonal.allows(10000) and not zonal.allows(9984 + 128)
    assert zonal.allows(10240) and zonal.allows(10240 + 2560) and zonal.allows(102400)
    assert not zonal.allows(10240 + 256)
    assert zonal.nearest(10000) == 10240 and zonal.nearest(1100) == 1280 and zonal.nearest(12000) == 12800
    assert zonal.location == "zone" and filestore_book().tiers["REGIONAL"].location == "region"
    ssd = filestore_book().tiers["BASIC_SSD"]
    assert not ssd.allows(2048) and ssd.allows(2561) and ssd.nearest(1024) == 2560


@pytest.mark.parametrize(
    ("mutation", "rule", "path", "hint"),
    [
        ({"filestore.capacity_gib": 10000}, "gcp-filestore-capacity-off-tier", "capacity_gib", "`capacity_gib: 10240`"),
        ({"filestore.capacity_gib": 1100}, "gcp-filestore-capacity-off-tier", "capacity_gib", "`capacity_gib: 1280`"),
        (
            {"filestore.tier": "BASIC_SSD", "filestore.capacity_gib": 2048},
            "gcp-filestore-capacity-off-tier",
            "capacity_gib",
            "`capacity_gib: 2560`",
        ),
        (
            {"filestore.tier": "BASIC_HDD", "filestore.share": "home_directories"},  # 16: the basic tiers' most
            None,
            None,
            None,
        ),
        (
            {"filestore.tier": "BASIC_HDD", "filestore.share": "home_directories1"},  # 17 characters
            "gcp-filestore-share-name",
            "share",
            "at most 16 characters",
        ),
    ],
)
def test_planted_faults_are_refused_by_name(
    mutation: dict[str, object], rule: str | None, path: str | None, hint: str | None
) -> None:
    errors = [f for f in checked(STACK, mutation).findings if f.level >= Level.ERROR]
    mine = [f for f in errors if f.rule.startswith("gcp-filestore")]
    if rule is None:
        assert mine == []
        return
    (found,) = mine
    assert found.rule == rule and found.path == ("filestore", path)
    assert hint in str(found.hint)


def test_the_example_has_no_filestore_finding() -> None:
    assert not [f for f in checked(STACK).findings if f.rule.startswith("gcp-filestore")]


def test_the_instance_is_on_the_node_network_over_private_services_access() -> None:
    resources = _by_name()
    home = resources["llm-train-gcp-home"]
    p = home.inputs  # type: ignore[attr-defined]
    assert (p["tier"], p["location"], p["protocol"]) == ("ZONAL", "us-central1-b", "NFS_V3")
    assert p["fileShares"]["name"] == "home" and p["fileShares"]["capacityGb"] == 2560
    # exported read-write, root kept, to the first /20 of network.cidr 10.128.0.0/16 (the node subnet) only
    assert p["fileShares"]["nfsExportOptions"] == [
        {"ipRanges": ["10.128.0.0/20"], "accessMode": "READ_WRITE", "squashMode": "NO_ROOT_SQUASH"}
    ]
    (network,) = p["networks"]
    assert network["connectMode"] == "PRIVATE_SERVICE_ACCESS"
    assert network["reservedIpRange"] == resources["llm-train-gcp-psa"].inputs["name"]  # type: ignore[attr-defined]
    system = resources["llm-train-gcp-sub-0"].inputs["network"]  # type: ignore[attr-defined]
    assert network["network"] == system.rsplit("/", 1)[-1]  # the network's name (file v1 NetworkConfig.network)
    assert resources["llm-train-gcp-psa-peering"].urn in home.dependencies  # type: ignore[attr-defined]
    assert p["deletionProtectionEnabled"] is True


def test_gke_trainers_mount_home_through_the_filestore_csi_driver() -> None:
    resources = _by_name()
    gke = resources["llm-train-gcp-gke"].inputs  # type: ignore[attr-defined]
    assert gke["addonsConfig"]["gcpFilestoreCsiDriverConfig"] == {"enabled": True}
    pv = resources["llm-train-gcp-home-pv"].inputs["spec"]  # type: ignore[attr-defined]
    assert pv["csi"]["driver"] == "filestore.csi.storage.gke.io"
    assert pv["csi"]["volumeHandle"] == "modeInstance/us-central1-b/llm-train-gcp-home/home"
    assert pv["csi"]["volumeAttributes"]["volume"] == "home"
    assert (pv["capacity"], pv["accessModes"], pv["storageClassName"]) == ({"storage": "2560Gi"}, ["ReadWriteMany"], "")
    claim = resources["llm-train-gcp-home-pvc"].inputs  # type: ignore[attr-defined]
    assert claim["metadata"]["namespace"] == "training" and claim["spec"]["volumeName"] == "llm-train-gcp-home"
    jobset = yaml.safe_load(resources["llm-train-gcp-job-template"].inputs["data"]["jobset.yaml"])  # type: ignore[attr-defined]
    pod = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert {"name": "home", "persistentVolumeClaim": {"claimName": "llm-train-gcp-home"}} in pod["volumes"]
    assert {"name": "home", "mountPath": "/home"} in pod["containers"][0]["volumeMounts"]


def test_without_lustre_home_still_has_its_private_services_access() -> None:
    graph = graph_for(STACK, {"lustre": DELETE, "job": DELETE, "checkpointing.target": "gcs"})
    names = {r.name: r for r in graph.resources}
    assert "llm-train-gcp-lustre" not in names
    assert names["llm-train-gcp-psa-peering"].urn in names["llm-train-gcp-home"].dependencies


def test_without_filestore_nothing_of_it_is_made() -> None:
    graph = graph_for(STACK, {"filestore": DELETE})
    assert not [r for r in graph.resources if "home" in r.name]
    gke = next(r for r in graph.resources if r.name == "llm-train-gcp-gke")
    assert "gcpFilestoreCsiDriverConfig" not in gke.inputs["addonsConfig"]


def _planted(path: tuple[object, ...], value: object) -> list[object]:
    return planted_google_check(STACK, "llm-train-gcp-home", path, value)


@pytest.mark.parametrize(
    ("path", "value", "where", "says"),
    [
        (("tier",), "HIGH_SCALE", "tier", "file v1 Discovery document"),
        (("networks", 0, "connectMode"), "PSA", "networks[0].connectMode", "PRIVATE_SERVICE_ACCESS"),
        (("fileShares", "nfsExportOptions", 0, "squashMode"), "ALL_SQUASH", "", "ROOT_SQUASH"),
        (("fileShares", "capacityGb"), 3000, "fileShares.capacityGb", "nearest 3072"),
        (("protocol",), "NFS_V4", "protocol", "NFS_V4_1"),
    ],
)
def test_preflight_refuses_what_google_would(path: tuple[str, ...], value: object, where: str, says: str) -> None:
    (finding,) = _planted(path, value)
    assert finding.rule == "PF-GCP-API"  # type: ignore[attr-defined]
    assert where in finding.path  # type: ignore[attr-defined]
    assert says in finding.message or says in finding.source  # type: ignore[attr-defined]


def test_its_price_is_unknown_never_zero_and_the_budget_accepts_that_line() -> None:
    from gpuinfra.commands.preview import preview_stacks

    report = preview_stacks([STACK]).stacks[0]
    home = next(r for r in report.cost.resources if r.name == "llm-train-gcp-home")  # type: ignore[attr-defined]
    (line,) = home.lines
    assert line.monthly_usd is None and "not-in-catalog" in line.flags
    assert "fd66b26" in line.note
    assert "gcp:filestore/instance:Instance: Storage capacity" in CLOUDS["gcp"].accepted_unpriced
    assert report.policy is not None and report.policy.violations == []  # type: ignore[attr-defined]
