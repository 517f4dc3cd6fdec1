"""Compute that launches instances is bounded and counted: quotas count Karpenter NodePools at the most nodes their
limits allow (they counted no Kubernetes node), and a NodePool whose limits bound nothing is refused."""

from __future__ import annotations

import pytest
from gpuinfra.policy.pack import pack_config, police
from helpers import example_graph
from policy_helpers import PolicyCase, edited, facts_for, run_case

POOL = "kubernetes:karpenter.sh/v1:NodePool"

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
