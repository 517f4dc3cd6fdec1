"""AWS's quota codes (clouds/aws/catalog/data/quotas.yaml): the codes typed in from AWS's "Amazon EC2 instance type
quotas" page (the source the file cites, which gives no date), never read back from the code under test; and the
check that refuses a file that leaves a family the catalog sells without a code or a statement that none is known."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from gpuinfra.catalog import Catalog, CatalogError
from gpuinfra.clouds import cloud
from gpuinfra.clouds.aws.catalog import DATA_FILE, QuotaBook, quota_book
from gpuinfra.clouds.aws.catalog.quotas import problems, read_book


@pytest.fixture(scope="module")
def book() -> QuotaBook:
    return quota_book()


def code(book: QuotaBook, family: str, purchase: str, scope: str = "account") -> str | None:
    found = book.code(family, purchase, scope)  # type: ignore[arg-type]
    return found.code if found else None


def test_the_book_is_the_registrys_and_lives_in_the_aws_package(book: QuotaBook) -> None:
    assert cloud("aws").part("quota_book")() is book
    assert DATA_FILE.relative_to(Path(__file__).resolve().parents[2] / "infra" / "gpuinfra" / "clouds" / "aws")
    assert all(q.source == "aws-ec2-quotas" and q.as_of is None for q in book.codes)  # AWS's page gives no date
    assert all(u.source == "aws-ec2-quotas" and u.as_of is None for u in book.unknowns)


def test_inf_quota_codes(book: QuotaBook) -> None:
    for family in ("inf1", "inf2"):
        assert code(book, family, "on_demand") == "L-1945791B"  # Running On-Demand Inf instances
        assert code(book, family, "spot") == "L-B5D1601B"  # All Inf Spot Instance Requests
    assert book.name("L-1945791B") == "Running On-Demand Inf instances"
    assert book.name("L-B5D1601B") == "All Inf Spot Instance Requests"


def test_p_quota_codes_and_p6_spot_is_stated_unknown(book: QuotaBook) -> None:
    for family in ("p4d", "p4de", "p5", "p5en", "p6-b200", "p6-b300"):
        assert code(book, family, "on_demand") == "L-417A185B"
    assert code(book, "p4d", "spot") == "L-7212CCBC"  # All P4, P3 and P2 Spot Instance Requests
    assert code(book, "p5", "spot") == code(book, "p5en", "spot") == "L-C4BD4855"  # All P5 Spot ...
    for family in ("p6-b200", "p6-b300"):
        assert code(book, family, "spot") is None
        unknown = book.unknown(family, "spot")
        assert unknown is not None and "P6" in unknown.reason


def test_capacity_block_quota_codes(book: QuotaBook) -> None:
    per_account = {
        "p4d": "L-2C8F52B3",
        "p5": "L-DA6814F2",
        "p5e": "L-C45F30BC",
        "p5en": "L-4F9BB70B",
        "trn1": "L-2E30FD7D",
    }
    per_org = {"p4d": "L-B67430DE", "p5": "L-8131B2C6", "p5e": "L-AD1D1866", "p5en": "L-7EA86503", "trn1": "L-C4947F9A"}
    for family, expected in per_account.items():
        assert code(book, family, "capacity_block") == expected
        assert code(book, family, "capacity_block", "organization") == per_org[family]
    for family in ("p4de", "p6-b200", "p6-b300"):  # sold as Capacity Blocks; no AWS-listed quota
        assert code(book, family, "capacity_block") is None
        assert book.unknown(family, "capacity_block") is not None


def test_every_family_the_catalog_sells_maps_to_an_on_demand_and_a_spot_code_or_says_none_is_known(
    catalog: Catalog, book: QuotaBook
) -> None:
    sold = {i.family for i in catalog.instance_types if not i.onprem}
    assert {"g7e", "p6-b300", "trn1n", "inf1"} <= sold
    for family in sold:
        for purchase in ("on_demand", "spot"):
            assert code(book, family, purchase) or book.unknown(family, purchase), (family, purchase)  # type: ignore[arg-type]
        fam = catalog.family(family)
        assert fam is not None
        if fam.capacity_blocks:
            assert code(book, family, "capacity_block") or book.unknown(family, "capacity_block")


def test_the_check_refuses_a_family_without_a_quota_statement(catalog: Catalog, book: QuotaBook) -> None:
    assert list(problems(book, catalog)) == []
    bad = dataclasses.replace(book, codes=tuple(q for q in book.codes if q.code != "L-B5D1601B"))
    assert any("family inf2 has no spot quota code" in p for p in problems(bad, catalog))


def test_the_check_refuses_an_unknown_source_or_a_date_the_source_does_not_give(
    catalog: Catalog, book: QuotaBook
) -> None:
    renamed = dataclasses.replace(book, codes=(book.codes[0].model_copy(update={"source": "aws-quota-blog"}),))
    assert any("unknown sources: aws-quota-blog" in p for p in problems(renamed, catalog))
    dated = dataclasses.replace(book, unknowns=(book.unknowns[0].model_copy(update={"as_of": "2026-01-01"}),))
    assert any("aws-ec2-quotas as_of 2026-01-01" in p for p in problems(dated, catalog))


def test_an_unreadable_file_is_a_catalog_error_naming_it(tmp_path: Path) -> None:
    broken = tmp_path / "quotas.yaml"
    broken.write_text("codes:\n  - {code: L-1, name: x, purchase: sometimes, families: [p5], source: s, as_of: null}\n")
    with pytest.raises(CatalogError, match=r"quotas\.yaml"):
        read_book(broken)
