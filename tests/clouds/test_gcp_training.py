"""Training on Google Cloud: llm-train-gcp previews, passes preflight and the pack and is priced with sources
(figures computed by hand from clouds/gcp/catalog/data/training.yaml); its plan runs on Google's figures (H200, the
MRDMA NICs' bandwidth, Lustre's tier, the 30-second notice); the fabric, placement, capacity and storage resources
are the arguments Google takes; the combinations Google refuses are refused by name."""

from __future__ import annotations

from decimal import Decimal

import gpuinfra.spec  # noqa: F401  (first: importing Google's spec models before it drops them from the org's accounts)
import pytest
from gpuinfra.clouds import CLOUDS
from gpuinfra.clouds.gcp.catalog.training import training_book
from gpuinfra.clouds.gcp.spec.training import TRAINING_MACHINES
from gpuinfra.commands.preview import preview_stacks
from gpuinfra.graph import Graph, Resource
from gpuinfra.validators import Level
from helpers import checked, example_graph, graph_for, planted_google_check, rules_fired

STACK = "llm-train-gcp"
HOURS = Decimal(730)
PROJECT = "acme-train-prod"
VM_HOURLY = Decimal("12.266") + Decimal("74.49392")
"""One a3-ultragpu-8g in us-central1 on demand: its cores, memory and Local SSD plus eight H200 (skypilot-gcp-vms)."""
FLEX = {"compute.capacity": {"flex_start": True, "max_run_hours": 168}, "compute.node_count": 4}


@pytest.fixture(scope="module")
def report() -> object:
    found = preview_stacks([STACK])
    assert found.stacks, found
    return found.stacks[0]  # type: ignore[attr-defined]


def test_the_example_previews_passes_preflight_and_the_pack(report: object) -> None:
    assert [f for f in report.findings if f.level == "error"] == []  # type: ignore[attr-defined]
    assert [p for p in report.preflight if p.level == "error"] == []  # type: ignore[attr-defined]
    policy = report.policy  # type: ignore[attr-defined]
    assert policy is not None and policy.violations == []
    judged = {p.name for p in policy.policies if p.status == "passed"}
    assert {"separation-gcp-edges", "unrecognised-resource", "budget-within-account"} <= judged


def test_the_reserved_nodes_are_priced_at_on_demand_rates(report: object) -> None:
    """16 reserved a3-ultragpu-8g: a reservation bills on-demand rates; the GKE fee $0.10 an hour; three
    e2-standard-2 system nodes at $0.06701142 (cyclenerd-gcp-pricing at fd66b26, compute.instance.e2-standard-2
    .cost.us-central1.hour, dated 2026-07-30)."""
    cost = report.cost  # type: ignore[attr-defined]
    pool = next(r for r in cost.resources if r.name == "llm-train-gcp-gpu")
    (line,) = pool.lines
    assert line.monthly_usd == 16 * VM_HOURLY * HOURS
    assert line.sources == ["skypilot-gcp-vms"]
    gke = next(r for r in cost.resources if r.name == "llm-train-gcp-gke")
    assert gke.lines[0].monthly_usd == Decimal("0.10") * HOURS
    system = next(r for r in cost.resources if r.name == "llm-train-gcp-system")
    assert system.lines[0].monthly_usd == 3 * Decimal("0.06701142") * HOURS
    assert system.lines[0].sources == ["cyclenerd-gcp-pricing"]
    nat = next(r for r in cost.resources if r.name == "llm-train-gcp-nat")
    assert nat.lines[0].quantity == 16 + 3  # every GKE node reaches out through the NAT: $0.0014 per VM-hour
    lustre = next(r for r in cost.resources if r.name == "llm-train-gcp-lustre")
    assert lustre.lines[0].monthly_usd is None  # no price in the catalog: unknown, never zero


