"""Compute that launches instances is bounded and counted: quotas count Karpenter NodePools at the most nodes their
limits allow (they counted no Kubernetes node), and a NodePool whose limits bound nothing is refused."""

from __future__ import annotations

import pytest
from gpuinfra.policy.pack import pack_config, police
from helpers import example_graph
from policy_helpers import PolicyCase, edited, facts_for, run_case

POOL = "kubernetes:karpenter.sh/v1:NodePool"
CE = "aws:batch/computeEnvironment:ComputeEnvironment"

CASES = [
    PolicyCase("quota-launches-bounded", "chat-serve-k8s", fires=False),
    PolicyCase(
        "quota-launches-bounded",
        "chat-serve-k8s",
        edits=((POOL, "chat-k8s-us-east-1-on-demand-nodes", {"spec.limits": {}}),),
        message=r"chat-k8s-us-east-1-on-demand-nodes launches instances without a maximum: its limits \(none\) bound "
        r"no count of g6e.xlarge",
        level="mandatory",
        label="no-limits",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_policy(case: PolicyCase) -> None:
    run_case(case)


def test_quotas_count_nodepools_at_their_limits() -> None:
    """Raised limits (64 -> 400 vCPUs of g6e.xlarge, 100 nodes) exceed the G grant in us-east-1 (160 vCPUs, of which
    chat-serve holds 72 by its plan): quota-within-grant now sees the pool; it saw nothing of Kubernetes nodes."""
    graph = edited(
        example_graph("chat-serve-k8s"),
        ((POOL, "chat-k8s-us-east-1-on-demand-nodes", {"spec.limits": {"cpu": "400", "nvidia.com/gpu": "100"}}),),
    )
    run = police(graph, facts_for("chat-serve-k8s"), pack_config())
    found = [v for v in run.violations if v.policy == "quota-within-grant"]
    assert found, [(v.policy, v.message) for v in run.violations]
    assert "the stack needs 400 vCPUs at maximum size (chat-k8s-us-east-1-on-demand-nodes)" in found[0].message


def test_quotas_count_batch_compute_environments_at_max_vcpus() -> None:
    """llm-finetune's on-demand environment raised to 4,000 vCPUs of p5.4xlarge needs 4,000 vCPUs of the P on-demand
    code (L-417A185B, 2,304 granted): quota-within-grant sees it; it counted no Batch environment before."""
    graph = edited(
        example_graph("llm-finetune"),
        ((CE, "llm-finetune-on-demand", {"computeResources.maxVcpus": 4000}),),
    )
    run = police(graph, facts_for("llm-finetune"), pack_config())
    found = [v for v in run.violations if v.policy == "quota-within-grant"]
    assert found, [(v.policy, v.message) for v in run.violations]
    assert "L-417A185B" in found[0].message
    assert "the stack needs 4000 vCPUs at maximum size (llm-finetune-on-demand)" in found[0].message
