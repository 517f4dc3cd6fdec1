"""The bundled catalog: every entry cites a source and a date; the figures the issue names are there."""

from __future__ import annotations

import datetime
from decimal import Decimal

from infra.catalog import Catalog


def test_every_entry_has_a_known_source_and_a_date(catalog: Catalog) -> None:
    entries = [
        *catalog.instance_types,
        *catalog.on_demand_prices,
        *catalog.spot_observed,
        *catalog.spot_ranges,
        *catalog.quota_codes,
        *catalog.node_powers,
        *catalog.accelerators,
        *catalog.cooling_limits,
        *catalog.service_prices,
        catalog.spot_default,
        catalog.fsx_capacity,
        catalog.region_list,
    ]
    assert entries
    for entry in entries:
        assert entry.source in catalog.sources, entry
        assert datetime.date(2019, 1, 1) <= entry.as_of <= datetime.date(2026, 12, 31)


def test_p5_spot_uses_the_p5_code_not_the_p4_one(catalog: Catalog) -> None:
    assert catalog.quota_code("p5", "spot").code == "L-C4BD4855"  # type: ignore[union-attr]
    assert catalog.quota_code("p4d", "spot").code == "L-7212CCBC"  # type: ignore[union-attr]
    assert catalog.quota_code("p5", "on_demand").code == "L-417A185B"  # type: ignore[union-attr]


def test_efa_counts_match_the_reference(catalog: Catalog) -> None:
    expected = {"p5.48xlarge": 32, "p5en.48xlarge": 16, "p4d.24xlarge": 4, "p6-b200.48xlarge": 8, "trn1.32xlarge": 8}
    for name, efa in expected.items():
        info = catalog.instance(name)
        assert info is not None and info.efa_interfaces == efa and info.network_cards >= efa


def test_prices_cover_every_example_region(catalog: Catalog) -> None:
    assert catalog.on_demand("p5.48xlarge", "us-east-1").usd_per_hour == Decimal("55.04")  # type: ignore[union-attr]
    for region in ("us-east-1", "us-west-2", "eu-central-1"):
        assert catalog.on_demand("g6.xlarge", region) is not None
    assert catalog.on_demand("g6e.xlarge", "ap-northeast-1") is not None


def test_spot_discount_prefers_the_most_specific_entry(catalog: Catalog) -> None:
    assert catalog.spot_discount("p5.48xlarge", "us-east-2").discount == Decimal("0.7955")
    assert catalog.spot_discount("p5.48xlarge", "us-east-1").discount == Decimal("0.53")
    assert catalog.spot_discount("p5.48xlarge", "eu-north-1").discount == Decimal("0.53")  # family low end
    assert catalog.spot_discount("trn1.32xlarge", "us-east-1").discount == catalog.spot_default.discount


def test_fsx_capacity_rounds_to_valid_increments(catalog: Catalog) -> None:
    assert [catalog.fsx_capacity_gib(x) for x in (1000, 1200, 1201, 2400, 2401, 4800, 48000, 48001)] == [
        1200,
        1200,
        2400,
        2400,
        4800,
        4800,
        48000,
        50400,
    ]


def test_dgx_h100_node_power(catalog: Catalog) -> None:
    assert catalog.node_power("p5.48xlarge").max_kw == 10.2  # type: ignore[union-attr]
    assert catalog.cooling_limit("air").max_kw_per_rack == 30