def test_the_plan_runs_on_googles_figures() -> None:
    plan = checked(STACK).plan
    assert (plan.instance_type, plan.nodes, plan.gpus) == ("a3-ultragpu-8g", 16, 128)
    assert plan.memory.gpu_bytes == 144384 * 2**20  # H200 141 GB (accelerators.yaml)
    # the fabric: 8 CX-7 NICs, 3,200 Gbps GPU to GPU; two gVNICs in regular VPCs at MTU 8896
    assert plan.fabric.mrdma_nics == 8 and plan.fabric.gvnics == 2 and plan.fabric.mtu == 8896
    assert plan.fabric.roce_profile == "us-central1-b-vpc-roce"
    assert plan.network_gbps_per_node == 3200
    assert plan.run.inputs.step.hardware.fabric_gb_s == 3200 / 8 / 8  # 50 GB/s per GPU
    # Lustre: 36,000 GiB at 500 MB/s per TiB = 17,578.125 MB/s, the checkpoint's write bandwidth
    assert plan.lustre_throughput_mb_s == 36000 / 1024 * 500
    assert plan.checkpoint.write_seconds == pytest.approx(70e9 * 16 / (36000 / 1024 * 500e6))
    # a reservation bills on-demand rates: 16 nodes an hour
    assert plan.run.at_spec.hourly_usd == 16 * VM_HOURLY
    assert plan.consumption == "reservation" and plan.preemption_notice_seconds is None
    assert plan.maintenance_notice_seconds == 3600


def test_spot_nodes_take_the_30_second_window_and_the_preemptible_quota() -> None:
    result = checked(STACK, {"compute.capacity": {"spot": True}, "compute.node_count": 4})
    plan = result.plan
    assert plan.preemption_notice_seconds == 30 == CLOUDS["gcp"].spot_notice_seconds
    assert plan.spot_nodes == 4 and plan.on_demand_nodes == 0
    needs = {(n.region, n.code): n.vcpus for n in plan.quotas}
    # the project's needs: this stack's 4 x 8 Spot H200 and llm-train-gcp-slurm's 2 x 8 in the same project
    assert needs == {("us-central1", "PREEMPTIBLE_NVIDIA_H200_GPUS"): 48, ("global", "GPUS_ALL_REGIONS"): 48}
    # a 1,120 GB checkpoint takes 64 s at 17.6 GB/s: past the notice, so a checkpoint on notice cannot finish
    assert "gcp-checkpoint-past-spot-notice" in rules_fired(result)
    assert plan.run.at_spec.hourly_usd == 4 * (Decimal("3.74713") + Decimal("37.2472"))


@pytest.mark.parametrize(
    ("mutation", "rule"),
    [
        ({"compute.capacity": {"spot": True, "flex_start": True, "max_run_hours": 24}}, "gcp-spot-with-flex-start"),
        (
            {"compute.capacity": {"reservation": "acme-h200-train", "flex_start": True, "max_run_hours": 24}},
            "gcp-flex-start-with-reservation",
        ),
        ({"compute.capacity": {"reservation": "acme-h200-train", "spot": True}}, "gcp-spot-with-reservation"),
        ({"compute.capacity": {"flex_start": True, "max_run_hours": 200}}, "gcp-flex-start-duration"),
        ({"compute.capacity": {"flex_start": True}}, "gcp-flex-start-duration"),
        ({"lustre.capacity_gib": 20000}, "gcp-lustre-capacity-off-steps"),
        ({"network.roce_vpc": False}, "gcp-rdma-without-roce"),
        ({"account": "gcp-chat"}, "gcp-training-project-purpose"),
        ({"compute.zone": "us-central1-a"}, "gcp-zone-lacks-machine-type"),
        ({"compute.capacity": {"spot": True}}, "gcp-training-quota-short"),
    ],
)
def test_planted_faults_are_refused_by_name(mutation: dict[str, object], rule: str) -> None:
    result = checked(STACK, mutation)
    assert rule in {f.rule for f in result.findings if f.level >= Level.ERROR}


def test_a_reservation_keeps_its_own_placement() -> None:
    found = [f for f in checked(STACK).findings if f.rule == "gcp-placement-from-reservation"]
    assert [(f.level, f.path) for f in found] == [(Level.INFO, ("compute", "placement"))]
    assert not [f for f in checked(STACK, FLEX).findings if f.rule == "gcp-placement-from-reservation"]


