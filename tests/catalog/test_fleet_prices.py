"""What the catalog's price coverage means for fleets: a type that fits and is sold in every region of a fleet
is never refused for a missing price, a fleet over the regions AWS sells its type in has no unpriced compute,
and compute is never priced from another region (`region-fallback` is for service prices only).

"Sold in" is the price snapshot's own availability list (prices.json `offered_in`, kept apart from its price
rows), so these tests fail when a price row is missing, not when the code under test says so.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from gpuinfra.catalog import Catalog
from gpuinfra.cost import price_graph
from gpuinfra.cost.model import REGION_FALLBACK
from gpuinfra.plan.memory import ServingMemory
from gpuinfra.plan.serving import choose_instance
from helpers import example_graph, graph_for, rules_fired

COMPUTE = ("Instances", "Capacity block")
"""Names of the cost lines that price instances (infra/gpuinfra/clouds/aws/cost/compute.py)."""
SMALL = ServingMemory(weights_bytes=10**9, kv_bytes_per_token=0, kv_cache_bytes=0, needed_bytes=10**9)
"""A 1 GB model: every accelerated type holds it."""


def compute_lines(graph: Any, catalog: Catalog) -> list[Any]:
    return [
        (r, line)
        for r, line in price_graph(graph, catalog).lines()
        if any(line.name.startswith(prefix) for prefix in COMPUTE)
    ]


def test_a_type_sold_in_every_region_of_a_fleet_is_never_refused_for_a_missing_price(catalog: Catalog) -> None:
    """Every serving type, asked for by name and by `auto` with its accelerator, over exactly the regions the
    snapshot sells it in: it has a price summed over the fleet, and `auto` picks a type."""
    checked = 0
    for family in catalog.serving_families():
        for info in (i for i in catalog.instance_types if i.family == family and i.accelerator_count):
            regions = list(catalog.offered_regions(info.name))
            assert regions, info.name  # every serving type is sold somewhere
            named = choose_instance(info.name, None, SMALL, 0.9, regions, catalog)
            assert named.candidates[0].fits and named.candidates[0].usd_per_hour_total is not None, info.name
            # vLLM's CUDA image drives NVIDIA GPUs only, a Neuron build Inferentia/Trainium (plan/serving.py).
            server = "neuron" if info.accelerator_kind in ("inferentia", "trainium") else "cuda"
            auto = choose_instance("auto", info.accelerator, SMALL, 0.9, regions, catalog, server_kind=server)
            if auto.candidates:  # the planner's own family list decides which accelerators `auto` weighs
                assert auto.chosen is not None, (info.name, auto.reason)
            checked += 1
    assert checked > 30


def test_the_audits_holes(catalog: Catalog) -> None:
    """shared/reviews/catalog-audit-2026-12.md: no us-west-2 price for g6.48xlarge made `auto` refuse it; the
    ec2instances.info snapshot (2026-01-21) sells it there at 13.3504. g6e.12xlarge in ap-southeast-1 is no hole:
    neither snapshot sells it there (the 2025-11-30 records list g6e.12xlarge with Dedicated-only prices in some
    regions and not at all in ap-southeast-1), so it stays unknown and `auto` says why."""
    assert "us-west-2" in catalog.offered_regions("g6.48xlarge")
    choice = choose_instance("g6.48xlarge", None, SMALL, 0.9, ["us-west-2", "us-east-1"], catalog)
    assert choice.candidates[0].usd_per_hour_total == Decimal("13.3504") * 2  # same list price in both regions
    assert "ap-southeast-1" not in catalog.offered_regions("g6e.12xlarge")
    assert catalog.on_demand("g6e.12xlarge", "ap-southeast-1") is None


def fleet(regions: list[str], instance: dict[str, Any]) -> dict[str, Any]:
    """chat-serve's spec mutated to one small region entry per region."""
    return {
        "instance": instance,
        "regions": [
            {
                "region": r,
                "min_replicas": 1,
                "max_replicas": 3,
                "peak_rps": 4,
                "certificate_arn": f"arn:aws:acm:{r}:222222222222:certificate/0a1b2c3d-{r}",
            }
            for r in regions
        ],
    }


def grants(regions: list[str]) -> dict[str, Any]:
    """Quotas and registry replicas for every region: the test is about prices, not quotas (their own tests)."""
    org: dict[str, Any] = {"registry.replica_regions": [r for r in regions if r != "us-east-1"]}
    for r in regions:
        org[f"accounts.ml-inference.quotas.{r}"] = {"L-DB2E81BA": 100_000, "L-3819A6DF": 100_000}
    return org


