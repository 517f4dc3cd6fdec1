"""The hosted-API prices are catalog data: every row cites a source the file lists, dated as that source is
(undated here: the table gives no date of its own, so as_of is empty and the day it was read is stated)."""

from __future__ import annotations

import datetime

from gpuinfra.catalog.managed import load_managed_prices, table_problems


def test_every_row_cites_a_listed_source_and_its_date() -> None:
    table = load_managed_prices()
    assert table_problems(table) == []
    assert table.prices and all(p.source in table.sources for p in table.prices)
    source = table.sources["litellm-1.110.2"]
    assert source.date is None and source.read_on == datetime.date(2026, 12, 6)
    assert all(p.as_of is None for p in table.prices)


def test_the_check_sees_an_unknown_source_and_a_made_up_date() -> None:
    table = load_managed_prices()
    row = table.prices[0]
    bad = table.model_copy(
        update={
            "prices": (
                row.model_copy(update={"source": "nowhere"}),
                row.model_copy(update={"as_of": datetime.date(2026, 1, 1)}),
            )
        }
    )
    problems = table_problems(bad)
    assert any("unknown sources ['nowhere']" in p for p in problems)
    assert any("as_of is not the source's date" in p for p in problems)


def test_several_providers_are_compared_for_each_size() -> None:
    table = load_managed_prices()
    for size in (8, 70):
        providers = {p.provider for p in table.comparable(size)}
        assert len(providers) >= 3, size
    assert {p.parameters_billion for p in table.comparable(70.6)} == {70}  # within 15%
    assert table.comparable(405) == []  # no row: unknown, never a guess from another size