def test_lustre_off_its_steps_names_the_nearest_capacity() -> None:
    found = next(f for f in checked(STACK, {"lustre.capacity_gib": 20000}).findings if f.rule.startswith("gcp-lustre"))
    assert found.path == ("lustre", "capacity_gib") and "`capacity_gib: 36000`" in str(
        found.hint
    )  # 500 MB/s/TiB: 18,000 GiB steps


def test_lustre_tiers_follow_googles_steps() -> None:
    """Performance tiers page: 1000 MB/s/TiB in 9,000 GiB steps up to 1,530,000 GiB, then 72,000."""
    tier = training_book().lustre_tiers[1000]
    assert tier.allows(9000) and tier.allows(1530000) and not tier.allows(13500)
    assert tier.allows(1530000 + 72000) and not tier.allows(1530000 + 9000)
    assert tier.nearest(1530001) == 1602000 and tier.nearest(1) == 9000


def test_the_spec_offers_exactly_the_catalogs_machines() -> None:
    assert set(TRAINING_MACHINES) == set(training_book().machines)


def _by_name(graph: Graph) -> dict[str, Resource]:
    return {r.name: r for r in graph.resources}


def test_the_fabric_is_three_vpcs_one_of_them_roce() -> None:
    resources = _by_name(example_graph(STACK))
    rdma = resources["llm-train-gcp-rdma"]
    assert rdma.inputs["networkProfile"] == f"projects/{PROJECT}/global/networkProfiles/us-central1-b-vpc-roce"
    assert rdma.inputs["autoCreateSubnetworks"] is False
    for i in (0, 1):
        assert resources[f"llm-train-gcp-net-{i}"].inputs["mtu"] == 8896
    subnets = [resources[f"llm-train-gcp-rdma-{i}"] for i in range(8)]
    assert len({s.inputs["ipCidrRange"] for s in subnets}) == 8
    pool = resources["llm-train-gcp-gpu"]
    extra = pool.inputs["networkConfig"]["additionalNodeNetworkConfigs"]
    assert len(extra) == 1 + 8  # the second gVNIC and every MRDMA NIC
    config = pool.inputs["nodeConfig"]
    assert config["guestAccelerators"][0] == {
        "type": "nvidia-h200-141gb",
        "count": 8,
        "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"},
    }
    assert config["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["acme-h200-train"],
    }
    assert pool.inputs["nodeCount"] == 16 and pool.inputs["management"]["autoRepair"] is True
    # the reservation carries its own placement: the stack makes no placement policy of its own
    assert not [r for r in resources.values() if r.type == "gcp:compute/resourcePolicy:ResourcePolicy"]
    cluster = resources["llm-train-gcp-gke"]
    assert cluster.inputs["enableMultiNetworking"] is True and cluster.inputs["datapathProvider"] == "ADVANCED_DATAPATH"
    # the control plane: reached from outside only by the deploy runners' CIDR
    assert cluster.inputs["masterAuthorizedNetworksConfig"]["cidrBlocks"] == [
        {"cidrBlock": "203.0.113.0/24", "displayName": "deploy-0"}
    ]
    assert cluster.inputs["privateClusterConfig"]["enablePrivateNodes"] is True


