"""Pricing the graph: every expected figure is computed here by hand from catalog rows and compared exactly."""

from __future__ import annotations

import datetime
import math
from decimal import Decimal

import pytest
from gpuinfra.catalog import Catalog
from gpuinfra.cost import HOURS_PER_MONTH, ResourceUsage, Usage, UsageFile, assumed_usage, price_graph
from gpuinfra.cost.model import NOT_IN_CATALOG, REGION_FALLBACK, SPOT_ESTIMATE, UNCONFIRMED, UNKNOWN_INPUT, USAGE_BASED
from gpuinfra.graph import UNKNOWN
from gpuinfra.plan import TrainingPlan
from gpuinfra.plan.capacity import split_capacity
from gpuinfra.validators.checked import check
from graphs import graph, group, provider, res
from helpers import ample_quotas, example_graph, graph_for

PCS_NG = "aws-native:pcs:ComputeNodeGroup"

H = HOURS_PER_MONTH


def lines_of(breakdown, name):  # type: ignore[no-untyped-def]
    return {line.name: line for line in breakdown.get(name).lines}


def svc(catalog: Catalog, key: str) -> Decimal:
    found = catalog.service(key)
    assert found is not None, key
    return found.usd


def test_the_reserved_gang_prices_at_the_on_demand_rate_and_the_elastic_group_at_the_spot_discount(
    catalog: Catalog,
) -> None:
    b = price_graph(example_graph("llm-train"), catalog)
    od = catalog.on_demand("p5.48xlarge", "us-east-1")
    discount = catalog.spot_discount("p5.48xlarge", "us-east-1").discount
    assert od is not None
    # PCS, by hand from the example spec: the gang's 16 nodes on an On-Demand Capacity Reservation, billed at the
    # on-demand rate (EC2 User Guide, "Capacity Reservation pricing and billing"): 16 x $55.04 x 730 h; the elastic
    # partition's spot group at its most, 2 nodes.
    od_lines = {line.name.split(" (")[0]: line for line in b.get(f"{PCS_NG}::llm-train-slurm-pcs-od").lines}
    spot_lines = {line.name.split(" (")[0]: line for line in b.get(f"{PCS_NG}::llm-train-slurm-pcs-elastic").lines}
    assert od_lines["Instances, on-demand"].monthly == 16 * od.usd_per_hour * H == Decimal("642867.20")
    assert spot_lines["Instances, spot"].quantity == 2
    assert spot_lines["Instances, spot"].monthly == 2 * od.usd_per_hour * (1 - discount) * H
    assert spot_lines["Instances, spot"].hourly == 2 * od.usd_per_hour * (1 - discount)
    assert spot_lines["EBS /dev/xvda"].monthly == 2 * 512 * svc(catalog, "ebs/gp3")
    # PCS's own charges have no cited figure in the catalog yet: unknown, never zero.
    assert od_lines["PCS node management"].monthly is None
    (controller,) = b.get("aws-native:pcs:Cluster::llm-train-slurm-pcs-cluster").lines
    assert controller.name == "PCS controller (SMALL)" and controller.monthly is None


def test_lustre_is_priced_by_deployment_type_throughput_tier_and_capacity(catalog: Catalog) -> None:
    b = price_graph(example_graph("llm-train"), catalog)
    (line,) = b.get("aws:fsx/lustreFileSystem:LustreFileSystem::llm-train-storage-lustre").lines
    # EFA-enabled at 250 MB/s/TiB: 3 steps of 19,200 GiB (the example's 57,600), each GiB at the tier's GB-month rate.
    assert line.quantity == 57600
    assert line.monthly == 57600 * svc(catalog, "fsx_lustre/PERSISTENT_2/250") == Decimal("12096.00")
    assert UNCONFIRMED in line.flags  # the 250 MB/s/TiB tier has a single source


