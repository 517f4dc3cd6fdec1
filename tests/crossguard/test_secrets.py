"""Secrets as `pulumi preview --policy-pack policies` hands them to the pack: the engine sends a secret property
wrapped in Pulumi's secret signature ({"4dabf1...": "1b4706...", "value": ...}); pulumi-policy's own deserializer
(pulumi_policy.deserialize.deserialize_properties, called by its Analyze handler) unwraps it to the plain value
before any policy runs. Over the real analyzer protocol (tests/pack_client.py starts policies/__main__.py as the
engine does), a secret grant and a secret kubeconfig are judged like plain ones, without a crash; in-process, where
secrets are blinded, the same secret grant is refused as one the pack cannot judge, never passed."""

from __future__ import annotations

import json
from typing import Any

from gpuinfra.graph import SECRET
from gpuinfra.graph.values import SECRET_SIG, SIG
from gpuinfra.policy.pack import pack_config, police, reconcile
from gpuinfra.pulumi.preview import engine_config
from helpers import example_graph, inputs_for
from pack_client import running_pack
from policy_helpers import edited, facts_for

GRANT = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "InferenceReads",
                "Effect": "Allow",
                "Principal": {"AWS": "arn:aws:iam::222222222222:root"},
                "Action": "s3:GetObject",
                "Resource": "arn:aws:s3:::llm-train-checkpoints/*",
            }
        ],
    }
)
KUBECONFIG = (
    "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://x.example:6443\n"
    "contexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {}\n"
)


def secret(value: Any) -> dict[str, Any]:
    """A property as the engine serializes a secret (pulumi sdk/go/common/resource/sig: SecretSig)."""
    return {SIG: SECRET_SIG, "value": value}


def test_the_real_deserializer_unwraps_a_secret_to_its_plain_value() -> None:
    from pulumi_policy.deserialize import deserialize_properties

    assert deserialize_properties({"policy": secret(GRANT)}) == {"policy": GRANT}


def over_the_protocol(stack: str, graph: Any) -> list[tuple[str, str, str]]:
    config, _ = engine_config(inputs_for(stack))
    with running_pack(stack, config) as pack:
        pack.configure(reconcile(pack.metas()))
        diagnostics, _ = pack.analyze_graph(graph)
    return [(d.policy, d.level, d.message) for d in diagnostics]


def test_a_secret_grant_is_judged_under_the_cli_and_refused_in_process() -> None:
    edit = (("aws:s3/bucketPolicy:BucketPolicy", "llm-train-storage-checkpoints-policy", {"policy": secret(GRANT)}),)
    found = over_the_protocol("llm-train", edited(example_graph("llm-train"), edit))
    grants = [(level, m) for policy, level, m in found if policy == "separation-cross-account-grants"]
    assert grants and all(level == "mandatory" for level, _ in grants), found
    assert any(
        "statement InferenceReads grants ml-inference (222222222222, inference) s3:GetObject" in m for _, m in grants
    )
    blinded = (("aws:s3/bucketPolicy:BucketPolicy", "llm-train-storage-checkpoints-policy", {"policy": SECRET}),)
    run = police(edited(example_graph("llm-train"), blinded), facts_for("llm-train"), pack_config())
    inside = [v for v in run.violations if v.rule == "separation-cross-account-grants"]
    assert inside and {v.level.enforcement for v in inside} == {"mandatory"}
    assert "the document is a secret the pack is not shown" in inside[0].message


def test_a_secret_kubeconfig_is_read_under_the_cli() -> None:
    edit = (("pulumi:providers:kubernetes", "k8s-us-east-1", {"kubeconfig": secret(KUBECONFIG)}),)
    found = over_the_protocol("chat-serve-k8s", edited(example_graph("chat-serve-k8s"), edit))
    assert any(
        policy == "separation-kubernetes"
        and level == "mandatory"
        and "points at https://x.example:6443, which is no cluster the organization file registers" in message
        for policy, level, message in found
    ), found
