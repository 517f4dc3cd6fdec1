"""Deny by default (`unrecognised-resource`): every example passes; a real graph with one resource of a type the
allow-list does not name for its account's purpose fails; the allow-list itself names only types the provider
packages define (a misspelled type cannot hide in it)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from gpuinfra.graph import Resource
from gpuinfra.policy import rules as policies
from gpuinfra.policy.allowlist import PURPOSES, AllowListError, allow_list, exempt
from gpuinfra.policy.pack import pack_config, police
from gpuinfra.policy.rules.declare import ResourceRule
from helpers import EXAMPLES, example_graph
from policy_helpers import PolicyCase, edited, facts_for, planted, run_case, with_resources
from preflight.upstream import local_crds
from provider_tokens import provider_types
from ruamel.yaml import YAML

POLICY = "unrecognised-resource"
CASES = [PolicyCase(POLICY, stack, fires=False) for stack in EXAMPLES]
COVERS = [POLICY, "unrecognised-chart"]
"""Its failing cases plant resources into real graphs below (tests/policies/test_registration.py reads this)."""

UPSTREAM = Path(__file__).resolve().parents[3] / "shared" / "upstream"
CRD_FOLDERS: dict[str, str | None] = {
    # The custom resources' API groups, and the upstream release whose CRDs define them: the versions the
    # example organization file pins for its clusters (stacks/org.yaml `components`).
    "karpenter.sh": "k8s/karpenter-v1.14.1",
    "karpenter.k8s.aws": "k8s/karpenter-v1.14.1",
    "keda.sh": "k8s/keda-v2.17.2",
    "kueue.x-k8s.io": "k8s/kueue-v0.19.2",
    "monitoring.coreos.com": "k8s/prometheus-operator-v0.93.0",
    "networking.gke.io": None,  # only in tests/fixtures/upstream (preflight.upstream.local_crds)
}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_every_example_passes(case: PolicyCase) -> None:
    run_case(case)


def _violations(graph, stack: str) -> list:  # type: ignore[no-untyped-def]
    run = police(graph, facts_for(stack), pack_config())
    assert POLICY in run.evaluated
    return [v for v in run.violations if v.rule == POLICY]


# Types a hand-edited program could add, each a red-team path the pack had no rule for (each with real arguments
# of its provider's schema): compute no quota saw, grants in resource policies no rule read, a public bucket
# declared through the other AWS provider, a data copy out of the account.
UNLISTED = [
    (
        "chat-serve",
        "aws:ec2/fleet:Fleet",
        {
            "type": "maintain",
            "launchTemplateConfigs": [{"launchTemplateSpecification": {"launchTemplateName": "chat-serve-burst"}}],
            "targetCapacitySpecification": {"defaultTargetCapacityType": "spot", "totalTargetCapacity": 300},
        },
    ),
    (
        "chat-serve",
        # (an SNS topic policy was the example here; training accounts now hold one for their alarm topic)
        "aws:sqs/queuePolicy:QueuePolicy",
        {
            "queueUrl": "https://sqs.us-east-1.amazonaws.com/222222222222/alerts",
            "policy": json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"AWS": "arn:aws:iam::111111111111:root"},
                            "Action": "sqs:SendMessage",
                            "Resource": "arn:aws:sqs:us-east-1:222222222222:alerts",
                        }
                    ],
                }
            ),
        },
    ),
    (
        "llm-train",
        "aws-native:s3:Bucket",
        {
            "bucketName": "llm-train-public",
            "publicAccessBlockConfiguration": {"blockPublicAcls": False, "blockPublicPolicy": False},
        },
    ),
    (
        "llm-train",
        "aws:datasync/task:Task",
        {
            "sourceLocationArn": "arn:aws:datasync:us-east-1:111111111111:location/loc-0123456789abcdef0",
            "destinationLocationArn": "arn:aws:datasync:us-east-1:222222222222:location/loc-0fedcba9876543210",
        },
    ),
]


@pytest.mark.parametrize(("stack", "kind", "inputs"), UNLISTED, ids=[k for _, k, _ in UNLISTED])
def test_one_resource_of_an_unlisted_type_fails(stack: str, kind: str, inputs: dict) -> None:
    graph = planted(example_graph(stack), kind, "planted", inputs)
    found = _violations(graph, stack)
    assert [(v.level.enforcement, v.urn.rsplit("::", 1)[1]) for v in found] == [("mandatory", "planted")]
    assert f"planted is of type {kind}, which the pack does not recognise" in found[0].message
    assert "infra/gpuinfra/policy/data/resource_types.yaml" in found[0].message


def test_a_listed_type_in_an_account_of_another_purpose_fails() -> None:
    """A Lustre file system is a training type: in the inference stack it is refused, naming the account."""
    graph = planted(
        example_graph("chat-serve"),
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        "scratch",
        {"storageCapacity": 1200, "deploymentType": "PERSISTENT_2", "subnetIds": ["subnet-0abc"]},
    )
    found = _violations(graph, "chat-serve")
    assert len(found) == 1
    assert "allows only in training accounts" in found[0].message
    assert "deployed into ml-inference, an inference account" in found[0].message


def test_the_account_is_the_one_the_resource_is_deployed_into() -> None:
    """A training stack's placement group created through a provider pinned to the inference account is judged
    by the inference account's purpose (the organization file's)."""
    graph = example_graph("llm-train")
    anchor = next(r for r in graph.resources if r.type == "pulumi:providers:aws")
    other = Resource(
        anchor.urn.rsplit("::", 1)[0] + "::elsewhere",
        "pulumi:providers:aws",
        "elsewhere",
        anchor.parent,
        None,
        True,
        (),
        {**anchor.inputs, "allowedAccountIds": json.dumps(["222222222222"])},
    )
    group = Resource(
        anchor.urn.rsplit("::", 2)[0] + "::aws:ec2/placementGroup:PlacementGroup::pg",
        "aws:ec2/placementGroup:PlacementGroup",
        "pg",
        anchor.parent,
        other.urn,
        True,
        (),
        {"strategy": "cluster"},
    )
    found = _violations(with_resources(graph, other, group), "llm-train")
    assert [v.urn for v in found] == [group.urn]
    assert "deployed into ml-inference, an inference account" in found[0].message


def test_components_of_the_program_pass_and_another_packages_do_not() -> None:
    graph = example_graph("chat-serve")
    ours = planted(graph, "gpuinfra:inference:Extra", "extra", {})
    assert _violations(ours, "chat-serve") == []
    foreign = planted(graph, "eks:index:Cluster", "side-cluster", {"instanceType": "p5.48xlarge"})
    assert len(_violations(foreign, "chat-serve")) == 1
    assert exempt("pulumi:pulumi:Stack") and not exempt("pulumi:providers:gcp")


# ---- the allow-list itself --------------------------------------------------------------------------
def test_every_row_has_a_reason_purposes_and_real_policies() -> None:
    names = {p.name for p in policies.POLICIES}
    rows = allow_list()
    assert len(rows) > 50
    for row in rows.values():
        assert len(row.reason) > 15 and set(row.purposes) <= set(PURPOSES), row
        assert set(row.judged_by) <= names, (row.type, set(row.judged_by) - names)


def test_a_resource_policy_a_row_names_judges_its_type() -> None:
    """A row may say a resource policy judges its type only if that policy applies to the type (its declared types
    or prefix): a claim the pack would not act on is caught. Stack policies read types through the graph, which the
    family tests hold for paths, launchers and policy carriers (test_reachability, test_launchers,
    test_policy_carriers)."""
    rules = {p.name: p for p in policies.POLICIES if isinstance(p, ResourceRule)}
    claims = [(t, n) for t, row in allow_list().items() for n in row.judged_by if n in rules]
    assert len(claims) > 20
    assert [(t, n) for t, n in claims if not rules[n].applies_to(t)] == []


def test_a_malformed_row_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "types.yaml"
    bad.write_text('types:\n  "aws:ec2/vpc:Vpc": {category: network, purposes: [traning], reason: ""}\n')
    with pytest.raises(AllowListError, match=r"purpose 'traning' is none of training, inference, registry"):
        allow_list(bad)
    duplicate = tmp_path / "duplicate.yaml"
    row = '{category: network, purposes: [training], reason: "a network"}'
    duplicate.write_text(f'types:\n  "aws:ec2/vpc:Vpc": {row}\n  "aws:ec2/vpc:Vpc": {row}\n')
    with pytest.raises(AllowListError, match="cannot be read"):
        allow_list(duplicate)


def crd_defines(group: str, version: str, kind: str) -> bool:
    shared: list[Path] = []
    if CRD_FOLDERS[group] is not None:
        folder = UPSTREAM / str(CRD_FOLDERS[group])
        if not folder.exists():
            if os.environ.get("CI"):
                pytest.fail(f"{folder} is missing: custom resource types are checked against upstream CRDs in CI")
            pytest.skip(f"{folder} not present (outside CI)")
        shared = sorted(folder.glob(f"{group}_*.yaml"))
    for path in shared + local_crds(group):
        crd = YAML(typ="safe", pure=True).load(path.read_text())
        if crd["spec"]["group"] == group and crd["spec"]["names"]["kind"] == kind:
            return any(v["name"] == version and v.get("served") for v in crd["spec"]["versions"])
    return False


def test_provider_types_are_read_from_the_packages() -> None:
    known = provider_types()
    assert {"aws:ec2/vpc:Vpc", "aws-native:pcs:Cluster", "kubernetes:apps/v1:Deployment"} <= known
    assert {"pulumi:providers:aws", "pulumi:providers:random"} <= known
    assert "aws:ec2/vpc:VPC" not in known and "aws:ec2/fleet:Fleet" in known
    assert len(known) > 3000


def test_every_listed_type_is_one_its_provider_defines() -> None:
    known = provider_types()
    custom = {t for t in allow_list() if t.startswith("kubernetes:") and t.split(":")[1].split("/")[0] in CRD_FOLDERS}
    assert {t for t in allow_list() if t not in known} == custom
    for token in custom:
        group_version, kind = token.removeprefix("kubernetes:").split(":")
        group, version = group_version.split("/")
        assert crd_defines(group, version, kind), token


# ---- inside a Helm release: only the charts the program pins ------------------------------------------------
CHART = "unrecognised-chart"
RELEASE = "kubernetes:helm.sh/v3:Release"
CHART_CASES = [PolicyCase(CHART, stack, fires=False) for stack in ("llm-train-eks", "llm-train-gcp")]
"""(The KubeRay operator's release passes with the Ray engine's whole stack: tests/dataprep/test_ray_stack.py.)"""


@pytest.mark.parametrize("case", CHART_CASES, ids=lambda c: c.id)
def test_the_examples_releases_are_the_pinned_charts(case: PolicyCase) -> None:
    assert any(r.type == RELEASE for r in example_graph(case.stack).resources)
    run_case(case)


def _chart_violations(graph, stack: str) -> list:  # type: ignore[no-untyped-def]
    run = police(graph, facts_for(stack), pack_config())
    return [(v.level.enforcement, v.message) for v in run.violations if v.rule == CHART]


def test_a_release_of_a_chart_the_program_does_not_pin_is_refused() -> None:
    """A hand-edited program adds a chart (Karpenter, whose NodePools no quota would see) to the training cluster."""
    inputs = {
        "chart": "oci://public.ecr.aws/karpenter/karpenter",
        "version": "1.8.1",
        "namespace": "kube-system",
        "values": {"settings": {"clusterName": "llm-train-eks"}},
    }
    found = _chart_violations(planted(example_graph("llm-train-eks"), RELEASE, "extra", inputs), "llm-train-eks")
    assert found == [
        (
            "mandatory",
            "extra installs chart oci://public.ecr.aws/karpenter/karpenter 1.8.1, which the pack does not recognise: a "
            "Helm release creates objects the graph does not show, so no policy can judge them. Install only the "
            "charts gpuinfra pins (infra/gpuinfra/catalog/pins.py), at their pinned version and repository, or declare "
            "the objects themselves",
        )
    ]


def test_a_pinned_chart_at_another_version_or_repository_is_refused() -> None:
    graph = example_graph("llm-train-eks")
    release = next(r for r in graph.resources if r.type == RELEASE and r.inputs.get("chart") == "nvidia-device-plugin")
    for change in ({"version": "0.20.0"}, {"repositoryOpts": {"repo": "https://charts.example.com"}}):
        found = _chart_violations(edited(graph, ((RELEASE, release.name, change),)), "llm-train-eks")
        assert len(found) == 1 and found[0][1].startswith(f"{release.name} installs chart nvidia-device-plugin")