@pytest.mark.parametrize(
    ("deployment", "tier", "key"),
    [
        ("SCRATCH_2", None, "fsx_lustre/SCRATCH_2"),
        ("PERSISTENT_2", 125, "fsx_lustre/PERSISTENT_2/125"),
        ("PERSISTENT_1", 200, "fsx_lustre/PERSISTENT_1/200"),
    ],
)
def test_lustre_tiers(catalog: Catalog, deployment: str, tier: int | None, key: str) -> None:
    p = provider()
    fs = res(
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        "fs",
        p,
        deploymentType=deployment,
        perUnitStorageThroughput=tier,
        storageCapacity=2400,
        storageType="SSD",
    )
    (line,) = price_graph(graph(p, fs), catalog).get(fs.key).lines
    assert line.monthly == 2400 * svc(catalog, key)


def test_lustre_hdd_is_unknown_not_zero(catalog: Catalog) -> None:
    p = provider()
    fs = res(
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        "fs",
        p,
        deploymentType="PERSISTENT_1",
        perUnitStorageThroughput=12,
        storageCapacity=6000,
        storageType="HDD",
    )
    b = price_graph(graph(p, fs), catalog)
    (line,) = b.get(fs.key).lines
    assert line.monthly is None and NOT_IN_CATALOG in line.flags
    assert b.monthly == 0 and len(b.unpriced()) == 1


@pytest.mark.parametrize("mode", ["AUTOMATIC", "USER_PROVISIONED"])
def test_lustre_metadata_iops(catalog: Catalog, mode: str) -> None:
    """AUTOMATIC metadata IOPS come with the storage (no line of their own); user-provisioned ones are a line the
    catalog says it cannot price: unknown, never zero, never in the total."""
    p = provider()
    config = {"mode": mode, **({"iops": 24000} if mode == "USER_PROVISIONED" else {})}
    fs = res(
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        "fs",
        p,
        deploymentType="PERSISTENT_2",
        perUnitStorageThroughput=1000,
        storageCapacity=4800,
        storageType="SSD",
        efaEnabled=True,
        metadataConfiguration=config,
    )
    b = price_graph(graph(p, fs), catalog)
    storage, *metadata = b.get(fs.key).lines
    assert storage.monthly == 4800 * svc(catalog, "fsx_lustre/PERSISTENT_2/1000")
    if mode == "AUTOMATIC":
        assert metadata == []
    else:
        (line,) = metadata
        assert line.quantity == 24000 and line.monthly is None and NOT_IN_CATALOG in line.flags
        assert "no citable AWS rate" in (line.note or "")
        assert b.monthly == storage.monthly


def test_on_demand_group_of_n_nodes(catalog: Catalog) -> None:
    p = provider()
    lt, asg = group("g", p, "p5.48xlarge", 10)
    lines = lines_of(price_graph(graph(p, lt, asg), catalog), asg.key)
    od = catalog.on_demand("p5.48xlarge", "us-east-1")
    assert od is not None
    assert lines["Instances, on-demand (p5.48xlarge)"].monthly == 10 * od.usd_per_hour * H
    assert not any("spot" in name for name in lines)


def test_autoscaled_group_is_a_range_with_the_expected_count_at_desired(catalog: Catalog) -> None:
    p = provider(region="us-west-2")
    lt, asg = group("g", p, "g6.xlarge", 0, on_demand_base=2, pct_above_base=50)
    asg = res(asg.type, asg.name, p, (lt,), **{**asg.inputs, "minSize": 2, "maxSize": 12, "desiredCapacity": 5})
    lines = price_graph(graph(p, lt, asg), catalog).get(asg.key).lines
    od = catalog.on_demand("g6.xlarge", "us-west-2")
    discount = catalog.spot_discount("g6.xlarge", "us-west-2").discount
    assert od is not None
    od_line, spot_line = lines[0], lines[1]
    for count, attr in ((5, "monthly"), (2, "monthly_min"), (12, "monthly_max")):
        n_od, n_spot = split_capacity(count, 2, 50)
        assert getattr(od_line, attr) == n_od * od.usd_per_hour * H
        assert getattr(spot_line, attr) == n_spot * od.usd_per_hour * (1 - discount) * H


