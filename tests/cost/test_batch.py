"""AWS Batch compute environments launch instances, so they are priced and counted at the most their maxVcpus
allows (they were listed as free: "billed per run"), from none up, as a NodePool is."""

from __future__ import annotations

from decimal import Decimal

from gpuinfra.catalog import Catalog
from gpuinfra.cost import HOURS_PER_MONTH, price_graph
from gpuinfra.graph.launchers import batch_bounds
from helpers import example_graph

CE = "aws:batch/computeEnvironment:ComputeEnvironment"


def test_llm_finetune_environments_are_priced_up_to_max_vcpus(catalog: Catalog) -> None:
    """Each environment allows 16 vCPUs of p5.4xlarge (16 vCPUs): one instance, on-demand in one, spot in the other,
    with the launch template's 512 GB gp3 root volume."""
    b = price_graph(example_graph("llm-finetune"), catalog)
    od = catalog.on_demand("p5.4xlarge", "us-east-1")
    gp3 = catalog.service("ebs/gp3")
    assert od is not None and gp3 is not None and catalog.instance("p5.4xlarge").vcpu == 16  # type: ignore[union-attr]
    on_demand = {line.name: line for line in b.get(f"{CE}::llm-finetune-on-demand").lines}  # type: ignore[union-attr]
    instances = on_demand["Instances, on-demand (p5.4xlarge)"]
    assert (instances.monthly, instances.monthly_min, instances.monthly_max) == (
        0,
        0,
        od.usd_per_hour * HOURS_PER_MONTH,
    )
    assert instances.monthly_max == Decimal("5022.40")  # the catalog's $6.88/hour (us-east-1) x 730 hours
    assert on_demand["EBS /dev/xvda (gp3, 512 GB x 0)"].monthly_max == 512 * gp3.usd
    spot = b.get(f"{CE}::llm-finetune-spot")
    assert spot is not None and any(line.name.startswith("Instances, spot (p5.4xlarge") for line in spot.lines)
    assert not b.partial


def test_what_cannot_be_bounded_is_unknown() -> None:
    assert batch_bounds({"computeResources": {"type": "FARGATE", "maxVcpus": 16}})[1] is None
    assert batch_bounds({"computeResources": {"type": "EC2", "instanceTypes": ["optimal"], "maxVcpus": 16}})[1] is None
    assert batch_bounds(
        {"computeResources": {"type": "SPOT", "instanceTypes": ["p5.4xlarge", "p5.48xlarge"], "maxVcpus": 200}}
    ) == (["p5.4xlarge", "p5.48xlarge"], 13, "spot")
