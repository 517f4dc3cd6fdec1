"""Quota policies: the example cluster at maximum size against the organization's grants."""

from __future__ import annotations

import pytest
from policy_helpers import PolicyCase, run_case

P_ON_DEMAND = "accounts.ml-training.quotas.us-east-1.L-417A185B"
P5_SPOT = "accounts.ml-training.quotas.us-east-1.L-C4BD4855"
REQUEST = "accounts.ml-training.request_quota_increases"
CAPACITY_BLOCK = {
    "type": "capacity_block",
    "capacity_reservation_id": "cr-0123456789abcdef0",
    "block_end": "2099-01-14T11:30:00Z",
}

CASES = [
    PolicyCase("quota-site-gpus", "llm-train-onprem", fires=False),
    PolicyCase(
        "quota-site-gpus",
        "llm-train-onprem",
        org={"onprem_sites.dc-east.gpu_allotment": 128},
        alone=True,  # per-stack mechanics; account-wide totals: test_account_wide.py
        unchecked=True,  # site-gpus-exceed-allotment refuses it first: the policy is the deploy-time backstop
        level="mandatory",
        message=r"^site dc-east: the stack's ClusterQueues hold 256 GPUs \(llm-train-dc-cluster-queue \(256 GPUs\)\) "
        r"but the organization allots 128; lower the cluster by 128 GPUs",
    ),
    PolicyCase("quota-site-gpus", "llm-train-eks", fires=False, label="EKS queues are held by EC2 quotas"),
    PolicyCase("quota-within-grant", "llm-train", fires=False),
    PolicyCase(
        "quota-within-grant",
        "llm-train",
        org={P_ON_DEMAND: 512},
        alone=True,  # per-stack mechanics; account-wide totals: test_account_wide.py
        unchecked=True,
        level="mandatory",
        message=r"^ml-training \(111111111111\) us-east-1 L-417A185B \(Running On-Demand P instances\): "
        r"the stack needs 3072 vCPUs at maximum size \(llm-train-slurm-pcs-od\), 512 available; "
        r"request an increase of 2560 vCPUs \(to 3072\)",
    ),
    PolicyCase(
        "quota-within-grant",
        "llm-train",
        org={P5_SPOT: 0},
        alone=True,  # per-stack mechanics; account-wide totals: test_account_wide.py
        unchecked=True,
        label="spot counted on its own code",
        # the elastic partition's 2 spot p5.48xlarge at their most (the gang is on its reservation)
        message=r"L-C4BD4855 \(All P5 Spot Instance Requests\): the stack needs 384 vCPUs .* 0 available",
    ),
    PolicyCase(
        "quota-within-grant",
        "llm-train",
        org={P_ON_DEMAND: 512, REQUEST: True},
        alone=True,  # per-stack mechanics; account-wide totals: test_account_wide.py
        fires=False,
        label="increase requested",
    ),
    PolicyCase(
        "quota-within-grant",
        "llm-train",
        spec={"compute.capacity": CAPACITY_BLOCK, "compute.elastic": None},
        org={P_ON_DEMAND: 0, P5_SPOT: 0},
        alone=True,  # per-stack mechanics; account-wide totals: test_account_wide.py
        fires=False,
        label="capacity blocks use no quota",
    ),
    PolicyCase("quota-within-grant", "llm-train-eks", fires=False),
    PolicyCase(
        "quota-within-grant",
        "llm-train",
        spec={"compute.instance_type": "p6-b200.48xlarge"},
        unchecked=True,
        label="a quota no source names fails closed",
        message=r"us-east-1: the quota for p6-b200 spot \(384 vCPUs at maximum size, llm-train-slurm-pcs-elastic\) "
        r"cannot be checked",
    ),
    PolicyCase(
        "quota-within-grant",
        "llm-train-eks",
        org={P5_SPOT: 1000},
        alone=True,  # per-stack mechanics; account-wide totals: test_account_wide.py
        unchecked=True,
        label="EKS node groups count too",
        message=r"L-C4BD4855 \(All P5 Spot Instance Requests\): the stack needs 2304 vCPUs at maximum size "
        r"\(llm-train-eks-eks-gpu-spot\), 1000 available",
    ),
    PolicyCase("quota-increase-requested", "llm-train", fires=False),
    PolicyCase(
        "quota-increase-requested",
        "llm-train",
        org={P_ON_DEMAND: 512, REQUEST: True},
        alone=True,  # per-stack mechanics; account-wide totals: test_account_wide.py
        level="advisory",
        # the request asks for the account's total: 3072 here, 768 in llm-train-eks, 16 in llm-finetune
        message="512 available; the stack requests an increase to 3856, pending AWS approval",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_quota_policies(case: PolicyCase) -> None:
    run_case(case)