def test_inference_style_group_without_desired_capacity_is_expected_at_min(catalog: Catalog) -> None:
    p = provider()
    lt, asg = group("g", p, "g6.xlarge", 3)
    asg = res(asg.type, asg.name, p, (lt,), minSize=3, maxSize=9)
    line = price_graph(graph(p, lt, asg), catalog).get(asg.key).lines[0]
    od = catalog.on_demand("g6.xlarge", "us-east-1")
    assert od is not None
    assert line.quantity == 3 and line.monthly_max == 9 * od.usd_per_hour * H


def test_usage_file_instances_override_the_expected_count(catalog: Catalog) -> None:
    from gpuinfra.cost import ResourceUsage, UsageFile

    p = provider()
    lt, asg = group("g", p, "g6.xlarge", 3)
    usage = Usage(UsageFile(resource_usage={asg.name: ResourceUsage(instances=7)}))
    line = price_graph(graph(p, lt, asg), catalog, usage).get(asg.key).lines[0]
    assert line.quantity == 7


def test_capacity_block_without_a_current_rate_is_unknown_not_an_expired_one(catalog: Catalog) -> None:
    """The only published Capacity Block rates found expired on 2025-01-01 (catalog-audit-2026-12): the catalog
    states them unknown, so the line is unknown and out of the total, never priced at a stale rate."""
    p = provider()
    lt, asg = group("g", p, "p5.48xlarge", 8, market="capacity-block")
    (line, *_) = price_graph(graph(p, lt, asg), catalog).get(asg.key).lines
    assert line.name.startswith("Capacity block")
    assert line.monthly is None and NOT_IN_CATALOG in line.flags


def test_capacity_block_in_a_region_without_a_rate_is_unknown(catalog: Catalog) -> None:
    p = provider(region="eu-west-2")
    lt, asg = group("g", p, "p5.48xlarge", 8, market="capacity-block")
    line = price_graph(graph(p, lt, asg), catalog).get(asg.key).lines[0]
    assert line.monthly is None and NOT_IN_CATALOG in line.flags


def test_instance_type_without_a_price_in_the_region_is_unknown_never_zero(catalog: Catalog) -> None:
    p = provider(region="eu-west-1")  # no p5.48xlarge row for eu-west-1 in the catalog
    lt, asg = group("g", p, "p5.48xlarge", 4)
    b = price_graph(graph(p, lt, asg), catalog)
    instances = b.get(asg.key).lines[0]
    assert instances.monthly is None and NOT_IN_CATALOG in instances.flags
    assert b.monthly == b.get(asg.key).lines[1].monthly  # only the volumes are in the total


def test_service_prices_outside_us_east_1_are_flagged_region_fallback(catalog: Catalog) -> None:
    p = provider(region="eu-central-1")
    nat = res("aws:ec2/natGateway:NatGateway", "nat", p)
    line = price_graph(graph(p, nat), catalog).get(nat.key).lines[0]
    assert line.monthly == svc(catalog, "nat/gateway") * H
    assert REGION_FALLBACK in line.flags


def test_default_spot_discount_is_flagged_as_an_estimate(catalog: Catalog) -> None:
    p = provider(region="us-east-1")
    lt, asg = group("g", p, "g7e.2xlarge", 4, on_demand_base=0)  # priced on demand, no spot row in us-east-1
    spot = price_graph(graph(p, lt, asg), catalog).get(asg.key).lines[0]
    assert "spot" in spot.name and SPOT_ESTIMATE in spot.flags


def test_unknown_sentinel_in_a_size_makes_the_line_unknown(catalog: Catalog) -> None:
    p = provider()
    lt, asg = group("g", p, "g6.xlarge", 3)
    asg = res(asg.type, asg.name, p, (lt,), minSize=UNKNOWN, maxSize=UNKNOWN)
    (line,) = price_graph(graph(p, lt, asg), catalog).get(asg.key).lines
    assert line.monthly is None and UNKNOWN_INPUT in line.flags


