"""Storage rules."""

from __future__ import annotations

import pytest
from helpers import DELETE, Case, run_case

CASES = [
    Case(
        "lustre-capacity-rounded",
        "llm-train",
        {"lustre.storage_capacity_gib": 47000, "lustre.efa": False},
        message="storage_capacity_gib 47000 is not a valid FSx size; 48000 GiB will be created",
    ),
    # EFA-enabled at 250 MB/s/TiB: whole steps of 19,200 GiB (fsx-efa-capacity): 47,000 -> 3 x 19,200 = 57,600.
    Case(
        "lustre-capacity-rounded",
        "llm-train",
        {"lustre.storage_capacity_gib": 47000},
        message="storage_capacity_gib 47000 is not a valid FSx size; 57600 GiB will be created",
    ),
    Case("lustre-capacity-rounded", "llm-train", fires=False),
    # An explicit lustre.efa on nodes without EFA: refused, naming the field.
    Case(
        "lustre-efa-without-efa-nodes",
        "llm-train",
        {"lustre.efa": True, "interconnect.type": "none"},
        message="lustre.efa is on but the nodes that mount it cannot use it: interconnect.type is none",
    ),
    Case(
        "lustre-efa-without-efa-nodes",
        "llm-train",
        {"lustre.efa": True, "compute.instance_type": "g5.4xlarge", "interconnect.type": "none"},
        message="g5.4xlarge has no EFA",
    ),
    Case("lustre-efa-without-efa-nodes", "llm-train", {"lustre.efa": True}, fires=False),
    Case(
        "lustre-efa-clients-not-set-up",
        "llm-train-eks",
        {"lustre.efa": True, "lustre.storage_capacity_gib": 57600},
        message="EKS nodes are not set up as EFA clients here",
    ),
    Case("lustre-efa-clients-not-set-up", "llm-train-eks", fires=False),
    Case("lustre-efa-clients-not-set-up", "llm-train", fires=False),
    # The default never asks for EFA where it cannot be used, so it never trips the rule.
    Case("lustre-efa-without-efa-nodes", "llm-train", {"interconnect.type": "none"}, fires=False),
    Case(
        "export-bucket-is-dataset-bucket",
        "llm-train",
        {"lustre.export_path": "s3://acme-datasets/ckpt/"},
        message="share bucket 'acme-datasets'",
    ),
    Case("export-bucket-is-dataset-bucket", "llm-train", fires=False),
    Case(
        "no-parallel-file-system",
        "llm-train",
        {"lustre": DELETE, "checkpointing.target": "s3", "checkpointing.write_bandwidth_gb_s": 20},
    ),
    Case("no-parallel-file-system", "llm-train", fires=False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    run_case(case)
