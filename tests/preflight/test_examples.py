"""The examples and the variants the tests generate, through preflight unchanged.

Where the current generators produce a real finding, the stack's test is xfail(strict=True) with the
finding as its reason: the rule stays as its source states it, the generator's owner fixes the generator,
and the strict mark then fails until it is removed. Each known finding is also pinned below so a regression
in preflight (a finding that disappears without the generator changing) is caught.
"""

from __future__ import annotations

import pytest
from helpers import ample_quotas, example_graph, graph_for

from infra.catalog import load_catalog
from infra.graph import Graph
from infra.preflight import preflight

SSM_ROOT = (
    "PF-EC2-SSM-ROOT on the Slurm controller: ami resolve:ssm:... with a rootBlockDevice "
    "(terraform-provider-aws #43488)"
)
ASG_KEY = (
    "PF-KMS-POLICY on the storage key: launch template volumes encrypted with it, "
    "key policy does not name AWSServiceRoleForAutoScaling"
)

VARIANTS: dict[str, tuple[str, dict[str, object]]] = {
    "llm-train": ("llm-train", {}),
    "llm-train-eks": ("llm-train-eks", {}),
    "llm-train-onprem": ("llm-train-onprem", {}),
    "chat-serve": ("chat-serve", {}),
    "chat-serve-k8s": ("chat-serve-k8s", {}),
    "model-registry": ("model-registry", {}),
    "capacity-block": (
        "llm-train",
        {"compute.capacity": {"type": "capacity_block", "capacity_reservation_id": "cr-0123456789abcdef0"}},
    ),
    "on-demand": ("llm-train", {"compute.capacity": {"type": "on_demand"}}),
    "global-accelerator": (
        "chat-serve",
        {"global_routing": {"type": "global_accelerator", "domain_name": "chat.acme.example"}},
    ),
    "nlb": ("chat-serve", {"load_balancer.type": "nlb"}),
    "hpa": ("chat-serve-k8s", {"kubernetes.autoscaler": "hpa"}),
    "p4d": (
        "llm-train",
        {"compute.instance_type": "p4d.24xlarge", "compute.node_count": 16, "racks.power_budget_kw": 30},
    ),
}
KNOWN: dict[str, set[tuple[str, str, str]]] = {
    "llm-train": {
        ("PF-EC2-SSM-ROOT", "llm-train-slurm-controller", "ami"),
        ("PF-KMS-POLICY", "llm-train-storage-key", "policy"),
    },
    "capacity-block": {
        ("PF-EC2-SSM-ROOT", "llm-train-slurm-controller", "ami"),
        ("PF-KMS-POLICY", "llm-train-storage-key", "policy"),
    },
    "on-demand": {
        ("PF-EC2-SSM-ROOT", "llm-train-slurm-controller", "ami"),
        ("PF-KMS-POLICY", "llm-train-storage-key", "policy"),
    },
    "p4d": {
        ("PF-EC2-SSM-ROOT", "llm-train-slurm-controller", "ami"),
        ("PF-KMS-POLICY", "llm-train-storage-key", "policy"),
    },
    "llm-train-eks": {("PF-KMS-POLICY", "llm-train-eks-storage-key", "policy")},
}
REASONS = {
    "llm-train": f"{SSM_ROOT}; {ASG_KEY}",
    "capacity-block": f"{SSM_ROOT}; {ASG_KEY}",
    "on-demand": f"{SSM_ROOT}; {ASG_KEY}",
    "p4d": f"{SSM_ROOT}; {ASG_KEY}",
    "llm-train-eks": f"{ASG_KEY} (the managed node groups launch through Auto Scaling)",
}


def _graph(variant: str) -> Graph:
    stack, spec = VARIANTS[variant]
    return graph_for(stack, spec, ample_quotas()) if spec else example_graph(stack)  # variants may outgrow the grants


def _errors(variant: str) -> set[tuple[str, str, str]]:
    return {(f.rule, f.name, f.path) for f in preflight(_graph(variant), load_catalog()) if f.level == "error"}


def _param(variant: str) -> object:
    if variant in REASONS:
        return pytest.param(variant, marks=pytest.mark.xfail(strict=True, reason=REASONS[variant]))
    return variant


@pytest.mark.parametrize("variant", [_param(v) for v in VARIANTS])
def test_preflight_finds_nothing_to_refuse(variant: str) -> None:
    assert _errors(variant) == set()


@pytest.mark.parametrize("variant", sorted(KNOWN))
def test_the_known_generator_findings_are_still_found(variant: str) -> None:
    assert KNOWN[variant] <= _errors(variant)


def test_custom_resources_and_charts_are_declared_unchecked_not_passed() -> None:
    infos = {f.value for f in preflight(example_graph("llm-train-eks"), load_catalog()) if f.rule == "PF-UNCHECKED"}
    assert {"kubernetes:helm.sh/v3:Release", "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"} <= infos