def test_checkpoint_bucket_stores_checkpoint_size_times_checkpoints_kept(catalog: Catalog) -> None:
    g = example_graph("llm-train")
    plan = check_plan()
    usage = Usage().with_assumed(assumed_usage(plan, g))
    (line,) = price_graph(g, catalog, usage).get("aws:s3/bucket:Bucket::llm-train-storage-checkpoints").lines
    assert plan.checkpoint is not None
    kept = math.ceil(14 * 24 * 60 / plan.checkpoint.interval_minutes)
    assert line.quantity == Decimal(str(plan.checkpoint.size_gb)) * kept
    assert line.monthly == line.quantity * svc(catalog, "s3/standard")
    assert "assumed-usage" in line.flags and f"{kept} checkpoints" in (line.note or "")


def test_bucket_without_usage_is_usage_based_and_unknown(catalog: Catalog) -> None:
    (line,) = (
        price_graph(example_graph("llm-train"), catalog)
        .get("aws:s3/bucket:Bucket::llm-train-storage-checkpoints")
        .lines
    )
    assert line.monthly is None and USAGE_BASED in line.flags


def test_free_resources_are_a_known_zero_and_unknown_types_are_listed(catalog: Catalog) -> None:
    p = provider()
    vpc = res("aws:ec2/vpc:Vpc", "vpc", p, cidrBlock="10.0.0.0/16")
    role = res("aws:iam/role:Role", "role", p)
    fn = res("aws:lambda/function:Function", "fn", p)
    b = price_graph(graph(p, vpc, role, fn), catalog)
    assert b.get(vpc.key).free and b.get(vpc.key).monthly == 0
    assert b.get(role.key).free
    assert b.get(fn.key).monthly is None and b.get(fn.key).unpriced


def test_breakdown_by_component_region_and_account(catalog: Catalog) -> None:
    b = price_graph(example_graph("llm-train"), catalog)
    assert b.by("region").keys() == {"us-east-1"}
    assert b.by("account").keys() == {"111111111111"}
    components = b.by("component")
    assert sum(v[0] for v in components.values()) == b.monthly
    groups = [r for r in b.resources if r.component == "Pcs llm-train-slurm-pcs" and r.priced]
    assert groups and components["Pcs llm-train-slurm-pcs"][0] == sum(r.monthly for r in groups)


def test_every_total_has_its_catalog_dates(catalog: Catalog) -> None:
    dates = price_graph(example_graph("llm-train"), catalog).as_of()
    assert dates is not None
    oldest, newest = dates
    assert oldest <= newest
    # the oldest figure the example uses is the NAT gateway's (Infracost's golden output, last changed 2024-07-01),
    # the newest the Slurm controller's m7i price (AWS's us-east-1 Price List via karpenter, generated 2026-07-20);
    # undated figures (AWS pricing pages) add none
    assert oldest == datetime.date(2024, 7, 1) == catalog.service("nat/gateway").as_of  # type: ignore[union-attr]
    assert newest == datetime.date(2026, 7, 20) == catalog.sources["kp-price"].date


def test_doubling_nodes_doubles_the_on_demand_compute_line(catalog: Catalog) -> None:
    spec = {"compute.capacity": {"type": "on_demand"}}
    small = price_graph(graph_for("llm-train", spec, ample_quotas()), catalog)
    large = price_graph(graph_for("llm-train", {**spec, "compute.node_count": 32}, ample_quotas()), catalog)
    key = f"{PCS_NG}::llm-train-slurm-pcs-od"
    assert large.get(key).lines[0].monthly == 2 * small.get(key).lines[0].monthly


def check_plan() -> TrainingPlan:
    from gpuinfra.catalog import load_catalog
    from helpers import inputs_for

    plan = check(inputs_for("llm-train"), load_catalog()).plan
    assert isinstance(plan, TrainingPlan) and plan.checkpoint is not None
    return plan


