"""Every type that can launch instances counts, or is refused: the set is derived from the provider schemas, not a
list of the common ones.

A launcher is a resource type of pulumi-aws or pulumi-aws-native whose inputs name an instance type at any depth
(`instance_type`, `instance_types`, `ec2_instance_type`, `instance_requirements`) or an EKS Auto Mode node pool
(`node_pools`), read from the packages' generated input classes (tests/provider_tokens.py). Each is either refused
by `unrecognised-resource` (not on the allow-list), or allow-listed and judged by a policy that counts it at its
maximum (quota-within-grant, budget-within-account) or refuses it unbounded (quota-launches-bounded), or says
why it launches nothing itself. SageMaker's launchers, the issue's named ones among them (training jobs), are refused
by quota-launches-bounded even if a row ever lets them through: their quotas are SageMaker's own, per ML instance
type and use, which the organization file does not state.

Upstream: SageMaker API, CreateTrainingJob (ResourceConfig: InstanceType, InstanceCount, InstanceGroups); EKS User
Guide, "Automate cluster infrastructure with EKS Auto Mode" (computeConfig: enabled, nodePools).
"""

from __future__ import annotations

from typing import Any

import pytest
from gpuinfra.graph import tokens
from gpuinfra.graph.fleets import FLEET_TYPES
from gpuinfra.graph.sagemaker import SAGEMAKER_LAUNCHERS, TRAINING_JOB
from gpuinfra.policy.allowlist import allow_list
from gpuinfra.policy.pack import pack_config, police
from helpers import example_graph
from policy_helpers import edited, facts_for, one_of_each, planted
from provider_tokens import types_with_argument

COVERS = ["quota-launches-bounded"]
"""Failing and passing cases below (test_registration reads this)."""

LAUNCH_ARGUMENTS = frozenset(
    {"instance_type", "instance_types", "ec2_instance_type", "instance_requirements", "node_pools"}
)
COUNTING = {"quota-within-grant", "budget-within-account", "quota-launches-bounded"}
LAUNCHES_NOTHING = {
    tokens.LAUNCH_TEMPLATE: "a template a group launches from: CreateLaunchTemplate starts no instance; the group "
    "is counted",
}
"""Allow-listed types whose inputs name an instance type yet launch nothing themselves, and why."""


def launchers() -> dict[str, str]:
    return types_with_argument(("pulumi_aws", "pulumi_aws_native"), LAUNCH_ARGUMENTS)


def test_the_launchers_are_read_from_the_providers() -> None:
    found = launchers()
    assert found[TRAINING_JOB] in ("resource_config.instance_type", "debug_rule_configurations.instance_type")
    assert found["aws:eks/cluster:Cluster"] == "compute_config.node_pools"
    expected = (
        *(tokens.ASG, tokens.EKS_NODE_GROUP, tokens.PCS_NODE_GROUP, tokens.EC2_FLEET, tokens.SPOT_FLEET),
        *(
            tokens.BATCH_COMPUTE_ENVIRONMENT,
            tokens.INSTANCE,
            "aws:sagemaker/endpointConfiguration:EndpointConfiguration",
        ),
        *("aws-native:sagemaker:Cluster", "aws:emr/cluster:Cluster"),
    )
    assert [t for t in expected if t not in found] == []
    assert len(found) > 80


def test_every_listed_launcher_is_counted_or_bounded() -> None:
    rows = allow_list()
    listed = {t: rows[t] for t in launchers() if t in rows}
    assert tokens.ASG in listed and tokens.PCS_NODE_GROUP in listed
    uncounted = [t for t, row in listed.items() if t not in LAUNCHES_NOTHING and not set(row.judged_by) & COUNTING]
    assert uncounted == []


def test_every_sagemaker_launcher_is_judged_by_quota_launches_bounded() -> None:
    sagemaker = {t for t in launchers() if t.split(":")[1].split("/")[0] == "sagemaker"}
    assert sagemaker - set(SAGEMAKER_LAUNCHERS) == set()
    assert set(SAGEMAKER_LAUNCHERS) - sagemaker == set(), "a SageMaker type no longer launches instances"


def test_every_unlisted_launcher_is_refused() -> None:
    """One real graph (llm-train) with one resource of each unlisted launcher (no inputs: nothing bounds it): each is a
    mandatory violation of unrecognised-resource, and the SageMaker ones and the fleets of
    quota-launches-bounded too."""
    rows = allow_list()
    unlisted = sorted(t for t in launchers() if t not in rows)
    graph, extra = one_of_each(example_graph("llm-train"), unlisted, "l")
    run = police(graph, facts_for("llm-train"), pack_config())
    mandatory = [v for v in run.violations if v.level.enforcement == "mandatory"]
    refused = {v.urn for v in mandatory if v.rule == "unrecognised-resource"}
    assert [r.type for r in extra if r.urn not in refused] == []
    bounded = {v.urn for v in mandatory if v.rule == "quota-launches-bounded"}
    expected = {t for t in unlisted if t in (*SAGEMAKER_LAUNCHERS, *FLEET_TYPES)}
    assert {r.type for r in extra if r.urn in bounded} == expected


def quota_messages(graph: Any, stack: str) -> list[str]:
    run = police(graph, facts_for(stack), pack_config())
    return [
        v.message for v in run.violations if v.rule == "quota-launches-bounded" and v.level.enforcement == "mandatory"
    ]


TRAINING_JOBS = [
    (
        {"resourceConfig": {"instanceType": "ml.p5.48xlarge", "instanceCount": 16, "volumeSizeInGb": 500}},
        "planted: the training job runs 16 x ml.p5.48xlarge, on SageMaker's own quota for ml.p5.48xlarge training job "
        "usage, which the organization file does not state: cannot judge",
    ),
    (
        {"resourceConfig": {"instanceGroups": [{"instanceGroupName": "gpus", "instanceType": "ml.p4d.24xlarge",
                                                "instanceCount": 4}]}},
        "planted: instance group gpus runs 4 x ml.p4d.24xlarge",
    ),
    (
        {"resourceConfig": {"instanceType": "ml.p5.48xlarge"}},
        "planted: the training job launches instances without a count the pack can read",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("config", "message"), TRAINING_JOBS, ids=["count", "groups", "no-count"])
def test_a_sagemaker_training_job_is_refused_as_a_quota_the_pack_cannot_judge(config: dict, message: str) -> None:
    inputs = {"roleArn": "arn:aws:iam::111111111111:role/sm", "trainingJobName": "extra", **config}
    found = quota_messages(planted(example_graph("llm-train"), TRAINING_JOB, "planted", inputs), "llm-train")
    assert any(m.startswith(message) for m in found), found


def test_an_eks_cluster_in_auto_mode_is_refused_and_the_example_cluster_passes() -> None:
    graph = example_graph("llm-train-eks")
    assert quota_messages(graph, "llm-train-eks") == []
    auto = edited(
        graph, ((tokens.EKS_CLUSTER, None, {"computeConfig": {"enabled": True, "nodePools": ["general-purpose"]}}),)
    )
    found = quota_messages(auto, "llm-train-eks")
    assert len(found) == 1 and "runs in EKS Auto Mode (computeConfig.enabled)" in found[0], found
    assert "(general-purpose)" in found[0]
