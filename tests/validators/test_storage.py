"""Storage rules."""

from __future__ import annotations

import pytest
from helpers import DELETE, Case, run_case

CASES = [
    Case(
        "lustre-capacity-rounded",
        "llm-train",
        {"lustre.storage_capacity_gib": 47000},
        message="storage_capacity_gib 47000 is not a valid FSx size; 48000 GiB will be created",
    ),
    Case("lustre-capacity-rounded", "llm-train", fires=False),
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
