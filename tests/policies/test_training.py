"""Training policies on the example training cluster's graph, mutated."""

from __future__ import annotations

import pytest
from helpers import DELETE
from policy_helpers import PolicyCase, run_case, run_example

ASG = "aws:autoscaling/group:Group"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
PG = "aws:ec2/placementGroup:PlacementGroup"
FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
BEFORE_T15 = {"compute.capacity": {"type": "spot", "on_demand_base": 4}, "compute.elastic": None}
"""llm-train before the review's finding T15: 4 on-demand nodes, 12 spot, no elastic partition."""

CASES = [
    PolicyCase("training-efa-every-card", "llm-train", fires=False),
    PolicyCase(
        "training-efa-every-card",
        "llm-train",
        edits=((LT, "llm-train-slurm-pcs-elastic-lt", {"networkInterfaces[32].interfaceType": "interface"}),),
        message=r"elastic-lt: p5\.48xlarge has 32 EFA-capable network cards but EFA is on 31; cards without EFA: 31",
    ),
    PolicyCase(
        "training-efa-every-card",
        "llm-train",
        spec={"interconnect.type": "none"},
        unchecked=True,
        message=r"EFA is on 0; cards without EFA: 0, 1, 2, 3, 4, 5, 6, 7 \.\.\.",
    ),
    PolicyCase("training-cluster-placement-group", "llm-train", fires=False),
    PolicyCase(
        "training-cluster-placement-group",
        "llm-train",
        edits=((PG, None, {"strategy": "spread"}),),
        message="uses a placement group with strategy spread; use cluster",
    ),
    PolicyCase(
        "training-cluster-placement-group",
        "llm-train",
        edits=((LT, "llm-train-slurm-pcs-od-lt", {"placement": DELETE}),),
        message="llm-train-slurm-pcs-od launches into no placement group",
    ),
    PolicyCase("training-cluster-placement-group", "llm-train-eks", fires=False),
    PolicyCase(
        "training-cluster-placement-group",
        "llm-train-eks",
        edits=((LT, "llm-train-eks-eks-gpu-lt", {"placement": {}}),),
        message="llm-train-eks-eks-gpu-spot launches into no placement group",
    ),
    PolicyCase("training-one-zone", "llm-train", fires=False),
    PolicyCase("training-one-zone", "llm-train-eks", fires=False, label="control plane in a second zone"),
    PolicyCase(
        "training-one-zone",
        "llm-train",
        edits=((FSX, None, {"availabilityZones": ["us-east-1b"]}),),
        message=r"spans 2 zones \(us-east-1a: .*llm-train-slurm-pcs-od.*; us-east-1b: llm-train-storage-lustre\)",
    ),
    # The bound is 313 min on the EFA-enabled 57,600 GiB file system (tests/validators/test_checkpoints.py derives it).
    PolicyCase(
        "training-spot-checkpointing",
        "llm-train",
        spec=BEFORE_T15,
        fires=False,
        label="interval 150 within 313",
    ),
    PolicyCase(
        "training-spot-checkpointing",
        "llm-train",
        spec={"checkpointing.interval_minutes": 600, **BEFORE_T15},
        unchecked=True,
        message=r"pcs-spot runs 12 spot node\(s\) but checkpoints every 600 min, longer than the bound of 313 min",
    ),
    PolicyCase(
        "training-spot-checkpointing",
        "llm-train",
        spec={"checkpointing": None, **BEFORE_T15},
        unchecked=True,
        message=r"runs 12 spot node\(s\) without checkpointing",
    ),
    # The example's gang is on its reservation; its 2 elastic spot nodes run other jobs than the gang
    # (compute.elastic), which the gang's checkpoint interval does not bound.
    PolicyCase(
        "training-spot-checkpointing",
        "llm-train",
        spec={"checkpointing.interval_minutes": 600},
        unchecked=True,
        fires=False,
        label="elastic spot nodes are not the gang",
    ),
    PolicyCase(
        "training-spot-checkpointing",
        "llm-train-eks",
        spec={"checkpointing.interval_minutes": 900},
        unchecked=True,
        message=r"llm-train-eks-eks-gpu-spot runs 12 spot node\(s\) but checkpoints every 900 min",
    ),
    PolicyCase(
        "training-spot-checkpointing",
        "llm-train",
        fires=False,
        label="on-demand",
        spec={"compute.capacity": {"type": "on_demand"}, "checkpointing": None},
        # 16 on-demand p5.48xlarge (3072 vCPUs) plus llm-train-eks's 4 on-demand (768) and llm-finetune's
        # on-demand p5.4xlarge (16) in the same account
        org={"accounts.ml-training.quotas.us-east-1.L-417A185B": 3856},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_training_policies(case: PolicyCase) -> None:
    found = run_case(case)
    if case.fires:
        assert all(v.level.enforcement == "mandatory" for v in found)


def test_training_policies_apply_to_the_training_stack() -> None:
    run = run_example("llm-train")
    assert not [na for na in run.not_applicable if na.policy.startswith("training-")]
    assert {p for p in run.kinds if p.startswith("training-")} == {
        "training-efa-every-card",
        "training-cluster-placement-group",
        "training-one-zone",
        "training-spot-checkpointing",
    }