def test_expected_count_is_the_planners_tag_within_min_and_max(catalog: Catalog) -> None:
    p = provider()
    lt, asg = group("g", p, "g6.xlarge", 0)
    tags = [{"key": "gpuinfra:expected-capacity", "value": "4", "propagateAtLaunch": False}]
    asg = res(asg.type, asg.name, p, (lt,), minSize=2, maxSize=12, tags=tags)
    line = price_graph(graph(p, lt, asg), catalog).get(asg.key).lines[0]
    assert (line.quantity, line.monthly_min, line.monthly_max) == (4, line.unit_price * 2 * H, line.unit_price * 12 * H)  # type: ignore[operator]


def test_inference_fleet_is_priced_per_region_with_the_planned_counts(catalog: Catalog) -> None:
    g = example_graph("chat-serve")
    b = price_graph(g, catalog)
    assert set(b.by("region")) == {"us-east-1", "us-west-2", "eu-central-1", "ap-northeast-1"}
    groups = [r for r in b.resources if r.type == "aws:autoscaling/group:Group"]
    for r in groups:
        resource = g.by_urn[r.urn]
        planned = next(int(t["value"]) for t in resource.inputs["tags"] if t["key"] == "gpuinfra:expected-capacity")
        first = r.lines[0]
        assert first.quantity == min(max(planned, resource.inputs["minSize"]), resource.inputs["maxSize"])
        assert first.monthly_min is not None and first.monthly_max is not None
        assert first.monthly_min <= first.monthly <= first.monthly_max  # type: ignore[operator]
    assert b.monthly_min <= b.monthly < b.monthly_max


def test_monthly_total_is_the_budget_policys_estimate(catalog: Catalog) -> None:
    from gpuinfra.cost import monthly_total

    g = example_graph("llm-train")
    assert monthly_total(g, catalog) == price_graph(g, catalog).monthly > 0
    p = provider()
    assert monthly_total(graph(p, res("aws:lambda/function:Function", "fn", p)), catalog) is None
    assert monthly_total(graph(p, res("aws:ec2/vpc:Vpc", "vpc", p)), catalog) == 0


def test_eks_training_prices_the_control_plane_and_node_groups(catalog: Catalog) -> None:
    b = price_graph(example_graph("llm-train-eks"), catalog)
    (plane,) = next(r for r in b.resources if r.type == "aws:eks/cluster:Cluster").lines
    # Kubernetes 1.33 left EKS standard support on 2026-07-29 and leaves extended support on 2027-07-29 (EKS release
    # calendar); the upgrade policy is EXTENDED, so in between the control plane bills the extended rate.
    today = datetime.datetime.now(datetime.UTC).date()
    extended = datetime.date(2026, 7, 29) <= today < datetime.date(2027, 7, 29)
    assert plane.monthly == svc(catalog, "eks/cluster_extended" if extended else "eks/cluster") * H
    assert svc(catalog, "eks/cluster_extended") == Decimal("0.60") and svc(catalog, "eks/cluster") == Decimal("0.10")
    od = catalog.on_demand("p5.48xlarge", "us-east-1")
    assert od is not None
    groups = {r.name: r.lines[0] for r in b.resources if r.type == "aws:eks/nodeGroup:NodeGroup"}
    spot = next(line for line in groups.values() if "spot" in line.name)
    discount = catalog.spot_discount("p5.48xlarge", "us-east-1").discount
    assert spot.monthly == spot.quantity * od.usd_per_hour * (1 - discount) * H  # type: ignore[operator]


