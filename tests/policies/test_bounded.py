"""Compute that launches instances is bounded and counted: quotas count Karpenter NodePools at the most nodes their
limits allow (they counted no Kubernetes node), and a NodePool whose limits bound nothing is refused."""

from __future__ import annotations

import pytest
from gpuinfra.policy.pack import pack_config, police
from helpers import example_graph
from policy_helpers import PolicyCase, edited, facts_for, planted, run_case

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
    found = [v for v in run.violations if v.rule == "quota-within-grant"]
    assert found, [(v.rule, v.message) for v in run.violations]
    assert "the stack needs 400 vCPUs at maximum size (chat-k8s-us-east-1-on-demand-nodes)" in found[0].message


def test_quotas_count_batch_compute_environments_at_max_vcpus() -> None:
    """llm-finetune's on-demand environment raised to 4,000 vCPUs of p5.4xlarge needs 4,000 vCPUs of the P on-demand
    code (L-417A185B, 2,304 granted): quota-within-grant sees it; it counted no Batch environment before."""
    graph = edited(
        example_graph("llm-finetune"),
        ((CE, "llm-finetune-on-demand", {"computeResources.maxVcpus": 4000}),),
    )
    run = police(graph, facts_for("llm-finetune"), pack_config())
    found = [v for v in run.violations if v.rule == "quota-within-grant"]
    assert found, [(v.rule, v.message) for v in run.violations]
    assert "L-417A185B" in found[0].message
    assert "the stack needs 4000 vCPUs at maximum size (llm-finetune-on-demand)" in found[0].message


FLEET = "aws:ec2/fleet:Fleet"
SPOT_FLEET = "aws:ec2/spotFleetRequest:SpotFleetRequest"
BURST = {
    "type": "maintain",
    "launchTemplateConfigs": [
        {
            "launchTemplateSpecification": {"launchTemplateName": "chat-serve-burst", "version": "1"},
            "overrides": [{"instanceType": "g6e.xlarge"}],
        }
    ],
    "targetCapacitySpecification": {"totalTargetCapacity": 600, "defaultTargetCapacityType": "spot"},
}
"""The red team's p63: 600 spot g6e.xlarge (2,400 vCPUs) launched beside chat-serve as an EC2 Fleet."""


def _fleet_run(kind: str, inputs: dict):  # type: ignore[no-untyped-def]
    graph = planted(example_graph("chat-serve"), kind, "burst-fleet", inputs)
    return police(graph, facts_for("chat-serve"), pack_config())


def _needed(messages: list[str]) -> int:
    """The vCPUs quota-within-grant says the stack needs on ap-northeast-1's G spot code (L-3819A6DF)."""
    (need,) = [int(m.split("needs ")[1].split(" vCPUs")[0]) for m in messages if "ap-northeast-1 L-3819A6DF" in m]
    return need


def _baseline() -> int:
    """What chat-serve itself needs there at maximum size: its own groups' vCPUs on that code, summed here from
    the graph's groups and the catalog (the planted fleet must add exactly its own vCPUs to this)."""
    from gpuinfra.clouds.aws.catalog import quota_book
    from gpuinfra.policy.rules.groups import groups
    from gpuinfra.policy.rules.values import StackView
    from gpuinfra.policy.runner import stack_resources

    catalog = facts_for("chat-serve").catalog
    view = StackView(stack_resources(example_graph("chat-serve")))
    total = 0
    for g in groups(view):
        info = catalog.instance(g.instance_types[0]) if g.instance_types else None
        code = quota_book().code(info.family, "spot") if info else None
        if view.region_of(g.resource) == "ap-northeast-1" and code is not None and code.code == "L-3819A6DF":
            total += g.spot * max(catalog.instance(t).vcpu for t in g.instance_types)  # type: ignore[union-attr]
    return total


def test_an_ec2_fleet_is_counted_by_quotas_at_its_target_capacity() -> None:
    run = _fleet_run(FLEET, BURST)
    found = [v.message for v in run.violations if v.rule == "quota-within-grant"]
    # planted beside the graph's first VPC, in ap-northeast-1, whose G spot grant (L-3819A6DF, "All G and VT Spot
    # Instance Requests") is 64 vCPUs: 600 x 4 vCPUs of g6e.xlarge = 2,400 more than the stack needs without it
    assert any("burst-fleet" in m for m in found), found
    assert _needed(found) - _baseline() == 2400
    assert not [v for v in run.violations if v.rule == "quota-launches-bounded"]


def test_a_spot_fleet_is_counted_too_and_one_without_a_capacity_is_refused() -> None:
    spot = {"targetCapacity": 100, "launchSpecifications": [{"instanceType": "g6e.xlarge", "ami": "ami-0abc"}]}
    run = _fleet_run(SPOT_FLEET, spot)
    found = [v.message for v in run.violations if v.rule == "quota-within-grant"]
    assert any("burst-fleet" in m for m in found), found
    assert _needed(found) - _baseline() == 400  # 100 x 4 vCPUs
    unbounded = _fleet_run(SPOT_FLEET, {"launchSpecifications": [{"instanceType": "g6e.xlarge"}]})
    (refused,) = [v for v in unbounded.violations if v.rule == "quota-launches-bounded"]
    assert refused.level.enforcement == "mandatory" and "its target capacity cannot be read" in refused.message


def test_a_sagemaker_endpoint_is_refused_as_a_quota_the_pack_cannot_judge() -> None:
    """An endpoint configuration's ML instances draw on SageMaker's per-type quotas, not the EC2 codes the
    organization file grants: each variant is named with its most instances and refused (mandatory)."""
    config = {
        "productionVariants": [
            {
                "variantName": "AllTraffic",
                "modelName": "m",
                "instanceType": "ml.p5.48xlarge",
                "initialInstanceCount": 4,
            },
            {"variantName": "NoCount", "modelName": "m", "instanceType": "ml.g5.xlarge"},
            {"variantName": "Serverless", "modelName": "m", "serverlessConfig": {"maxConcurrency": 5}},
        ]
    }
    graph = planted(
        example_graph("chat-serve"), "aws:sagemaker/endpointConfiguration:EndpointConfiguration", "ep", config
    )
    run = police(graph, facts_for("chat-serve"), pack_config())
    found = sorted(v.message for v in run.violations if v.rule == "quota-launches-bounded")
    assert len(found) == 2 and {v.level.enforcement for v in run.violations if v.rule == "quota-launches-bounded"} == {
        "mandatory"
    }, found
    assert "ep: variant AllTraffic runs up to 4 x ml.p5.48xlarge" in found[0] and "cannot judge" in found[0], found
    assert "ep: variant NoCount launches instances without a count the pack can read" in found[1], found
