"""The bundled catalog: its figures against the sources they cite, its dates against the dates those sources
give, and the load-time checks that refuse an inconsistent one.

Expected figures are typed in from the cited sources (AWS's quota page, karpenter's reference, the
ec2instances.info snapshot), never read back from the code under test.
"""

from __future__ import annotations

import dataclasses
import datetime
from decimal import ROUND_HALF_UP, Decimal

import pytest
from gpuinfra.catalog import Catalog
from gpuinfra.catalog.load import consistency_problems, entries
from gpuinfra.catalog.models import SpotDefault, SpotDistribution

# ---- dates


def test_every_entry_cites_a_known_source(catalog: Catalog) -> None:
    for entry in entries(catalog):
        assert entry.source in catalog.sources, entry
    for info in catalog.instance_types:
        assert set(info.cites) <= set(catalog.sources), info.name


def test_every_as_of_is_the_date_its_source_gives(catalog: Catalog) -> None:
    """An entry carries exactly the date its source gives (a snapshot's header, a commit's date), and none when
    the source gives none (AWS's quota and pricing pages, the GFD label rule): never the day the file was built.
    free.yaml (read by the pricer) too."""
    from gpuinfra.cost.free import free_types

    dated = undated = 0
    for entry in [*entries(catalog), *free_types()]:
        source = catalog.sources[entry.source]
        assert entry.as_of == source.date, (entry.source, source.date, entry)
        if source.date is None:
            undated += 1
        else:
            assert source.date_basis, entry.source  # how the date was read off the source
            dated += 1
    assert dated > 1500 and undated > 50  # every type, price and spot row is dated; quota and docs rows are not


def test_consistency_check_refuses_an_as_of_that_is_not_the_sources_date(catalog: Catalog) -> None:
    alb = catalog.service("elb/alb")
    assert alb is not None and alb.as_of == datetime.date(2024, 7, 1)  # Infracost's golden, last changed then
    built = alb.model_copy(update={"as_of": datetime.date(2026, 12, 2)})  # the day the row was written
    bad = dataclasses.replace(
        catalog, service_prices=(*[p for p in catalog.service_prices if p.key != "elb/alb"], built)
    )
    assert any("elb-price as_of 2026-12-02" in p for p in consistency_problems(bad))


def test_the_snapshot_dates_are_the_ones_the_snapshots_state(catalog: Catalog) -> None:
    # kp-price header "generated at 2026-07-20T13:44:30Z"; kp-vpc header "generated at 2026-08-06T04:02:42Z";
    # van-od header "Last updated: 2026-01-21"; van-spot: its commit 2d0108c7, 2025-11-30T13:30:58Z.
    expect = {
        "kp-price": datetime.date(2026, 7, 20),
        "kp-vpc": datetime.date(2026, 8, 6),
        "van-od": datetime.date(2026, 1, 21),
        "van-spot": datetime.date(2025, 11, 30),
        "kp-types": datetime.date(2026, 7, 11),
    }
    for key, date in expect.items():
        assert catalog.sources[key].date == date and catalog.sources[key].date_basis, key
    assert {p.as_of for p in catalog.on_demand_prices} == {expect["van-od"], expect["kp-price"]}
    assert {s.as_of for s in catalog.spot_distributions} == {expect["van-spot"]}


# ---- types and their hardware (karpenter's reference and VPC limits)


def test_the_types_the_issue_names_are_there(catalog: Catalog) -> None:
    for name in (
        "p5.4xlarge",
        "p5.48xlarge",
        "p5e.48xlarge",
        "p5en.48xlarge",
        "p6-b200.48xlarge",
        "p6-b300.48xlarge",
        "p4d.24xlarge",
        "p4de.24xlarge",
        "trn1.32xlarge",
        "trn1n.32xlarge",
        "inf1.xlarge",
        "inf2.48xlarge",
        "g7e.48xlarge",
        "g6f.large",
        "gr6.4xlarge",
        "g6.48xlarge",
        "g6e.xlarge",
        "g5.xlarge",
        "g4dn.metal",
    ):
        assert catalog.instance(name) is not None, name


def test_p5_4xlarge_is_the_single_h100_type(catalog: Catalog) -> None:
    info = catalog.instance("p5.4xlarge")
    assert info is not None
    assert (info.vcpu, info.memory_gib, info.accelerator, info.accelerator_count) == (16, 256, "H100", 1)
    assert (info.efa_interfaces, info.network_baseline_gbps, info.instance_store_gb) == (1, 100, 3800)
    assert "p5.4xlarge" in {i.name for i in catalog.find_instances(accelerator="h100")}
    assert catalog.on_demand("p5.4xlarge", "us-east-1").usd_per_hour == Decimal("6.88")  # type: ignore[union-attr]