def test_the_control_plane_rate_follows_the_support_tier_of_the_day(catalog: Catalog) -> None:
    from gpuinfra.clouds.aws.cost.lines import Ctx
    from gpuinfra.clouds.aws.cost.prices import PriceBook
    from gpuinfra.clouds.aws.cost.services import price_eks_cluster
    from gpuinfra.cost.model import Where
    from gpuinfra.cost.usage import Usage

    p = provider()
    ctx = Ctx(graph(p), PriceBook(catalog), Usage(), Where(region="us-east-1", account=None))

    def monthly(version: str, day: datetime.date, policy: str | None = None) -> Decimal | None:
        inputs = {"version": version, **({"upgradePolicy": {"supportType": policy}} if policy else {})}
        (line,) = price_eks_cluster(res("aws:eks/cluster:Cluster", "c", p, **inputs), ctx, day)
        return line.monthly

    standard, extended = Decimal("0.10") * H, Decimal("0.60") * H
    # 1.33: standard support to 2026-07-29 (billing of extended support starts at the start of that day, UTC).
    assert monthly("1.33", datetime.date(2026, 7, 28)) == standard
    assert monthly("1.33", datetime.date(2026, 7, 29)) == extended  # default policy EXTENDED
    assert monthly("1.33", datetime.date(2026, 7, 29), "STANDARD") == standard  # EKS upgrades it instead
    (unknown,) = price_eks_cluster(
        res("aws:eks/cluster:Cluster", "c", p, version="1.99"), ctx, datetime.date(2026, 1, 1)
    )
    assert unknown.monthly == standard and unknown.monthly_max == extended


def test_on_premises_kubernetes_has_no_cloud_charges(catalog: Catalog) -> None:
    b = price_graph(example_graph("llm-train-onprem"), catalog)
    assert b.monthly == 0 and not b.unpriced() and all(r.free for r in b.resources)


def test_the_fleets_web_acls_and_api_keys_are_priced(catalog: Catalog) -> None:
    b = price_graph(example_graph("chat-serve"), catalog)
    waf = lines_of(b, "aws:wafv2/webAcl:WebAcl::chat-serve-us-east-1-endpoint-waf")
    # Infracost's golden output: $5.00 per web ACL and $1.00 per rule (two rate rules, per address and per API key,
    # + 3 managed groups).
    assert waf["Web ACL"].monthly == Decimal("5.00")
    assert waf["Rules (managed rule groups count as one)"].monthly == 5 * Decimal("1.00")
    assert USAGE_BASED in waf["Requests"].flags and waf["Requests"].monthly is None
    secret = lines_of(b, "aws:secretsmanager/secret:Secret::chat-serve-us-east-1-api-key")
    assert secret["Secret"].monthly == Decimal("0.40")
    assert secret["API calls"].monthly is None  # usage: unknown, never zero
    association = b.get("aws:wafv2/webAclAssociation:WebAclAssociation::chat-serve-us-east-1-endpoint-waf-association")
    assert association.free


def test_shared_home_is_priced_per_gb_stored_from_usage(catalog: Catalog) -> None:
    """EFS Standard at $0.30 per GB-month (Infracost's golden: 230 GB, $69.00); how much /home holds is usage."""
    from gpuinfra.cost import ResourceUsage, UsageFile

    home = "aws:efs/fileSystem:FileSystem::llm-train-slurm-home-fs"
    (line,) = price_graph(example_graph("llm-train"), catalog).get(home).lines
    assert line.monthly is None and USAGE_BASED in line.flags and "0.3 USD per GB-month" in (line.note or "")
    usage = Usage(UsageFile(resource_usage={"llm-train-slurm-home-fs": ResourceUsage(storage_gb=Decimal(230))}))
    (line,) = price_graph(example_graph("llm-train"), catalog, usage).get(home).lines
    assert line.monthly == Decimal("69.00")


