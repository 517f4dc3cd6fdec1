"""What production preflight cannot judge from packaged libraries, judged here against the upstream files
in ../shared/upstream at the pinned versions: custom resources (Kueue, KEDA, JobSet) by their CRD schemas,
Helm release values by the chart's values.yaml, interfaces per network card by EC2's per-type limits."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from gpuinfra.graph import Graph, Resource
from helpers import DELETE, ample_quotas, example_graph, graph_for
from upstream import CRD_GROUPS, chart_values, crd_errors, crd_schema, network_cards, unknown_values

GRAPHS = {
    "llm-train-eks": lambda: example_graph("llm-train-eks"),
    "llm-train-onprem": lambda: example_graph("llm-train-onprem"),
    "chat-serve-k8s": lambda: example_graph("chat-serve-k8s"),
    "llm-train": lambda: example_graph("llm-train"),
    "llm-train-gcp": lambda: example_graph("llm-train-gcp"),
    "llm-finetune-kueue": lambda: graph_for(
        "llm-finetune",
        {
            "kueue": {
                "kubeconfig_key": "gpuinfra:kube-dc-east",
                "cluster_queue": "llm-train-dc",
                "namespace": "research",
                "checkpoint_uri": "s3://acme-finetune-checkpoints/checkpoints/",
            }
        },
        config={"gpuinfra:kube-dc-east": {"secure": "v1:UExBQ0VIT0xERVI=:UExBQ0VIT0xERVI="}},
    ),
    "corpus-prep-ray": lambda: graph_for(
        "corpus-prep",
        {
            "engine": "datatrove-ray",
            "image_id": DELETE,
            "stages.dedup.accelerator": "gpu",
            "ray": {
                "kubeconfig_key": "gpuinfra:kube-prep",
                "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/acme/ray@sha256:" + "ab" * 32,
                "curator_image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/acme/curator@sha256:" + "cd" * 32,
                "oidc_provider_arn": "arn:aws:iam::555555555555:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/P",
                "karpenter": {"version": "1.14.1", "node_role": "prep-node", "discovery_tag": "prep-us-east-1"},
            },
        },
        {
            "accounts.corpus-prep.allow_accelerators": True,
            "accounts.corpus-prep.quotas.us-east-1.L-417A185B": 576,
        },
        config={"gpuinfra:kube-prep": {"secure": "v1:UExBQ0VIT0xERVI=:UExBQ0VIT0xERVI="}},
    ),
    "p4d": lambda: graph_for(
        "llm-train",
        {"compute.instance_type": "p4d.24xlarge", "compute.node_count": 16, "model.parallelism.zero_stage": 3},
        ample_quotas(),
    ),
}


def _custom(graph: Graph) -> list[Resource]:
    return [
        r
        for r in graph.resources
        if r.type.startswith("kubernetes:") and r.type.split(":")[1].split("/")[0] in CRD_GROUPS
    ]


def _crd_errors(r: Resource) -> list[str]:
    return crd_errors(r)


@pytest.mark.parametrize(
    "stack",
    ["llm-train-eks", "llm-train-onprem", "chat-serve-k8s", "llm-finetune-kueue", "llm-train-gcp", "corpus-prep-ray"],
)
def test_custom_resources_fit_their_upstream_crd(stack: str) -> None:
    resources = _custom(GRAPHS[stack]())
    assert resources
    errors = {r.name: _crd_errors(r) for r in resources}
    assert {k: v for k, v in errors.items() if v} == {}


def test_a_misspelt_custom_resource_field_is_caught_by_the_crd() -> None:
    queue = next(r for r in _custom(example_graph("llm-train-eks")) if r.type.endswith(":ClusterQueue"))
    bad = Resource(
        queue.urn,
        queue.type,
        queue.name,
        inputs={**queue.inputs, "spec": {**queue.inputs["spec"], "queueingStrategyy": "x"}},
    )
    assert any("queueingStrategyy" in e for e in _crd_errors(bad))


def _releases(graph: Graph) -> list[Resource]:
    return graph.of_type("kubernetes:helm.sh/v3:Release")


@pytest.mark.parametrize("stack", ["llm-train-eks", "llm-train-onprem", "llm-train-gcp", "corpus-prep-ray"])
def test_helm_values_are_values_the_chart_defines(stack: str) -> None:
    unknown = {}
    for release in _releases(GRAPHS[stack]()):
        i = release.inputs
        defaults = chart_values(i["chart"], i["version"])
        unknown[i["chart"]] = unknown_values(i.get("values") or {}, defaults)
    assert {k: v for k, v in unknown.items() if v} == {}


def test_an_unknown_helm_value_is_caught() -> None:
    release = next(r for r in _releases(example_graph("llm-train-eks")) if "nvidia" in r.inputs["chart"])
    defaults = chart_values(release.inputs["chart"], release.inputs["version"])
    assert unknown_values({"tolerations": [], "gfd": {"enabledd": True}}, defaults) == ["gfd.enabledd"]


def _per_card(graph: Graph) -> list[tuple[str, int, int, int]]:
    """(template, card, interfaces on it, EC2's maximum for the card)."""
    out = []
    from gpuinfra.clouds.aws.preflight.rules.compute import instance_types

    for lt in graph.of_type("aws:ec2/launchTemplate:LaunchTemplate"):
        types = instance_types(graph, lt)
        limits = network_cards().get(types[0]) if types else None
        if limits is None:
            continue
        _, per_card = limits
        counts: dict[int, int] = {}
        for ni in lt.inputs.get("networkInterfaces") or []:
            counts[ni.get("networkCardIndex", 0)] = counts.get(ni.get("networkCardIndex", 0), 0) + 1
        out += [(lt.name, card, n, per_card[card] if card < len(per_card) else 0) for card, n in counts.items()]
    return out


@pytest.mark.parametrize("stack", ["llm-train", "llm-train-eks", "p4d"])
def test_interfaces_per_network_card_within_ec2_limits(stack: str) -> None:
    rows = _per_card(GRAPHS[stack]())
    assert rows
    assert [r for r in rows if r[2] > r[3]] == []


def test_network_card_counts_of_the_catalog_match_ec2(stack: str = "llm-train") -> None:
    """The catalog's network_cards (which production preflight uses) agree with EC2's per-type data."""
    from gpuinfra.catalog import load_catalog

    catalog = load_catalog()
    mismatched: dict[str, Any] = {}
    for name, (_, per_card) in network_cards().items():
        spec = catalog.instance(name)
        if spec is not None and spec.efa_interfaces and spec.network_cards != len(per_card):
            mismatched[name] = (spec.network_cards, len(per_card))
    assert mismatched == {}


@pytest.mark.parametrize("stack", ["llm-train-eks", "llm-train-onprem", "llm-train-gcp"])
def test_the_jobset_template_fits_the_jobset_crd_at_the_pin(stack: str) -> None:
    from ruamel.yaml import YAML

    (config,) = [
        c
        for c in GRAPHS[stack]().of_type("kubernetes:core/v1:ConfigMap")
        if "jobset.yaml" in (c.inputs.get("data") or {})
    ]
    jobset = YAML(typ="safe", pure=True).load(config.inputs["data"]["jobset.yaml"])
    group, version = jobset["apiVersion"].split("/")
    validator = jsonschema.Draft7Validator(crd_schema(group, version, jobset["kind"]))
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(jobset)]
    assert errors == []
    misspelt = {**jobset, "spec": {**jobset["spec"], "failurePolicy": {"maxRestart": 3}}}
    assert any("maxRestart" in e.message for e in validator.iter_errors(misspelt))
