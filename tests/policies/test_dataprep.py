"""The dataprep policies on the corpus-prep example and planted faults: an accelerator type without a GPU stage
(and a GPU stage in an account not allowed GPUs), a worker role that writes outside the declared prefixes, and a
grant of the raw intermediates to a training account."""

from __future__ import annotations

import json

import pytest
from gpuinfra.policy.pack import pack_config, police
from helpers import example_graph
from policy_helpers import PolicyCase, facts_for, planted, run_case

GPU = "g6e.xlarge"


CASES = [
    PolicyCase("dataprep-no-accelerators", "corpus-prep", fires=False),
    PolicyCase("dataprep-writes-only-declared", "corpus-prep", fires=False),
    PolicyCase("separation-cross-account-grants", "corpus-prep", fires=False),
    PolicyCase("separation-one-workload", "corpus-prep", fires=False),
    PolicyCase(
        "dataprep-no-accelerators",
        "corpus-prep",
        spec={"workers.instance_type": GPU},
        unchecked=True,  # the quota validator refuses it first (no G spot quota in a dataprep account)
        message=rf"launches {GPU}, an accelerator instance: no stage asks for one",
        label="gpu-workers",
    ),
]
COVERS = ["dataprep-writes-only-declared"]
"""Its failing case plants a resource (below); the example is its passing case."""


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case(case: PolicyCase) -> None:
    run_case(case)


def judged(policy: str, graph_resources: tuple[str, str, dict]) -> list[str]:
    kind, name, inputs = graph_resources
    graph = planted(example_graph("corpus-prep"), kind, name, inputs)
    run = police(graph, facts_for("corpus-prep"), pack_config(given=None))
    return [v.message for v in run.violations if v.rule == policy]


def test_a_worker_write_outside_the_declared_prefixes_is_refused() -> None:
    doc = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "Stray",
                "Effect": "Allow",
                "Action": ["s3:PutObject"],
                "Resource": ["arn:aws:s3:::acme-datasets/*"],
            }
        ],
    }
    found = judged(
        "dataprep-writes-only-declared",
        ("aws:iam/rolePolicy:RolePolicy", "stray-write", {"role": "corpus-prep-role", "policy": json.dumps(doc)}),
    )
    assert found and "arn:aws:s3:::acme-datasets/*" in found[0] and "outside the declared output" in found[0]


def test_granting_training_the_raw_text_is_refused() -> None:
    doc = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "TrainingReadsRaw",
                "Effect": "Allow",
                "Principal": {"AWS": ["arn:aws:iam::111111111111:root"]},
                "Action": ["s3:GetObject"],
                "Resource": ["arn:aws:s3:::acme-corpus-scratch/cc-2024-51/*"],
            }
        ],
    }
    found = judged(
        "separation-cross-account-grants",
        ("aws:s3/bucketPolicy:BucketPolicy", "raw-grant", {"bucket": "acme-corpus-scratch", "policy": json.dumps(doc)}),
    )
    assert found and "TrainingReadsRaw grants ml-training" in found[0]
