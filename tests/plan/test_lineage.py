"""Lineage: every run's manifest names the base, the data and eval versions, the spec's hash and the image digest;
the registry refuses to overwrite a manifest (judged by preflight's access evaluator on the generated policies)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from gpuinfra.graph import Graph
from gpuinfra.plan.lineage import MANIFEST_NAME, run_manifest, spec_sha256
from gpuinfra.preflight.access import Policies, Principal, Request, evaluate, parse
from gpuinfra.spec import FinetuneSpec
from helpers import example_data, example_graph, org_data

RAW = example_data("llm-finetune")["config"]["gpuinfra:finetune"]
ORG = org_data()
TRAINING = "111111111111"
BUCKET = ORG["registry"]["bucket"]
RUN_PREFIX = f"{ORG['registry']['upload_prefix']}{RAW['adapter_prefix']}run-42/"


def test_manifest_fields() -> None:
    spec = FinetuneSpec.model_validate(RAW)
    manifest = run_manifest(spec, "llm-finetune")
    assert manifest["base_model"] == {
        "name": RAW["base_model"]["name"],
        "weights_prefix": RAW["base_model"]["weights_prefix"],
        "version": RAW["base_model"]["version"],
    }
    assert manifest["dataset"] == RAW["dataset"] and manifest["eval_set"] == RAW["eval_set"]
    assert manifest["image"] == RAW["image"]
    assert manifest["image_digest"] == "sha256:" + RAW["image"].split("@sha256:")[1]
    canonical = json.dumps(spec.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    assert manifest["spec_sha256"] == hashlib.sha256(canonical.encode()).hexdigest()


def test_spec_hash_follows_configuration_not_layout() -> None:
    spec = FinetuneSpec.model_validate(RAW)
    reordered = FinetuneSpec.model_validate(dict(reversed(list(RAW.items()))))
    assert spec_sha256(spec) == spec_sha256(reordered)
    other = FinetuneSpec.model_validate({**RAW, "dataset": {**RAW["dataset"], "version": "v2"}})
    assert spec_sha256(other) != spec_sha256(spec)


def test_job_carries_the_manifest() -> None:
    graph = example_graph("llm-finetune")
    container = json.loads(graph.one("aws:batch/jobDefinition:JobDefinition").inputs["containerProperties"])
    env = {e["name"]: e["value"] for e in container["environment"]}
    assert json.loads(env["GPUINFRA_MANIFEST"]) == run_manifest(FinetuneSpec.model_validate(RAW), "llm-finetune")
    assert env["GPUINFRA_MANIFEST_NAME"] == MANIFEST_NAME


@pytest.fixture(scope="module")
def policies() -> Policies:
    registry: Graph = example_graph("model-registry")
    (policy,) = [
        p
        for p in registry.of_type("aws:s3/bucketPolicy:BucketPolicy")
        if any(registry.by_urn[u].inputs.get("bucket") == BUCKET for u in p.dependencies if u in registry.by_urn)
    ]
    job = example_graph("llm-finetune")
    (role_policy,) = [p for p in job.of_type("aws:iam/rolePolicy:RolePolicy") if p.name == "llm-finetune-job"]
    return Policies(
        identity=parse(role_policy.inputs["policy"], "job role"),
        resource=parse(policy.inputs["policy"], "registry bucket policy"),
    )


def put(key: str, **context: Any) -> Request:
    role = Principal(f"arn:aws:iam::{TRAINING}:role/llm-finetune-job", TRAINING)
    return Request(role, "s3:PutObject", f"arn:aws:s3:::{BUCKET}/{key}", "333333333333", context)


def test_registry_denies_a_manifest_overwrite(policies: Policies) -> None:
    # A plain PutObject could replace an existing manifest: denied outright.
    plain = evaluate(put(RUN_PREFIX + MANIFEST_NAME, **{"aws:SecureTransport": "true"}), policies)
    assert plain.outcome == "deny", plain.reason
    assert any("DenyManifestOverwrite" in s for s in plain.statements)


def test_registry_allows_a_conditional_create_and_plain_adapter_writes(policies: Policies) -> None:
    create = put(RUN_PREFIX + MANIFEST_NAME, **{"aws:SecureTransport": "true", "s3:if-none-match": "*"})
    assert evaluate(create, policies).outcome == "allow"
    adapter = put(RUN_PREFIX + "adapter_model.safetensors", **{"aws:SecureTransport": "true"})
    assert evaluate(adapter, policies).outcome == "allow"