def test_p6_b300_card_0_carries_no_efa(catalog: Catalog) -> None:
    info = catalog.instance("p6-b300.48xlarge")
    assert info is not None
    assert info.network_cards == 17 and info.efa_interfaces == 16  # kp-vpc cards 0-16; kp-types efa 16
    assert info.efa_cards == tuple(range(1, 17))
    assert info.memory_gib == 4096 and info.network_baseline_gbps == 6400


def test_efa_counts_and_cards_match_the_reference(catalog: Catalog) -> None:
    expected = {  # (EFA, network cards): karpenter's reference and VPC limits; torchx agrees on EFA
        "p5.48xlarge": (32, 32),
        "p5en.48xlarge": (16, 16),
        "p4d.24xlarge": (4, 4),
        "p6-b200.48xlarge": (8, 8),
        "trn1.32xlarge": (8, 8),
        "trn1n.32xlarge": (16, 16),
        "g6e.48xlarge": (4, 4),
        "g6.xlarge": (0, 1),
    }
    for name, (efa, cards) in expected.items():
        info = catalog.instance(name)
        assert info is not None and (info.efa_interfaces, info.network_cards) == (efa, cards), name
        assert info.efa_cards == tuple(range(cards))[:efa] if efa == cards else not info.efa_cards


def test_bandwidth_baseline_and_burst_are_apart(catalog: Catalog) -> None:
    m7i = catalog.instance("m7i.2xlarge")
    g6 = catalog.instance("g6.xlarge")
    assert m7i is not None and g6 is not None
    assert m7i.network_baseline_gbps == 3.125  # kp-types 3125 Mb/s; 12.5 is AWS's burst figure
    assert m7i.network_burst_gbps is None  # no cited source for the burst: unknown
    assert (g6.network_baseline_gbps, g6.network_burst_gbps) == (2.5, 10)  # "Up to 10 Gigabit"
    p5 = catalog.instance("p5.48xlarge")
    assert p5 is not None and p5.network_burst_gbps == p5.network_baseline_gbps == 3200


def test_serving_roles_labels_and_names_are_data(catalog: Catalog) -> None:
    assert set(catalog.serving_families()) >= {"g4dn", "g5", "g6", "g6e", "inf2", "g7e"}
    assert not {"p5", "trn1", "g6f"} & set(catalog.serving_families())
    assert catalog.is_training_class("p6-b300") and catalog.is_training_class("trn1n")
    assert not catalog.is_training_class("g6e")
    labels = {  # nvidia.com/gpu.product, as GPU feature discovery sets it
        "g6.xlarge": "NVIDIA-L4",
        "g6e.xlarge": "NVIDIA-L40S",
        "g5.xlarge": "NVIDIA-A10G",
        "g4dn.xlarge": "Tesla-T4",
        "p5.48xlarge": "NVIDIA-H100-80GB-HBM3",
        "p4d.24xlarge": "NVIDIA-A100-SXM4-40GB",
        "p4de.24xlarge": "NVIDIA-A100-SXM4-80GB",
        "p5en.48xlarge": "NVIDIA-H200",
        "p6-b200.48xlarge": "NVIDIA-B200",
        "p6-b300.48xlarge": "NVIDIA-B300-SXM6-AC",
        "g7e.2xlarge": "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition",
    }
    for name, label in labels.items():
        assert catalog.gpu_product(name) == label, name
    assert catalog.gpu_product("inf2.xlarge") is None and catalog.gpu_product("g6f.large") is None
    assert {"L4", "L40S", "A10G", "T4", "Inferentia2", "H100", "A100", "H200", "B200"} <= set(
        catalog.accelerator_names()
    )


# ---- prices and regions


def test_every_type_has_a_price_in_every_region_the_dataset_sells_it_in(catalog: Catalog) -> None:
    assert catalog.offered_in
    for name, regions in catalog.offered_in.items():
        missing = [r for r in regions if catalog.on_demand(name, r) is None]
        assert not missing, (name, missing)
    # the holes the audit found: g6.48xlarge in us-west-2, p5.4xlarge where ec2instances.info sells it
    assert catalog.on_demand("g6.48xlarge", "us-west-2").usd_per_hour == Decimal("13.3504")  # type: ignore[union-attr]
    assert set(catalog.priced_regions("p5.4xlarge")) == {
        "ap-northeast-1",
        "ap-south-1",
        "ap-southeast-2",
        "ap-southeast-3",
        "eu-west-2",
        "sa-east-1",
        "us-east-1",
        "us-east-2",
        "us-west-2",
    }


