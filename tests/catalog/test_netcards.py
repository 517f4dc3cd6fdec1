"""A sample of the catalog's network-card data against shared/upstream/aws/netcards.json (karpenter's
generated VPC limits: maximum interfaces and interfaces per card, read 2026-12-02). The file is a fact for
tests only; without it the test fails in CI and skips elsewhere."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from gpuinfra.catalog import Catalog

NETCARDS = Path(__file__).resolve().parents[2].parent / "shared" / "upstream" / "aws" / "netcards.json"


def netcards() -> dict[str, list[object]]:
    if not NETCARDS.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{NETCARDS} is missing: CI must have shared/ beside the checkout")
        pytest.skip(f"{NETCARDS} not present outside CI")
    return json.loads(NETCARDS.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_interfaces_per_card_match_karpenters_vpc_limits(catalog: Catalog) -> None:
    upstream = netcards()
    common = sorted(set(upstream) & {i.name for i in catalog.instance_types})
    assert len(common) >= 30 and "p5.48xlarge" in common
    for name in common:
        total, per_card = upstream[name]
        info = catalog.instance(name)
        assert info is not None
        assert (info.max_interfaces, list(info.cards)) == (total, per_card), name


def test_every_upstream_type_of_a_catalog_family_is_carried(catalog: Catalog) -> None:
    """Coverage: a type karpenter's VPC limits describe, in a family the catalog sells, is in the catalog with
    that layout (p5.4xlarge, p6-b300 with 17 cards, trn1n, g6f...). trn2.48xlarge has no entry there (nor in
    karpenter's VPC limits at 1d927085): the catalog leaves it out rather than guess its cards."""
    upstream = netcards()
    families = {i.family for i in catalog.instance_types if i.accelerator and not i.onprem}
    wanted = {n for n in upstream if n.split(".")[0] in families}
    assert {"p5.4xlarge", "p6-b300.48xlarge", "trn1n.32xlarge", "g6f.large", "g7e.48xlarge"} <= wanted
    assert wanted <= {i.name for i in catalog.instance_types}
    assert "trn2.48xlarge" not in upstream and catalog.instance("trn2.48xlarge") is None
