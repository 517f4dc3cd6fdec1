"""The data flows raw corpus -> workers -> tokens -> training, each judged by preflight's access evaluator over the
dataprep stack's and llm-train's graphs together (identity, bucket and key policies, across accounts): the
workers read and write where the spec says; the training role reads the tokens; a training account reading the
raw text (the intermediates) and the workers writing outside the declared prefixes are denied."""

from __future__ import annotations

import pytest
from gpuinfra.graph.flows import Flow
from gpuinfra.preflight.access.judge import judge_flows
from gpuinfra.pulumi.components.dataprep.flows import SAMPLE
from helpers import example_graph

TRAINING_ROLE = "llm-train-slurm-role"
WORKERS = "corpus-prep-role"


def decide(principal: str, action: str, resource: str, key_of: bool = False) -> str:
    flow = Flow("probe", "corpus-prep", principal, action, resource, key_of=key_of)
    judged = judge_flows([flow], [example_graph("corpus-prep"), example_graph("llm-train")])
    assert len(judged) == 1
    return judged[0].decision.outcome


TOKENS = f"arn:aws:s3:::acme-datasets/pretrain/v7/{SAMPLE}"
SCRATCH = f"arn:aws:s3:::acme-corpus-scratch/cc-2024-51/filtered/{SAMPLE}"


@pytest.mark.parametrize(
    ("principal", "action", "resource", "key_of", "outcome"),
    [
        (TRAINING_ROLE, "s3:GetObject", TOKENS, False, "allow"),  # the tokens reach training (cross-account)
        (TRAINING_ROLE, "s3:GetObject", SCRATCH, False, "deny"),  # the raw text does not
        (TRAINING_ROLE, "kms:Decrypt", SCRATCH, True, "deny"),  # nor its key
        (TRAINING_ROLE, "s3:PutObject", TOKENS, False, "deny"),  # training cannot overwrite the tokens
        (WORKERS, "s3:PutObject", TOKENS, False, "allow"),
        (WORKERS, "s3:PutObject", SCRATCH, False, "allow"),
        (WORKERS, "kms:GenerateDataKey", SCRATCH, True, "allow"),
        # outside the output prefix: no readable statement allows it; the SSM managed policy attached for Session
        # Manager is not readable offline, so the evaluator says 'unknown' rather than 'deny' (never 'allow')
        (WORKERS, "s3:PutObject", f"arn:aws:s3:::acme-datasets/other/{SAMPLE}", False, "unknown"),
        (WORKERS, "s3:PutObject", f"arn:aws:s3:::acme-llm-train-checkpoints/checkpoints/{SAMPLE}", False, "deny"),
    ],
)
def test_flow(principal: str, action: str, resource: str, key_of: bool, outcome: str) -> None:
    assert decide(principal, action, resource, key_of) == outcome