def test_the_chat_serve_example_has_no_unpriced_compute(catalog: Catalog) -> None:
    lines = compute_lines(example_graph("chat-serve"), catalog)
    assert lines
    assert [(r.name, line.name) for r, line in lines if line.monthly is None] == []


@pytest.mark.parametrize(
    ("instance", "sold_like"),
    [
        ({"type": "auto", "gpu": "L4"}, "g6.xlarge"),
        ({"type": "g6e.xlarge"}, "g6e.xlarge"),
        ({"type": "g5.xlarge"}, "g5.xlarge"),
    ],
)
def test_a_fleet_over_every_region_its_type_is_sold_in_has_no_unpriced_compute(
    catalog: Catalog, instance: dict[str, Any], sold_like: str
) -> None:
    regions = list(catalog.offered_regions(sold_like))
    assert len(regions) >= 8, regions  # ec2instances.info (2026-01-21): g6e.xlarge 8, g5.xlarge 17, g6.xlarge 18
    graph = graph_for("chat-serve", spec=fleet(regions, instance), org=grants(regions))
    lines = compute_lines(graph, catalog)
    priced_regions = {r.where.region for r, _ in lines}
    assert priced_regions == set(regions)
    assert [(r.name, line.name) for r, line in lines if line.monthly is None] == []
    assert not [line.name for _, line in lines if REGION_FALLBACK in line.flags]


def test_compute_is_never_priced_from_another_region(catalog: Catalog) -> None:
    """A region the snapshot does not sell the type in gets an unknown compute line, never us-east-1's price;
    the example stacks' compute lines carry no region-fallback flag."""
    for stack in ("llm-train", "chat-serve", "llm-train-eks"):
        lines = compute_lines(example_graph(stack), catalog)
        assert lines and not [line.name for _, line in lines if REGION_FALLBACK in line.flags], stack
    region = "ap-east-2"  # an EC2 region (botocore 1.44.8) where the snapshot sells no GPU type
    assert catalog.on_demand("g6e.xlarge", region) is None
    graph = graph_for("chat-serve", spec=fleet([region], {"type": "g6e.xlarge"}), org=grants([region]))
    lines = compute_lines(graph, catalog)
    assert lines and all(line.monthly is None and REGION_FALLBACK not in line.flags for _, line in lines)


def test_an_auto_fleet_in_a_region_without_prices_is_refused(catalog: Catalog) -> None:
    """ap-east-2 is an EC2 region where the snapshot sells no GPU type: `auto` is refused (an error), never
    priced from another region. (The finding's wording is the serving validator's.)"""
    from helpers import checked as check_example

    spec = fleet(["ap-east-2"], {"type": "auto", "gpu": "L4"})
    assert "no-instance-fits" in rules_fired(check_example("chat-serve", spec=spec, org=grants(["ap-east-2"])))
    choice = choose_instance("auto", "L4", SMALL, 0.9, ["ap-east-2"], catalog)
    assert choice.chosen is None and "no on-demand price in ap-east-2" in choice.reason
    assert all(c.fits and c.usd_per_hour_total is None for c in choice.candidates)


def test_the_catalog_command_shows_the_prices_the_pricer_uses(catalog: Catalog) -> None:
    """What `gpuinfra catalog TYPE` prints per region is what chat-serve's compute lines are priced at."""
    from gpuinfra.report.build.catalog import detail_out

    checked = 0
    for r, line in compute_lines(example_graph("chat-serve"), catalog):
        instance_type = line.name.split("(")[1].split(",")[0].rstrip(")")
        info = catalog.instance(instance_type)
        assert info is not None
        shown = next(p for p in detail_out(catalog, info).prices if p.region == r.where.region)
        if line.name.startswith("Instances, on-demand"):
            assert line.unit_price == shown.on_demand_usd, (r.name, line.name)
        elif shown.spot is not None:  # the zone mean; rows without one are priced at the flagged default
            assert line.unit_price is not None
            assert line.unit_price.quantize(Decimal("0.0001")) == shown.spot.mean_usd, (r.name, line.name)
        checked += 1
    assert checked >= 8  # on-demand and spot groups in four regions


def test_auto_weighs_every_family_the_catalog_says_serves(catalog: Catalog) -> None:
    for accelerator, name in (("RTX-PRO-6000", "g7e.2xlarge"), ("RTX-PRO-4500", "g7.2xlarge")):
        regions = list(catalog.offered_regions(name))
        choice = choose_instance("auto", accelerator, SMALL, 0.9, regions, catalog)
        assert choice.chosen is not None, (accelerator, choice.reason)
