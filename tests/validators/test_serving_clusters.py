"""kubeconfig-cluster-unidentified (review expert-inference-2, D1): under the Pulumi CLI the policy pack reads a
fleet's kubeconfig (pulumi-policy hands secrets over in plain text: tests/crossguard/test_secrets.py) and recognises
its cluster only by the organization file's `server:` or `ca_sha256:`. A cluster registered with neither makes the
pack refuse the fleet's own kubeconfig at `pulumi up`; the validator says so at `validate`. The pack's verdict is
checked beside it on the example's graph with the legitimate kubeconfig (the cluster's own endpoint) planted."""

from __future__ import annotations

import pytest
from gpuinfra.policy.pack import pack_config, police
from helpers import DELETE, Case, example_graph, run_case
from policy_helpers import edited, facts_for

RULE = "kubeconfig-cluster-unidentified"
STACK = "chat-serve-k8s"
EAST = "clusters.serve-us-east-1"
EAST_SERVER = "https://0123456789ABCDEF0123456789ABCDEF.gr7.us-east-1.eks.amazonaws.com"  # stacks/org.yaml
CA = ":".join(["AB"] * 32)
CASES = [
    Case(RULE, STACK, fires=False),
    Case(
        RULE,
        STACK,
        org={f"{EAST}.server": DELETE},
        message=r"cluster serve-us-east-1 \(us-east-1\) registers neither server: nor ca_sha256:",
    ),
    # The CA fingerprint identifies the cluster as well as its URL does.
    Case(RULE, STACK, org={f"{EAST}.server": DELETE, f"{EAST}.ca_sha256": CA}, fires=False),
    # An EC2 fleet reads no kubeconfig.
    Case(RULE, "chat-serve", org={f"{EAST}.server": DELETE}, fires=False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id + repr(c.org)[:40])
def test_kubeconfig_cluster_unidentified(case: Case) -> None:
    run_case(case)


def _own_kubeconfig() -> str:
    return (
        f"apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {EAST_SERVER}\n"
        "contexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {}\n"
    )


def _pack_refusals(org: dict[str, object]) -> list[str]:
    graph = edited(
        example_graph(STACK), [("pulumi:providers:kubernetes", "k8s-us-east-1", {"kubeconfig": _own_kubeconfig()})]
    )
    run = police(graph, facts_for(STACK, org=org), pack_config())
    return [v.message for v in run.violations if v.rule == "separation-kubernetes"]


def test_the_pack_refuses_the_fleet_s_own_kubeconfig_exactly_when_the_rule_fires() -> None:
    assert _pack_refusals({}) == []
    refused = _pack_refusals({f"{EAST}.server": DELETE})
    assert any(f"points at {EAST_SERVER}, which is no cluster the organization file registers" in m for m in refused)
