"""Training compute rules."""

from __future__ import annotations

import pytest
from helpers import Case, run_case

BEFORE_T15 = {"compute.capacity": {"type": "spot", "on_demand_base": 4}, "compute.elastic": None}
"""llm-train before the review's finding T15: spot above an on-demand base of 4, no elastic partition (the account's
P5 spot quota holds exactly that beside llm-train-eks and llm-finetune)."""

CASES = [
    # p5.48xlarge's regions in the price snapshot (ec2instances.info, 2026-01-21): 13, none in the EU but eu-north-1
    # and eu-west-2; eu-west-1 is not one of them.
    Case(
        "instance-type-not-in-region",
        "llm-train",
        {"region": "eu-west-1", "availability_zone": "eu-west-1a"},
        message="p5.48xlarge is not offered in eu-west-1",
    ),
    Case(
        "instance-type-not-in-region",
        "llm-train",
        {"region": "eu-north-1", "availability_zone": "eu-north-1a"},
        fires=False,
    ),
    Case("instance-type-not-in-region", "llm-train", fires=False),
    Case(
        "instance-not-for-provider",
        "llm-train",
        {"compute.instance_type": "dgx-h100.system"},
        message="dgx-h100.system is an on-premises system, not an EC2 instance type",
    ),
    Case(
        "instance-not-for-provider",
        "llm-train-onprem",
        {"compute.instance_type": "p5.48xlarge"},
        message="p5.48xlarge is an EC2 instance type; on premises name the racked system",
    ),
    Case("instance-not-for-provider", "llm-train-onprem", fires=False),
    Case(
        "node-names-mismatch",
        "llm-train-onprem",
        {"onprem.inventory": [], "onprem.node_names": ["dgx-000", "dgx-000"]},
        message="2 node names for node_count 32",
    ),
    Case("node-names-mismatch", "llm-train-onprem", fires=False),
    Case(
        "onprem-inventory-missing",
        "llm-train-onprem",
        {"onprem.inventory": [], "onprem.node_name_pattern": "dgx-{index:03d}"},
        message="labels would be guessed from the node names' order",
    ),
    Case("onprem-inventory-missing", "llm-train-onprem", fires=False),
    Case(
        "inventory-rack-over-budget",
        "llm-train-onprem",
        {"onprem.inventory[4].rack": "r01"},
        message="rack r01 holds 5 systems \\(51 kW at 10.2 kW each\\) over its 44 kW budget",
    ),
    Case("inventory-rack-over-budget", "llm-train-onprem", fires=False),
    Case(
        "spot-job-not-declared",
        "llm-train-eks",
        {"job.spot": False},
        message="the job spans all 16 nodes, 12 of them spot, but does not say it may run on spot",
    ),
    Case("spot-job-not-declared", "llm-train-eks", fires=False),
    Case(
        "site-gpus-exceed-allotment",
        "llm-train-onprem",
        org={"onprem_sites.dc-east.gpu_allotment": 128},
        message="site dc-east grants 128 GPUs; the cluster queue would hold 256",
    ),
    Case("site-gpus-exceed-allotment", "llm-train-onprem", fires=False),
    Case("efa-not-enabled", "llm-train", {"interconnect.type": "none"}, message="p5.48xlarge has 32 EFA interface"),
    Case("efa-not-enabled", "llm-train", fires=False),
    Case("efa-unsupported", "llm-train", {"compute.instance_type": "g6.xlarge"}, message="g6.xlarge has no EFA"),
    Case("efa-unsupported", "llm-train", {"compute.instance_type": "p4d.24xlarge"}, fires=False),
    Case(
        "interconnect-provider-mismatch",
        "llm-train",
        {"interconnect.type": "infiniband"},
        message="InfiniBand is not available on AWS",
    ),
    Case("interconnect-provider-mismatch", "llm-train", fires=False),
    Case(
        "model-does-not-fit",
        "llm-train",
        {"model.parameters_billion": 700, "compute.node_count": 2, "model.architecture": None},
        message=r"11,200 GB of training state; 700.0 GB per GPU over 16 GPUs",
    ),
    Case(
        "model-does-not-fit",
        "llm-train",
        {"model.parameters_billion": 405, "model.architecture": None},
        fires=False,
    ),
    # With model.architecture the layout rule decides instead of the flat activation share.
    Case("model-does-not-fit", "llm-train", {"model.parameters_billion": 700, "compute.node_count": 2}, fires=False),
    Case(
        "layout-does-not-fit",
        "llm-train",
        {"model.parallelism": {"tensor": 1, "zero_stage": 0}, "model.architecture.recompute": "none"},
        # 70B x 2 B of bf16 weights on every GPU already exceeds the H100's 85.9 GB.
        message=r"TP=1 PP=1 ZeRO-0 recompute none needs [\d,.]+ GB per GPU \(weights 140\.0,",
    ),
    Case(
        "layout-does-not-fit",
        "llm-train",
        {"model.parallelism.tensor": 16},
        message="tensor parallel 16 must divide the 8 GPUs of the NVLink domain",
    ),
    Case("layout-does-not-fit", "llm-train", fires=False),
    Case("layout-does-not-fit", "llm-train-onprem", fires=False),
    Case("spot-without-checkpointing", "llm-train", {"checkpointing": None, **BEFORE_T15}),
    # llm-train's gang is on an On-Demand Capacity Reservation: no spot node to lose work on.
    Case("spot-without-checkpointing", "llm-train", {"checkpointing": None}, fires=False),
    Case(
        "on-demand-base-exceeds-nodes",
        "llm-train",
        {"compute.capacity": {"type": "spot", "on_demand_base": 20}},
        message="on_demand_base 20 exceeds node_count 16",
    ),
    Case(
        "on-demand-base-exceeds-nodes",
        "llm-train",
        {"compute.capacity": {"type": "spot", "on_demand_base": 16}},
        fires=False,
    ),
    # The review's finding T15: 16 nodes, 4 of them on-demand, in one placement group: 12 spot.
    Case(
        "gang-on-spot",
        "llm-train",
        BEFORE_T15,
        message="12 of the gang's 16 nodes are spot in one cluster placement group: any one of 12 reclaims stops "
        "the whole job",
    ),
    # llm-train-eks's gang is still 4 on-demand and 12 spot nodes in its placement group (docs/stacks.md).
    Case("gang-on-spot", "llm-train-eks", message="12 of the gang's 16 nodes are spot in one cluster placement group"),
    Case("gang-on-spot", "llm-train", fires=False),  # the reservation holds the gang; spot only on the elastic nodes
    Case("gang-on-spot", "llm-train", {"compute.capacity": {"type": "spot", "on_demand_base": 16}}, fires=False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)