def test_types_newer_than_the_price_snapshot_are_priced_where_aws_lists_them(catalog: Catalog) -> None:
    # g7 launched 2026-06-18, after ec2instances.info's 2026-01-21 snapshot; karpenter's AWS Price List table
    # (generated 2026-07-20 for us-east-1) prices g7.2xlarge at 2.52 and g7.48xlarge at 28.51328
    for name, usd in (("g7.2xlarge", "2.52"), ("g7.48xlarge", "28.51328")):
        row = catalog.on_demand(name, "us-east-1")
        assert row is not None and row.usd_per_hour == Decimal(usd) and row.source == "kp-price", name
        assert catalog.offered_regions(name) == ("us-east-1",)
        assert catalog.priced_regions(name) == ("us-east-1",)


def test_prices_are_list_prices_the_audit_confirmed(catalog: Catalog) -> None:
    audit = {  # shared/reviews/catalog-audit-2026-12.md section 3 (independent copies)
        ("p5.48xlarge", "us-east-1"): "55.04",
        ("p5.48xlarge", "eu-west-2"): "71.552",
        ("p4d.24xlarge", "eu-central-1"): "27.43298",
        ("g6e.12xlarge", "ap-northeast-1"): "15.21742",
        ("p6-b200.48xlarge", "us-east-2"): "113.9328",
        ("trn1.32xlarge", "us-east-1"): "21.5",
    }
    for (name, region), usd in audit.items():
        assert catalog.on_demand(name, region).usd_per_hour == Decimal(usd), (name, region)  # type: ignore[union-attr]


def test_regions_include_the_newest_ec2_regions(catalog: Catalog) -> None:
    assert {"ap-east-2", "ap-southeast-6", "mx-central-1", "us-east-1"} <= catalog.regions
    assert {p.region for p in catalog.on_demand_prices} <= catalog.regions


def test_no_spot_discount_is_zero_or_less(catalog: Catalog) -> None:
    assert len(catalog.spot_distributions) > 500
    for s in catalog.spot_distributions:
        assert s.mean > 0 and s.high > 0 and (s.low is None or s.low > 0), s
        assert (s.low or s.mean) <= s.mean <= s.high
    assert Decimal(0) < catalog.spot_default.discount < 1


def test_spot_discount_is_the_zone_mean_or_the_flagged_default(catalog: Catalog) -> None:
    found = catalog.spot_discount("p5.48xlarge", "us-west-2")
    # van-spot us-west-2: on-demand 55.04, spot_avg 18.037475 -> 1 - 18.037475/55.04 = 0.6723 (4 places)
    assert isinstance(found.entry, SpotDistribution) and found.discount == Decimal("0.6723")
    fallback = catalog.spot_discount("p5.48xlarge", "mx-central-1")
    assert isinstance(fallback.entry, SpotDefault) and fallback.discount == catalog.spot_default.discount


def test_stale_and_missing_service_prices_are_unknown_not_guessed(catalog: Catalog) -> None:
    assert catalog.service("ec2_capacity_block/p5.48xlarge/us-east-1") is None
    assert catalog.unknown_price("ec2_capacity_block/p5.48xlarge/us-east-1") is not None
    for key in ("pcs/controller/small", "pcs/controller/medium", "pcs/controller/large", "pcs/node_management"):
        assert catalog.service(key) is None and catalog.unknown_price(key) is not None
    waf = {"waf/web_acl": "5.00", "waf/rule": "1.00", "waf/requests": "0.60"}  # Infracost's WAF golden test
    for key, usd in waf.items():
        assert catalog.service(key).usd == Decimal(usd)  # type: ignore[union-attr]


# ---- the load-time checks refuse an inconsistent catalog


def test_consistency_check_passes_on_the_bundled_catalog(catalog: Catalog) -> None:
    assert list(consistency_problems(catalog)) == []


def test_consistency_check_refuses_a_type_without_network_data(catalog: Catalog) -> None:
    p5 = catalog.instance("p5.48xlarge")
    assert p5 is not None
    broken = p5.model_copy(update={"cards": (), "efa_cards": ()})
    bad = dataclasses.replace(
        catalog, instance_types=(*[i for i in catalog.instance_types if i.name != p5.name], broken)
    )
    assert any("p5.48xlarge: no network-card data" in p for p in consistency_problems(bad))


