"""The examples and the variants the tests generate, through preflight unchanged.

Where the current generators produce a real finding, the stack's test is xfail(strict=True) with the
finding as its reason: the rule stays as its source states it, the generator's owner fixes the generator,
and the strict mark then fails until it is removed. Each known finding is also pinned below so a regression
in preflight (a finding that disappears without the generator changing) is caught.
"""

from __future__ import annotations

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.graph import Graph
from gpuinfra.preflight import preflight
from helpers import ROOT, ample_quotas, example_graph, graph_for

VARIANTS: dict[str, tuple[str, dict[str, object]]] = {
    "llm-train": ("llm-train", {}),
    "llm-train-eks": ("llm-train-eks", {}),
    "llm-train-onprem": ("llm-train-onprem", {}),
    "chat-serve": ("chat-serve", {}),
    "chat-serve-k8s": ("chat-serve-k8s", {}),
    "model-registry": ("model-registry", {}),
    "capacity-block": (
        "llm-train",
        {
            "compute.capacity": {
                "type": "capacity_block",
                "capacity_reservation_id": "cr-0123456789abcdef0",
                "block_end": "2099-01-14T11:30:00Z",
            }
        },
    ),
    "on-demand": ("llm-train", {"compute.capacity": {"type": "on_demand"}}),
    # llm-train before the review's finding T15: spot above 4 on-demand nodes, no elastic partition
    "spot-gang": ("llm-train", {"compute.capacity": {"type": "spot", "on_demand_base": 4}, "compute.elastic": None}),
    "global-accelerator": (
        "chat-serve",
        {"global_routing": {"type": "global_accelerator", "domain_name": "chat.acme.example"}},
    ),
    # WAF attaches to ALBs only: an NLB fleet is a private one (internal scheme, API keys, no web ACL).
    "nlb": (
        "chat-serve",
        {"load_balancer.type": "nlb", "access": {"scheme": "internal", "auth": "api_key", "waf": None}},
    ),
    "hpa": (
        "chat-serve-k8s",
        {"kubernetes.autoscaler": "hpa", "kubernetes.external_metrics_adapter": "prometheus-adapter"},
    ),
    "p4d": (
        "llm-train",
        {"compute.instance_type": "p4d.24xlarge", "compute.node_count": 16, "model.parallelism.zero_stage": 3},
    ),
}
KNOWN: dict[str, set[tuple[str, str, str]]] = {}
"""None left: the Slurm controller with a resolve:ssm: AMI is gone (AWS PCS runs slurmctld), and the storage key's
policy names the Auto Scaling service-linked role (PF-KMS-POLICY cleared for llm-train, capacity-block,
on-demand, p4d and llm-train-eks; PCS node volumes use the AWS-managed EBS key)."""
REASONS: dict[str, str] = {}


def _graph(variant: str) -> Graph:
    stack, spec = VARIANTS[variant]
    return graph_for(stack, spec, ample_quotas()) if spec else example_graph(stack)  # variants may outgrow the grants


def _errors(variant: str) -> set[tuple[str, str, str]]:
    return {(f.rule, f.name, f.path) for f in preflight(_graph(variant), load_catalog()) if f.blocking}


def _param(variant: str) -> object:
    if variant in REASONS:
        return pytest.param(variant, marks=pytest.mark.xfail(strict=True, reason=REASONS[variant]))
    return variant


@pytest.mark.parametrize("variant", [_param(v) for v in VARIANTS])
def test_preflight_finds_nothing_to_refuse(variant: str) -> None:
    assert _errors(variant) == set()


@pytest.mark.parametrize(
    "variant", sorted(KNOWN) or [pytest.param("none", marks=pytest.mark.skip(reason="no known findings"))]
)
def test_the_known_generator_findings_are_still_found(variant: str) -> None:
    assert KNOWN[variant] <= _errors(variant)


@pytest.mark.parametrize(
    ("variant", "queues"),
    [
        ("llm-train", {"train", "elastic"}),  # the gang's queue, and the elastic spot nodes' (compute.elastic)
        ("capacity-block", {"train", "elastic"}),
        ("on-demand", {"train", "elastic"}),
        ("spot-gang", {"train"}),
    ],
)
def test_the_slurm_variants_preview_a_pcs_cluster(variant: str, queues: set[str]) -> None:
    from gpuinfra.graph import tokens

    graph = _graph(variant)
    assert len(graph.of_type(tokens.PCS_CLUSTER)) == 1
    assert {q.inputs["name"] for q in graph.of_type(tokens.PCS_QUEUE)} == queues
    names = {r.name.rsplit("-", 1)[-1] for r in graph.of_type(tokens.PCS_NODE_GROUP)}
    assert "login" in names and len(names) >= 2
    assert not graph.of_type(tokens.ASG)
    assert not [i for i in graph.of_type(tokens.INSTANCE) if str(i.inputs.get("ami", "")).startswith("resolve:ssm:")]


def test_custom_resources_and_charts_are_declared_unchecked_not_passed() -> None:
    infos = {f.value for f in preflight(example_graph("llm-train-eks"), load_catalog()) if f.rule == "PF-UNCHECKED"}
    assert {"kubernetes:helm.sh/v3:Release", "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"} <= infos


@pytest.mark.parametrize(
    ("stack", "type_", "cited"),
    [
        # not in AWS's type table (clouds/aws/preflight/table.py's AWS): the table is where it is missing from
        ("llm-train-eks", "aws:eks/addon:Addon", "infra/gpuinfra/clouds/aws/preflight/table.py"),
        ("llm-finetune", "aws:batch/jobQueue:JobQueue", "infra/gpuinfra/clouds/aws/preflight/table.py"),
        # not in Google's table (clouds/gcp/preflight/discovery.py's TABLE)
        ("chat-serve-gcp", "gcp:serviceaccount/account:Account", "infra/gpuinfra/clouds/gcp/preflight/discovery.py"),
        # a chart and a CRD kind: the Kubernetes schema check is what leaves them out
        ("llm-train-eks", "kubernetes:helm.sh/v3:Release", "infra/gpuinfra/preflight/kubernetes.py"),
        ("llm-train-eks", "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "infra/gpuinfra/preflight/kubernetes.py"),
        # owned by no cloud: the stage that lists what nothing judges
        ("llm-train-eks", "random:index/randomBytes:RandomBytes", "infra/gpuinfra/preflight/check.py"),
    ],
)
def test_an_unjudged_type_cites_the_file_it_is_missing_from(stack: str, type_: str, cited: str) -> None:
    """PF-UNCHECKED names the real file (it cited infra/gpuinfra/preflight/table.py, where the table was before it moved
    into AWS's package), and every file it cites in the examples exists in the repository."""
    unjudged = [f for f in preflight(example_graph(stack), load_catalog()) if f.rule == "PF-UNCHECKED"]
    assert {f.source for f in unjudged if f.value == type_} == {cited}
    assert all((ROOT / f.source).is_file() for f in unjudged), sorted({f.source for f in unjudged})
