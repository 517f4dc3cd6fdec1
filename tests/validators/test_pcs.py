"""Slurm on AWS (AWS PCS) rules: pinned images, PCS regions and sizes, capacity blocks, Lustre sizing."""

from __future__ import annotations

import pytest
from gpuinfra.validators.images import image_problem
from helpers import DELETE, Case, run_case

BLOCK = {"type": "capacity_block", "capacity_reservation_id": "cr-0123456789abcdef0"}
# llm-train: 70B at 16 B/parameter = 1,120 GB = 1,043 GiB per checkpoint; 12,000 GiB of dataset; 57,600 GiB Lustre.
CASES = [
    Case(
        "image-not-pinned",
        "llm-train",
        {"compute.image_id": DELETE},  # no default: required for PCS, with where to find an AMI
        message=r"compute.image_id is required for AWS PCS nodes",
    ),
    Case(
        "image-not-pinned",
        "llm-train",
        {"compute.image_id": "resolve:ssm:/acme/pcs/gpu-ami"},
        message="resolves the parameter's current value at every launch",
    ),
    Case("image-not-pinned", "llm-train", {"compute.image_id": "ami-0123456789abcdef0"}, fires=False),
    Case("image-not-pinned", "llm-train", fires=False),  # resolve:ssm with a version
    Case(
        "pcs-region-unsupported",
        "llm-train",
        {"region": "sa-east-1", "availability_zone": "sa-east-1a"},
        message="AWS PCS has no endpoint in sa-east-1",
    ),
    Case("pcs-region-unsupported", "llm-train", fires=False),
    Case(
        "pcs-cluster-too-large",
        "llm-train",
        {"compute.node_count": 2048, "compute.capacity": {"type": "on_demand"}},
        message="2048 nodes and 1 login node exceed the 2048 nodes of a LARGE AWS PCS cluster",
    ),
    Case("pcs-cluster-too-large", "llm-train", {"compute.node_count": 2047}, fires=False),
    Case(
        "capacity-block-over",
        "llm-train",
        {"compute.capacity": {**BLOCK, "block_end": "2020-01-01T00:00:00Z"}},
        message="must checkpoint and drain at 2019-12-31 23:18 UTC, which has passed",
    ),
    Case(
        "capacity-block-over",
        "llm-train",
        {"compute.capacity": {**BLOCK, "block_end": "2099-01-01T00:00:00Z"}},
        fires=False,
    ),
    Case(
        "elastic-partition-unsupported",
        "llm-train",
        {"compute.elastic.partition": "train"},
        message="compute.elastic.partition 'train' is the gang's partition",
    ),
    Case(
        "elastic-partition-unsupported",
        "llm-train-eks",
        {"compute.elastic": {"max_nodes": 2}},
        message="compute.elastic is built for Slurm on AWS",
    ),
    Case("elastic-partition-unsupported", "llm-train", fires=False),  # partition elastic beside train
    # need = (12,000 + 1,043 x (3 + 1)) / 0.8 = 20,215 GiB: fits 57,600; with 33 kept, (12,000 + 1,043 x 34) / 0.8
    # = 59,330 GiB does not.
    Case(
        "lustre-too-small",
        "llm-train",
        {"checkpointing.keep_last": 33},
        message=r"Lustre needs 59,33\d GiB \(12,000 GiB of dataset, 33 \+ 1 checkpoints of 1,043 GiB, 20% headroom\)",
    ),
    Case("lustre-too-small", "llm-train", fires=False),
    Case("lustre-dataset-share-unknown", "llm-train", {"lustre.dataset_gib": DELETE}, message="dataset_gib is not set"),
    Case("lustre-dataset-share-unknown", "llm-train", fires=False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)


@pytest.mark.parametrize(
    ("image", "pinned"),
    [
        ("ami-0123456789abcdef0", True),
        ("resolve:ssm:/acme/pcs/gpu-ami:7", True),
        ("resolve:ssm:/acme/pcs/gpu-ami", False),
        ("resolve:ssm:/aws/service/x/latest/ami-id", False),
        ("resolve:ssm:/aws/service/x/latest/ami-id:3", False),
        ("ubuntu-22.04", False),
    ],
)
def test_images_are_pinned_only_by_id_or_parameter_version(image: str, pinned: bool) -> None:
    assert (image_problem(image) is None) is pinned
