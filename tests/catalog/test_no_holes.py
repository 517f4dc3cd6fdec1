"""No holes: every type the examples and `instance: auto` can pick has an on-demand price in every Region the price
data says it is sold in; an example's line without a price says why (the catalog's stated reason, or the usage it
needs); `gpuinfra catalog --region R` shows R's own price, not the cheapest Region's."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from gpuinfra.catalog import Catalog, load_catalog
from gpuinfra.cost import price_graph
from helpers import example_graph, gpuinfra

EXAMPLES = ("chat-serve", "chat-serve-k8s", "llm-train", "llm-train-eks", "model-registry")


def pickable(catalog: Catalog) -> set[str]:
    """Every type of a serving family (what auto chooses among) and every type an example names (training nodes,
    the PCS login and EKS system node types, per-region overrides): read from the example graphs."""
    names = {i.name for i in catalog.instance_types if i.family in catalog.serving_families() and i.is_accelerated}
    for stack in EXAMPLES:
        text = json.dumps([r.inputs for r in example_graph(stack).resources])
        names |= {n for n in catalog.instance_names() if f'"{n}"' in text}
    return names


def test_every_pickable_type_is_priced_wherever_it_is_sold() -> None:
    catalog = load_catalog()
    names = pickable(catalog)
    assert {"g6e.xlarge", "p5.48xlarge", "m7i.2xlarge", "g7e.2xlarge"} <= names
    holes = {(n, r) for n in names for r in catalog.offered_regions(n) if catalog.on_demand(n, r) is None}
    assert not holes, sorted(holes)
    assert all(catalog.priced_regions(n) for n in names), [n for n in names if not catalog.priced_regions(n)]


@pytest.mark.parametrize("stack", EXAMPLES)
def test_an_examples_unpriced_line_says_why(stack: str) -> None:
    """A line is unknown only with a reason a reader can act on: usage to supply, an input known after creation,
    or the catalog's own statement of why it has no price (services.yaml `unknown`)."""
    catalog = load_catalog()
    breakdown = price_graph(example_graph(stack), catalog)
    for resource, line in breakdown.unpriced():
        assert line.note, (resource.name, line.name)
        if "not-in-catalog" in line.flags and "pcs" in line.name.lower():
            assert "no citable copy of the AWS PCS pricing page" in line.note, line.note  # the stated reason


def test_catalog_region_shows_that_regions_price() -> None:
    catalog = load_catalog()
    g6 = catalog.instance("g6.xlarge")
    assert g6 is not None
    here, cheapest = (
        catalog.on_demand("g6.xlarge", "eu-central-1"),
        min(p.usd_per_hour for r in catalog.priced_regions("g6.xlarge") if (p := catalog.on_demand("g6.xlarge", r))),
    )
    assert here is not None and here.usd_per_hour != cheapest  # the bug showed the cheapest Region's price
    done = gpuinfra("catalog", "--region", "eu-central-1", "--accelerator", "L4", "--format", "json")
    assert done.returncode == 0, done.stderr
    row = next(t for t in json.loads(done.stdout)["types"] if t["name"] == "g6.xlarge")
    assert (row["region"], Decimal(row["region_on_demand_usd"])) == ("eu-central-1", here.usd_per_hour)
    table = gpuinfra("catalog", "--region", "eu-central-1", "--accelerator", "L4")
    assert "eu-central-1 $/h" in table.stdout and f"${here.usd_per_hour:.4f}" in table.stdout


@pytest.mark.parametrize("stack", EXAMPLES)
def test_an_examples_only_lines_without_a_catalog_price_are_pcs_fees(stack: str) -> None:
    """Issue #30: no example line lacks a price that a public source gives. What stays not-in-catalog is AWS PCS's
    own: controller and node management fees, for which no citable price was found, and the queue, for which no
    citable statement that it is free was found."""
    breakdown = price_graph(example_graph(stack), load_catalog())
    missing = {
        (resource.name, line.name)
        for resource, line in breakdown.unpriced()
        if "not-in-catalog" in line.flags and not resource.type.startswith("aws-native:pcs:")
    }
    assert not missing
