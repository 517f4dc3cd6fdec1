"""Unknown is visible: a total that leaves out a line whose price is unknown is a lower bound, marked partial
("at least") in the terminal table, the Markdown and the JSON, with a warning finding. Unpriced usage (nobody
supplied it) leaves a total whole, as Infracost's usage-based lines do."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from gpuinfra.catalog import Catalog
from gpuinfra.cost import HOURS_PER_MONTH, price_graph
from gpuinfra.report.build.cost import cost_out, cost_total
from gpuinfra.report.format import money
from graphs import graph, group, provider, res
from helpers import ample_quotas, gpuinfra, write_stack

REGION = "eu-west-1"
"""A region the catalog has no p5.48xlarge price in (`gpuinfra catalog p5.48xlarge` lists the priced ones)."""
UNPRICED = "p5e.48xlarge"
"""A type the catalog's price snapshot has no price for in any region (us-east-1 included)."""


def test_a_group_in_a_region_without_a_price_makes_the_total_partial(catalog: Catalog) -> None:
    assert catalog.on_demand("p5.48xlarge", REGION) is None
    p = provider(REGION)
    lt, asg = group("g", p, "p5.48xlarge", 8)
    b = price_graph(graph(p, lt, asg), catalog)
    unknown = [line.name for _, line in b.unknown_prices()]
    assert unknown == ["Instances, on-demand (p5.48xlarge)"]
    assert b.partial and b.get(asg.key).partial
    # The known part is the root volumes only: 8 x 512 GB of gp3 at the catalog's gp3 row ($0.08 per GB-month,
    # us-east-1's, flagged region-fallback): $327.68, the figure the review quoted for the understated group.
    assert b.monthly == Decimal("327.68")
    assert cost_out(b).partial and cost_total([cost_out(b)]).partial  # type: ignore[union-attr]


def test_usage_nobody_supplied_leaves_the_total_whole(catalog: Catalog) -> None:
    p = provider()
    lt, asg = group("g", p, "p5.48xlarge", 2)
    bucket = res("aws:s3/bucket:Bucket", "logs", p)
    b = price_graph(graph(p, lt, asg, bucket), catalog)
    assert b.unpriced() and all("usage-based" in line.flags for _, line in b.unpriced())
    assert not b.partial and b.unknown_prices() == []
    od = catalog.on_demand("p5.48xlarge", "us-east-1")
    assert od is not None and b.monthly > 2 * od.usd_per_hour * HOURS_PER_MONTH


@pytest.fixture(scope="module")
def eu_west(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """llm-train on p5e.48xlarge (with quota granted): the catalog's price snapshot lists no region and no price for
    that type, so the validators pass it (an unknown region is not a refusal: instance-type-not-in-region refuses
    only a type the snapshot lists elsewhere, as p5.48xlarge in eu-west-1) and nothing prices its nodes."""
    return write_stack(
        tmp_path_factory.mktemp("unpriced"),
        "llm-train",
        {"compute.instance_type": UNPRICED},
        ample_quotas(),
    )


@pytest.fixture(scope="module")
def eu_json(eu_west: Path) -> dict:
    result = gpuinfra("preview", str(eu_west), "--format", "json")
    # the cost is a warning; what fails is the budget, which a lower bound cannot judge
    assert result.returncode == 1, result.stderr
    stack = json.loads(result.stdout)["stacks"][0]
    (budget,) = [v for v in stack["policy"]["violations"] if v["policy"] == "budget-within-account"]
    assert budget["level"] == "mandatory" and budget["message"].startswith("cannot judge ml-training's budget")
    assert f"llm-train: aws-native:pcs:ComputeNodeGroup: Instances, on-demand ({UNPRICED})" in budget["message"]
    return stack


def test_the_json_marks_the_total_partial_and_names_the_lines(eu_json: dict) -> None:
    cost = eu_json["cost"]
    assert cost["partial"] is True
    assert (
        f"llm-train-slurm-pcs-od: Instances, on-demand ({UNPRICED}) (not-in-catalog): no catalog price for "
        f"{UNPRICED} on-demand in us-east-1" in cost["unknown_prices"]
    )
    assert set(cost["unknown_prices"]) <= set(cost["unpriced"])
    # The figure is what the known lines sum to, nothing filled in for the unknown ones.
    known = sum(
        (Decimal(line["monthly_usd"]) for r in cost["resources"] for line in r["lines"] if line["monthly_usd"]),
        Decimal(0),
    )
    assert Decimal(cost["monthly_usd"]) == known
    (finding,) = [f for f in eu_json["findings"] if f["rule"] == "cost-partial"]
    assert finding["level"] == "warning"
    assert finding["message"].startswith(f"the monthly cost is at least {money(known)}, not exactly: ")
    assert f"no catalog price for {UNPRICED} on-demand in us-east-1" in finding["message"]


@pytest.mark.parametrize(
    ("fmt", "headline"), [("table", "Cost: at least $"), ("markdown", "<summary>Cost: at least $")]
)
def test_the_table_and_markdown_headline_say_at_least(eu_west: Path, eu_json: dict, fmt: str, headline: str) -> None:
    result = gpuinfra("preview", str(eu_west), "--format", fmt)
    assert result.returncode == 1, result.stderr
    total = money(Decimal(eu_json["cost"]["monthly_usd"]))
    # the elastic spot group runs from none to 2 nodes, so the headline gives a range before it says partial
    (line,) = [line for line in result.stdout.splitlines() if f"{headline}{total.removeprefix('$')}/month" in line]
    assert "(partial: a price is unknown)" in line
    assert "cost-partial" in result.stdout


def test_a_fully_priced_stack_is_not_marked() -> None:
    result = gpuinfra("preview", "chat-serve", "--format", "json")
    stack = json.loads(result.stdout)["stacks"][0]
    assert stack["cost"]["partial"] is False and stack["cost"]["unknown_prices"] == []
    assert stack["cost"]["unpriced"], "chat-serve has usage-based lines, which do not make a total partial"
    assert not [f for f in stack["findings"] if f["rule"] == "cost-partial"]