def test_flex_start_nodes_come_through_queued_provisioning_without_a_placement_policy() -> None:
    # Queued provisioning takes no compact policy (Cluster Toolkit examples/gke-dws-flex-start); the run's duration
    # is the ProvisioningRequest's (tests/clouds/test_gcp_flex.py), not the node config's.
    resources = _by_name(graph_for(STACK, FLEX))
    assert "llm-train-gcp-compact" not in resources
    pool = resources["llm-train-gcp-gpu"]
    assert "placementPolicy" not in pool.inputs
    assert pool.inputs["queuedProvisioning"] == {"enabled": True}
    config = pool.inputs["nodeConfig"]
    assert config["flexStart"] is True and "maxRunDuration" not in config
    assert config["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert pool.inputs["autoscaling"]["totalMaxNodeCount"] == 4 and pool.inputs["initialNodeCount"] == 0


def test_without_public_cidrs_the_control_plane_is_private() -> None:
    resources = _by_name(graph_for(STACK, {"scheduler.api_access.public_cidrs": []}))
    cluster = resources["llm-train-gcp-gke"]
    assert cluster.inputs["privateClusterConfig"]["enablePrivateEndpoint"] is True
    assert cluster.inputs["masterAuthorizedNetworksConfig"] == {"cidrBlocks": []}


def test_lustre_sits_behind_private_services_access() -> None:
    resources = _by_name(example_graph(STACK))
    lustre = resources["llm-train-gcp-lustre"]
    assert lustre.inputs["capacityGib"] == "36000" and lustre.inputs["perUnitStorageThroughput"] == "500"
    assert lustre.inputs["location"] == "us-central1-b" and lustre.inputs["gkeSupportEnabled"] is True
    peering = resources["llm-train-gcp-psa-peering"]
    assert peering.urn in lustre.dependencies
    assert peering.inputs["service"] == "servicenetworking.googleapis.com"
    reserved = resources["llm-train-gcp-psa"]
    assert (reserved.inputs["purpose"], reserved.inputs["prefixLength"]) == ("VPC_PEERING", 16)
    checkpoints = resources["llm-train-gcp-checkpoints"]
    assert checkpoints.inputs["versioning"] == {"enabled": True}
    assert checkpoints.inputs["lifecycleRules"][0]["condition"]["daysSinceNoncurrentTime"] == 14


def test_the_registry_dispatches_per_workload() -> None:
    """Google names one planner and one program; each gives a Google training spec its own plan and tree, a
    Google inference spec the fleet's, and refuses a spec that is not Google's."""
    from gpuinfra.clouds.gcp.plan.training import GcpTrainingPlan
    from gpuinfra.plan import InferencePlan
    from helpers import inputs_for, load_catalog

    planner = CLOUDS["gcp"].part("planner")
    for stack, kind in ((STACK, GcpTrainingPlan), ("chat-serve-gcp", InferencePlan)):
        inputs = inputs_for(stack)
        assert isinstance(planner(inputs.spec, inputs.org.org, load_catalog()), kind), stack
    aws = inputs_for("llm-train")
    with pytest.raises(TypeError, match="no Google planner"):
        planner(aws.spec, aws.org.org, load_catalog())
    with pytest.raises(TypeError, match="no Google program"):
        CLOUDS["gcp"].part("program")(aws, None)


def test_every_new_type_is_judged_and_the_example_passes() -> None:
    from gpuinfra.clouds.gcp.preflight.discovery import check, judges

    graph = example_graph(STACK)
    google = [r for r in graph.resources if r.type.startswith("gcp:")]
    assert all(judges(r.type) for r in google)
    assert [f for r in google for f in check(r, graph)] == []


@pytest.mark.parametrize(
    ("name", "path", "value", "where", "says"),
    [
        ("llm-train-gcp-gpu", ("placementPolicy",), {"type": "SPREAD"}, "placementPolicy.type", "container v1"),
        (
            "llm-train-gcp-gpu",
            ("nodeConfig", "reservationAffinity", "consumeReservationType"),
            "SPECIFIC",
            "nodeConfig.reservationAffinity.consumeReservationType",
            "SPECIFIC_RESERVATION",
        ),
        (
            "llm-train-gcp-gpu",
            ("nodeConfig", "guestAccelerators"),
            [{"type": "nvidia-h200-141gb", "count": 8, "gpuDriverInstallationConfig": {"gpuDriverVersion": "NEWEST"}}],
            "nodeConfig.guestAccelerators[0].gpuDriverInstallationConfig.gpuDriverVersion",
            "LATEST",
        ),
        ("llm-train-gcp-gke", ("datapathProvider",), "EBPF", "datapathProvider", "ADVANCED_DATAPATH"),
        (
            "llm-train-gcp-gpu",
            ("autoscaling",),
            {"totalMaxNodeCount": "many"},
            "autoscaling.totalMaxNodeCount",
            "integer",
        ),
        (
            "llm-train-gcp-lustre",
            ("perUnitStorageThroughput",),
            "300",
            "perUnitStorageThroughput",
            "125, 250, 500, 1000",
        ),
        ("llm-train-gcp-lustre", ("capacityGib",), "40000", "capacityGib", "nearest 54000"),
        ("llm-train-gcp-lustre", ("filesystem",), "training-fs", "filesystem", "eight letters"),
    ],
)
def test_preflight_refuses_what_google_would(
    name: str, path: tuple[str, ...], value: object, where: str, says: str
) -> None:
    (finding,) = planted_google_check(STACK, name, path, value)
    assert finding.rule == "PF-GCP-API" and finding.path == where  # type: ignore[attr-defined]
    assert says in finding.message or says in finding.source  # type: ignore[attr-defined]


def test_kueue_packs_jobs_by_googles_topology_labels() -> None:
    resources = _by_name(example_graph(STACK))
    topology = resources["llm-train-gcp-topology"]
    assert [level["nodeLabel"] for level in topology.inputs["spec"]["levels"]] == [
        "cloud.google.com/gce-topology-block",
        "cloud.google.com/gce-topology-subblock",
        "cloud.google.com/gce-topology-host",
        "kubernetes.io/hostname",
    ]
    flavor = resources["llm-train-gcp-flavor"].inputs["spec"]
    assert flavor["nodeLabels"] == {"cloud.google.com/gke-nodepool": resources["llm-train-gcp-gpu"].inputs["name"]}
    assert flavor["topologyName"] == topology.inputs["metadata"]["name"]
    queue = resources["llm-train-gcp-cluster-queue"].inputs["spec"]
    (group,) = queue["resourceGroups"]
    assert group["flavors"][0]["resources"] == [{"name": "nvidia.com/gpu", "nominalQuota": 16 * 8}]
    charts = {r.inputs["chart"]: r.inputs["version"] for r in resources.values() if r.type.endswith(":Release")}
    assert set(charts) == {"oci://registry.k8s.io/kueue/charts/kueue", "oci://registry.k8s.io/jobset/charts/jobset"}
    provider = resources["llm-train-gcp-k8s"]
    assert resources["llm-train-gcp-gpu"].urn in provider.dependencies  # the charts' pods need the nodes first


def test_a4_is_planned_on_b200_with_its_price_unknown_never_zero() -> None:
    result = checked(STACK, {"compute.machine_type": "a4-highgpu-8g"})
    plan = result.plan
    assert (plan.instance_type, plan.gpus, plan.fabric.series) == ("a4-highgpu-8g", 128, "a4")
    assert plan.memory.gpu_bytes == 183359 * 2**20  # B200 (accelerators.yaml)
    assert plan.run.at_spec.hourly_usd is None  # SkyPilot lists a4-highgpu-8g at 0.0, its mark for no price
    assert plan.run.inputs.step is None  # no B200 HBM figure in the catalog: the default MFU, said so
    assert plan.run.inputs.mfu_source == "default MFU"
    pool = next(
        r for r in graph_for(STACK, {"compute.machine_type": "a4-highgpu-8g"}).resources if r.name.endswith("-gpu")
    )
    assert pool.inputs["nodeConfig"]["guestAccelerators"][0]["type"] == "nvidia-b200"


def test_a4_nodes_are_unpriced_in_the_cost_preview() -> None:
    from gpuinfra.clouds.gcp.cost.training import node_pool_lines

    pool = next(
        r for r in graph_for(STACK, {"compute.machine_type": "a4-highgpu-8g"}).resources if r.name.endswith("-gpu")
    )
    (line,) = node_pool_lines(pool)
    assert line.monthly is None and "no on-demand price for a4-highgpu-8g in us-central1" in (line.note or "")