def test_consistency_check_refuses_a_gpu_without_a_product_label(catalog: Catalog) -> None:
    bad = dataclasses.replace(
        catalog, accelerator_models=tuple(a for a in catalog.accelerator_models if a.name != "L40S")
    )
    assert any("g6e.xlarge" in p and "nvidia.com/gpu.product" in p for p in consistency_problems(bad))


# ---- what was there before and stays


def test_fsx_capacity_rounds_to_valid_increments(catalog: Catalog) -> None:
    got = [catalog.fsx_capacity_gib(x) for x in (1000, 1200, 1201, 2400, 2401, 4800, 48000, 48001)]
    assert got == [1200, 1200, 2400, 2400, 4800, 4800, 48000, 50400]


def test_efa_fsx_capacity_comes_in_whole_steps_of_its_tier(catalog: Catalog) -> None:
    """EFA-enabled PERSISTENT_2: one file server's storage per step, 38.4 TiB at 125 MB/s/TiB down to 4.8 TiB at
    1000 (fsx-efa-capacity); never below one step."""
    assert catalog.fsx_capacity_gib(1200, 125) == 38400
    assert catalog.fsx_capacity_gib(48000, 250) == 57600  # 3 x 19,200
    assert catalog.fsx_capacity_gib(48000, 500) == 48000  # 5 x 9,600
    assert catalog.fsx_capacity_gib(48001, 1000) == 52800  # 11 x 4,800


def test_the_fsx_efa_clients_are_the_guides_named_families(catalog: Catalog) -> None:
    assert catalog.fsx_efa_client("p5.48xlarge") and catalog.fsx_efa_client("p5en.48xlarge")
    assert not catalog.fsx_efa_client("p4d.24xlarge")  # EFA, but not named by the guide: the default leaves it off
    assert not catalog.fsx_efa_client("g5.4xlarge")  # no EFA at all


def test_dgx_h100_node_power(catalog: Catalog) -> None:
    assert catalog.node_power("p5.48xlarge").max_kw == 10.2  # type: ignore[union-attr]
    assert catalog.cooling_limit("air").max_kw_per_rack == 30


@pytest.mark.parametrize("name", ["p5e.48xlarge"])
def test_capacity_block_only_types_have_no_on_demand_price(catalog: Catalog, name: str) -> None:
    assert catalog.priced_regions(name) == () and catalog.family("p5e").capacity_blocks  # type: ignore[union-attr]


def test_service_prices_match_infracosts_golden_outputs_they_cite(catalog: Catalog) -> None:
    """Infracost's golden test outputs (its price API, us-east-1), as cited in sources.yaml: monthly figures over
    730 hours, rounded to the cent as the goldens print them."""
    monthly = {  # key: (golden monthly USD, quantity per month)
        "elb/alb": ("16.43", 730),  # lb_test: Application load balancer 730 hours $16.43
        "elb/nlb": ("16.43", 730),
        "elb/alb_lcu": ("5.84", 730),  # "$5.84 per LCU" a month
        "elb/nlb_lcu": ("4.38", 730),
        "nat/gateway": ("32.85", 730),  # nat_gateway_test
        "nat/data_processed": ("0.045", 1),  # "$0.045 per GB"
        "ebs/gp3": ("3.20", 40),  # ebs_volume_test: gp3 40 GB $3.20
        "ebs/gp2": ("1.00", 10),
        "cloudwatch/alarm_standard": ("0.10", 1),  # cloudwatch_metric_alarm_test
        "cloudwatch/alarm_high_resolution": ("0.30", 1),
        "route53/health_check_aws": ("0.50", 1),  # route53_health_check_test: simple
        "s3/standard": ("230.00", 10_000),  # s3_bucket_test: Standard storage 10,000 GB $230.00
    }
    for key, (usd, qty) in monthly.items():
        price = catalog.service(key)
        assert price is not None and price.source in catalog.sources, key
        assert (price.usd * qty).quantize(Decimal(usd), ROUND_HALF_UP) == Decimal(usd), key  # as Infracost prints
        assert "infracost" in catalog.sources[price.source].url, key


def test_no_source_is_an_internal_note(catalog: Catalog) -> None:
    for key, source in catalog.sources.items():
        assert "shared/reference" not in source.title + source.url, key