def test_gp3_throughput_and_iops_above_the_baseline_are_priced_per_instance(catalog: Catalog) -> None:
    # Infracost's golden (us-east-1): 1,000 IOPS above 3,000 cost $5.00, 5 MiB/s above 125 cost $0.20, so
    # $0.005 per IOPS-month and $0.04 per MiB/s-month. Here 3 instances, each 500 MiB/s and 6,000 IOPS:
    # throughput 3 x 375 x 0.04 = $45.00, IOPS 3 x 3,000 x 0.005 = $45.00.
    p = provider()
    lt = res(
        "aws:ec2/launchTemplate:LaunchTemplate",
        "lt",
        p,
        instanceType="g6.xlarge",
        blockDeviceMappings=[
            {
                "deviceName": "/dev/sda1",
                "ebs": {"volumeSize": 100, "volumeType": "gp3", "throughput": 500, "iops": 6000},
            }
        ],
    )
    asg = res("aws:autoscaling/group:Group", "asg", p, (lt,), minSize=3, maxSize=3, desiredCapacity=3)
    lines = {line.name.split(" (")[0]: line for line in price_graph(graph(p, lt, asg), catalog).get(asg.key).lines}
    throughput = lines["EBS /dev/sda1 gp3 throughput above 125 MiB/s"]
    iops = lines["EBS /dev/sda1 gp3 iops above 3000 IOPS"]
    assert (throughput.quantity, throughput.monthly) == (Decimal(1125), Decimal("45.00"))
    assert (iops.quantity, iops.monthly) == (Decimal(9000), Decimal("45.000"))
    assert lines["EBS /dev/sda1"].monthly == Decimal("24.00")  # 3 x 100 GB x $0.08


def test_gp3_at_the_baseline_and_other_volume_types_add_no_performance_line(catalog: Catalog) -> None:
    p = provider()
    at_baseline = res("aws:ebs/volume:Volume", "v1", p, size=40, type="gp3", throughput=125, iops=3000)
    gp2 = res("aws:ebs/volume:Volume", "v2", p, size=10, type="gp2", iops=100)
    above = res("aws:ebs/volume:Volume", "v3", p, size=40, type="gp3", throughput=130, iops=4000)
    b = price_graph(graph(p, at_baseline, gp2, above), catalog)
    assert [line.name for line in b.get(at_baseline.key).lines] == ["EBS volume (gp3, 40 GB x 1)"]
    assert len(b.get(gp2.key).lines) == 1
    # Infracost's golden case itself: 40 GB $3.20, 5 MiB/s $0.20, 1,000 IOPS $5.00.
    assert [line.monthly for line in b.get(above.key).lines] == [Decimal("3.20"), Decimal("0.20"), Decimal("5.000")]


def test_interface_endpoint_is_priced_per_zone_hour_and_data_processed_is_usage(catalog: Catalog) -> None:
    # Infracost's golden: one subnet 730 h $7.30, two subnets 1,460 h $14.60; data processed $0.01 per GB.
    p = provider()
    ep = res("aws:ec2/vpcEndpoint:VpcEndpoint", "ecr-api", p, vpcEndpointType="Interface", subnetIds=[UNKNOWN, UNKNOWN])
    gateway = res("aws:ec2/vpcEndpoint:VpcEndpoint", "s3", p, vpcEndpointType="Gateway")
    b = price_graph(graph(p, ep, gateway), catalog)
    hours, processed = b.get(ep.key).lines
    assert hours.quantity == 2 and hours.monthly == Decimal("14.60")
    assert processed.monthly is None and USAGE_BASED in processed.flags and "0.01 USD per GB" in (processed.note or "")
    assert b.get(gateway.key).free
    used = Usage(UsageFile(resource_usage={"ecr-api": ResourceUsage(monthly_data_processed_gb=Decimal(1000))}))
    _, processed = price_graph(graph(p, ep), catalog, used).get(ep.key).lines
    assert processed.monthly == Decimal("10.00")


def test_add_ons_identity_associations_secret_versions_cache_rules_and_mount_targets_are_free(catalog: Catalog) -> None:
    p = provider()
    free = [
        res("aws:eks/addon:Addon", "vpc-cni", p, addonName="vpc-cni"),
        res("aws:eks/podIdentityAssociation:PodIdentityAssociation", "trainer", p),
        res("aws:secretsmanager/secretVersion:SecretVersion", "key-version", p),
        res("random:index/randomPassword:RandomPassword", "key-value"),
        res("aws:ecr/pullThroughCacheRule:PullThroughCacheRule", "image-cache", p),
        res("aws:efs/mountTarget:MountTarget", "home-mt-0", p),
    ]
    b = price_graph(graph(p, *free), catalog)
    assert all(b.get(r.key).free and b.get(r.key).monthly == 0 for r in free)
