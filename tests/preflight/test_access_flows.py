"""The data flows every example depends on, judged by the identity, bucket and key policies together: all
allowed as built; the registry's policies before the fix (expert-inference review, findings 1 and 2) deny the
two registry flows AWS denied at runtime; preview exits 1 on a denied flow."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.findings import Level
from gpuinfra.graph import Graph
from gpuinfra.graph.flows import Flow
from gpuinfra.plan import build_plan
from gpuinfra.preflight.access.judge import RULE, flow_findings, judge_flows
from gpuinfra.pulumi.components.flows import FSX_EXPORTER, declared_flows
from helpers import example_graph, inputs_for

REGISTRY = "model-registry"
FLOWING = ["llm-train", "llm-train-eks", "chat-serve", "llm-finetune", REGISTRY]


def flows_of(stack: str) -> list[Flow]:
    inputs = inputs_for(stack)
    return declared_flows(inputs, build_plan(inputs.spec, inputs.org.org, load_catalog()))


def graphs_for(stack: str, registry: Graph | None = None) -> list[Graph]:
    reg = registry or example_graph(REGISTRY)
    return [reg] if stack == REGISTRY else [example_graph(stack), reg]


def test_on_premises_training_declares_no_aws_flows() -> None:
    assert flows_of("llm-train-onprem") == []


@pytest.mark.parametrize("stack", FLOWING)
def test_every_declared_flow_of_the_examples_is_allowed(stack: str) -> None:
    flows = flows_of(stack)
    assert flows, f"{stack} declares no flows"
    judged = judge_flows(flows, graphs_for(stack))
    refused = [(j.flow.name, j.decision.reason) for j in judged if j.decision.outcome != "allow"]
    assert not refused
    # the KMS flows were asked (not skipped for want of a key): the registry buckets are SSE-KMS with Bucket Keys
    assert any(j.flow.key_of for j in judged)


def test_the_flows_name_the_review_s_operations() -> None:
    """Training uploads (multipart: PutObject, AbortMultipartUpload, GenerateDataKey, Decrypt); replication
    (GetObjectVersionForReplication, Decrypt source, ReplicateObject, Encrypt + Decrypt replica); replicas read
    weights, the key, the API key, complete hooks, publish the metric."""
    actions = {stack: {(f.action, f.key_of) for f in flows_of(stack)} for stack in FLOWING}
    assert {
        ("s3:PutObject", False),
        ("s3:AbortMultipartUpload", False),
        ("kms:Decrypt", True),
        ("kms:GenerateDataKey", True),
    } <= actions["llm-train"]
    exporters = [f for f in flows_of("llm-train") if "AWSServiceRoleForFSxS3Access" in f.principal]
    assert {(f.action, f.key_of) for f in exporters} == {("s3:PutObject", False), ("kms:GenerateDataKey", True)}
    assert {
        ("s3:GetObjectVersionForReplication", False),
        ("s3:ReplicateObject", False),
        ("kms:Encrypt", True),
        ("kms:Decrypt", True),
    } <= actions[REGISTRY]
    assert {
        ("s3:GetObject", False),
        ("kms:Decrypt", True),
        ("secretsmanager:GetSecretValue", False),
        ("autoscaling:CompleteLifecycleAction", False),
        ("autoscaling:SetInstanceHealth", False),
        ("cloudwatch:PutMetricData", False),
    } <= actions["chat-serve"]


def test_a_replica_may_mark_instances_unhealthy_in_its_own_fleet_s_groups_only() -> None:
    """The GPU check's SetInstanceHealth: allowed on the region's groups of the fleet (declared flows, above),
    denied on another fleet's group and on the same fleet's group in another region."""
    own = [f for f in flows_of("chat-serve") if f.action == "autoscaling:SetInstanceHealth"]
    assert {f.resource.rsplit("/", 1)[1] for f in own if f.name.startswith("us-east-1:")} == {
        "chat-serve-us-east-1-base",
        "chat-serve-us-east-1-burst",
        "chat-serve-us-east-1-overflow",
    }
    sample = next(f for f in own if f.name.startswith("us-east-1:"))
    others = [
        dataclasses.replace(sample, name="another fleet", resource=sample.resource.replace("chat-serve-", "batch-")),
        dataclasses.replace(sample, name="another region", resource=sample.resource.replace("us-east-1", "us-west-2")),
    ]
    for judged in judge_flows(others, graphs_for("chat-serve")):
        # Not allowed by any statement in sight ("unknown" rather than "deny" only because the AWS-managed SSM
        # policy attached to the role is not in the graphs: it grants no Auto Scaling action).
        assert judged.decision.outcome != "allow"
        assert "no statement of the identity policies" in judged.decision.reason


# ---- the registry's policies before the fix ---------------------------------------------------------------
def _doc(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def _old_replication_policy(current: str) -> str:
    """The replication role's policy as it was: `ReplicaKeys` allowed only kms:Encrypt on the replica keys."""
    statements = json.loads(current)["Statement"]
    keep = [s for s in statements if not s["Sid"].startswith("ReplicaKey")]
    replica_keys = sorted(r for s in statements if s["Sid"].startswith("ReplicaKey") for r in s["Resource"])
    return _doc(*keep, {"Sid": "ReplicaKeys", "Effect": "Allow", "Action": ["kms:Encrypt"], "Resource": replica_keys})


def _old_key_policy(current: str) -> str:
    """The primary key's policy as it was: the training account got GenerateDataKey and Encrypt, no Decrypt."""
    statements = json.loads(current)["Statement"]
    for s in statements:
        if s["Sid"] == "TrainingEncrypt":
            s["Action"] = ["kms:GenerateDataKey", "kms:Encrypt"]
    return _doc(*statements)


def old_registry() -> Graph:
    graph = example_graph(REGISTRY)
    out = []
    for r in graph.resources:
        if r.name == f"{REGISTRY}-replication-access":
            r = dataclasses.replace(r, inputs={**r.inputs, "policy": _old_replication_policy(r.inputs["policy"])})
        elif r.name == f"{REGISTRY}-primary-key":
            r = dataclasses.replace(r, inputs={**r.inputs, "policy": _old_key_policy(r.inputs["policy"])})
        out.append(r)
    return Graph.of(graph.stack, graph.project, out)


def test_the_old_registry_policies_deny_replication_and_weight_uploads() -> None:
    old = old_registry()
    replication = judge_flows(flows_of(REGISTRY), [old])
    denied = {j.flow.name: j.decision for j in replication if j.decision.outcome == "deny"}
    regions = {"us-west-2", "eu-central-1", "ap-northeast-1"}
    assert set(denied) == {f"replicate to {r}: Bucket Key replica needs Decrypt" for r in regions}
    for decision in denied.values():
        assert "identity policies of arn:aws:iam::333333333333:role/model-registry-replication" in decision.missing
        assert "kms:Decrypt" in decision.missing
    upload = judge_flows(flows_of("llm-train"), [example_graph("llm-train"), old])
    denied = {j.flow.name: j.decision for j in upload if j.decision.outcome == "deny"}
    assert set(denied) == {"upload weights: multipart Decrypt"}
    missing = denied["upload weights: multipart Decrypt"].missing
    assert missing.startswith("key policy of model-registry-primary-key") and "kms:Decrypt" in missing
    assert "arn:aws:iam::111111111111:root" in missing  # the account the fix must name
    # and the fixed policies allow both (the example graph is the fixed one)
    fixed = judge_flows(flows_of(REGISTRY), [example_graph(REGISTRY)]) + judge_flows(
        flows_of("llm-train"), graphs_for("llm-train")
    )
    assert all(j.decision.outcome == "allow" for j in fixed)


def test_a_denied_flow_is_a_preflight_error_naming_the_missing_statement() -> None:
    findings = flow_findings(flows_of("llm-train"), example_graph("llm-train"), [old_registry()])
    errors = [f for f in findings if f.blocking]
    assert [f.rule for f in errors] == [RULE]
    assert errors[0].name == "llm-train-slurm-role"
    assert "add a statement to key policy of model-registry-primary-key" in errors[0].message


def test_a_flow_whose_peer_is_not_in_sight_is_unknown_not_allowed() -> None:
    findings = flow_findings(flows_of("llm-train"), example_graph("llm-train"), [])
    assert findings and {f.level for f in findings} == {Level.INFO}
    assert any("acme-model-registry is in none of the graphs" in f.message for f in findings)


def test_preview_exits_1_when_a_flow_is_denied(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The registry program itself builds the old key policy: preview of the training stack judges its upload
    flows against it and fails. (A fresh cache folder: the registry's graph is kept on disk by the code's
    content, which a monkeypatch does not change.)"""
    monkeypatch.setenv("GPUINFRA_CACHE_DIR", str(tmp_path))
    from gpuinfra.commands.preview import preview_run
    from gpuinfra.pulumi.components.registry import registry
    from gpuinfra.workspace import _workspace

    original = registry.key_policy
    monkeypatch.setattr(registry, "key_policy", lambda *a: _old_key_policy(original(*a)))
    _workspace.cache_clear()
    try:
        report = preview_run(["llm-train"]).report
    finally:
        _workspace.cache_clear()
    stack = report.stacks[0]
    flagged = [f for f in stack.preflight or () if f.rule == RULE]
    assert report.exit_code == 1
    assert [f.level for f in flagged] == ["error"] and "kms:Decrypt" in flagged[0].message


def _kms_bucket_graph(key_statements: list[dict[str, Any]]) -> Graph:
    """One SSE-KMS bucket (no Bucket Key) in account 111111111111 and its key, built by hand."""
    from graphs import graph, provider, res

    prov = provider("us-east-1", "111111111111")
    key = res("aws:kms/key:Key", "ckpt-key", prov, policy=_doc(*key_statements))
    bucket = res("aws:s3/bucket:Bucket", "ckpt", prov, bucket="ckpt")
    sse_rule = {
        "applyServerSideEncryptionByDefault": {
            "sseAlgorithm": "aws:kms",
            "kmsMasterKeyId": "arn:aws:kms:us-east-1:111111111111:key/k",
        }
    }
    sse = res(
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        "ckpt-sse",
        prov,
        (key, bucket),
        bucket="ckpt",
        rules=[sse_rule],
    )
    return graph(prov, key, bucket, sse)


def test_a_service_linked_role_gets_a_customer_key_only_from_the_key_policy() -> None:
    """FSx for Lustre UG, "Working with server-side encrypted Amazon S3 buckets": the key policy must name the
    FSx service-linked role; the account-root statement (IAM delegation) does not reach it."""
    slr = f"arn:aws:iam::111111111111:role/{FSX_EXPORTER}"
    flow = Flow("FSx export: data key", "s", slr, "kms:GenerateDataKey", "arn:aws:s3:::ckpt/a/b", key_of=True)
    root = {
        "Sid": "Root",
        "Effect": "Allow",
        "Principal": {"AWS": "arn:aws:iam::111111111111:root"},
        "Action": "kms:*",
        "Resource": "*",
    }
    named = {
        "Sid": "Fsx",
        "Effect": "Allow",
        "Principal": {"AWS": slr},
        "Action": ["kms:GenerateDataKey"],
        "Resource": "*",
    }
    (denied,) = judge_flows([flow], [_kms_bucket_graph([root])])
    assert denied.decision.outcome == "deny"
    (allowed,) = judge_flows([flow], [_kms_bucket_graph([root, named])])
    assert allowed.decision.outcome == "allow"
    # the encryption context S3 sends without a Bucket Key is the object ARN
    scoped = {**named, "Condition": {"StringEquals": {"kms:EncryptionContext:aws:s3:arn": "arn:aws:s3:::ckpt"}}}
    (bucket_scoped,) = judge_flows([flow], [_kms_bucket_graph([root, scoped])])
    assert bucket_scoped.decision.outcome == "deny"


def test_the_fleet_s_image_pull_through_the_cache_is_a_declared_flow() -> None:
    """Replicas pull vllm/vllm-openai through their region's ECR pull-through cache (prefix docker-hub): login,
    BatchGetImage and GetDownloadUrlForLayer (ECR identity-policy examples), and on the first pull
    CreateRepository and BatchImportUpstreamImage (ECR pull-through cache IAM page). Without the role's
    ImagePull statement none of them but the login is allowed."""
    from helpers import graph_for

    cache_spec = {"image_source": "ecr_pull_through"}
    inputs = inputs_for("chat-serve", cache_spec)
    declared = declared_flows(inputs, build_plan(inputs.spec, inputs.org.org, load_catalog()))
    pulls = [f for f in declared if f.action.startswith("ecr:") and f.name.startswith("us-east-1:")]
    repo = "arn:aws:ecr:us-east-1:222222222222:repository/docker-hub/vllm/vllm-openai"
    assert {(f.action, f.resource) for f in pulls} == {
        ("ecr:GetAuthorizationToken", "*"),
        *((a, repo) for a in ("ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer")),
        *((a, repo) for a in ("ecr:CreateRepository", "ecr:BatchImportUpstreamImage")),
    }
    # The default, the fleet's mirror: the same pulls from its own repository, and no create or import.
    mirror = [f for f in flows_of("chat-serve") if f.action.startswith("ecr:") and f.name.startswith("us-east-1:")]
    own = "arn:aws:ecr:us-east-1:222222222222:repository/chat-serve/vllm-openai"
    assert {(f.action, f.resource) for f in mirror} == {
        ("ecr:GetAuthorizationToken", "*"),
        *((a, own) for a in ("ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer")),
    }
    assert all(j.decision.outcome == "allow" for j in judge_flows(mirror, [example_graph("chat-serve")]))
    graph = graph_for("chat-serve", cache_spec)
    stripped = []
    for r in graph.resources:
        if r.name == "chat-serve-us-east-1-replicas-access":
            doc = json.loads(r.inputs["policy"])
            doc["Statement"] = [s for s in doc["Statement"] if s.get("Sid") != "ImagePull"]
            r = dataclasses.replace(r, inputs={**r.inputs, "policy": json.dumps(doc)})
        stripped.append(r)
    judged = judge_flows(pulls, [Graph.of(graph.stack, graph.project, stripped), example_graph(REGISTRY)])
    # The cached repository is created by the first pull, so no graph holds its policy: without the identity
    # grant the evaluator cannot allow the pull (same account: identity or resource policy, AWS evaluation logic)
    # and says it cannot decide, rather than allow.
    assert {j.flow.action: j.decision.outcome for j in judged} == {
        "ecr:GetAuthorizationToken": "allow",
        "ecr:BatchGetImage": "unknown",
        "ecr:GetDownloadUrlForLayer": "unknown",
        "ecr:CreateRepository": "unknown",
        "ecr:BatchImportUpstreamImage": "unknown",
    }
    assert all("no statement of the identity policies" in j.decision.reason for j in judged[1:])


def test_a_fine_tuning_job_reads_its_base_only_because_the_registry_grants_training_accounts() -> None:
    """The job role (training account) reads the released base across accounts: both its identity policy and the
    registry's bucket policy must allow it (AWS policy evaluation logic, cross-account). Without the registry's
    TrainingReadModels statement the read is denied, as the fine-tuning branch first built it."""
    flows = [f for f in flows_of("llm-finetune") if f.name == "read the base model"]
    assert flows and flows[0].principal == "llm-finetune-job"
    registry = example_graph(REGISTRY)
    stripped = []
    for r in registry.resources:
        if r.name == f"{REGISTRY}-primary-policy":
            doc = json.loads(r.inputs["policy"])
            doc["Statement"] = [
                s
                for s in doc["Statement"]
                if not s.get("Sid", "").startswith("Training") or s["Sid"] == "TrainingUpload"
            ]
            r = dataclasses.replace(r, inputs={**r.inputs, "policy": json.dumps(doc)})
        stripped.append(r)
    old = Graph.of(registry.stack, registry.project, stripped)
    (judged,) = judge_flows(flows, [example_graph("llm-finetune"), old])
    assert judged.decision.outcome == "deny", judged.decision.reason
    (allowed,) = judge_flows(flows, [example_graph("llm-finetune"), registry])
    assert allowed.decision.outcome == "allow"


def _with_policy(graph: Graph, name: str, edit: Any) -> Graph:
    """`graph` with the policy document of resource `name` changed by `edit` (on its parsed statements)."""
    out = []
    for r in graph.resources:
        if r.name == name:
            doc = json.loads(r.inputs["policy"])
            doc["Statement"] = edit(doc["Statement"])
            r = dataclasses.replace(r, inputs={**r.inputs, "policy": json.dumps(doc)})
        out.append(r)
    return Graph.of(graph.stack, graph.project, out)


def test_the_promotion_flow_is_declared_and_allowed_by_identity_bucket_and_key_policies() -> None:
    """Read uploads/ (and its key), write and lock models/: the promote role's own policy allows it; the bucket
    policy denies none of it (TLS only); the key policy delegates to IAM (same account, the Owner statement)."""
    flows = [f for f in flows_of(REGISTRY) if f.principal == f"{REGISTRY}-promote"]
    assert {(f.action, f.key_of) for f in flows} == {
        ("s3:ListBucket", False),
        ("s3:GetObject", False),
        ("kms:Decrypt", True),
        ("s3:PutObject", False),
        ("kms:GenerateDataKey", True),
        ("s3:PutObjectRetention", False),
    }
    assert {f.resource.split("/", 1)[-1].split("/")[0] for f in flows if f.action == "s3:GetObject"} == {
        "uploads",
        "models",
    }
    judged = judge_flows(flows, [example_graph(REGISTRY)])
    assert len(judged) == len(flows) and all(j.decision.outcome == "allow" for j in judged)


def test_a_promote_policy_that_writes_the_wrong_prefix_or_cannot_lock_is_denied() -> None:
    """Planted: the promote role's write statement on uploads/ instead of models/, then without
    s3:PutObjectRetention: the release's write (and lock) flows are denied, naming the role's policy."""
    flows = [f for f in flows_of(REGISTRY) if f.principal == f"{REGISTRY}-promote"]

    def wrong_prefix(statements: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for s in statements:
            if s["Sid"] == "ReleaseObjects":
                s["Resource"] = [r.replace("/models/", "/uploads/") for r in s["Resource"]]
        return statements

    def no_lock(statements: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for s in statements:
            if s["Sid"] == "ReleaseObjects":
                s["Action"] = [a for a in s["Action"] if a != "s3:PutObjectRetention"]
        return statements

    registry = example_graph(REGISTRY)
    denied = {
        j.flow.name
        for j in judge_flows(flows, [_with_policy(registry, f"{REGISTRY}-promote-access", wrong_prefix)])
        if j.decision.outcome == "deny"
    }
    assert denied == {
        "promote: is the version released (HeadObject)",
        "promote: write the release (multipart)",
        "promote: create a release shard (If-None-Match)",
        "promote: lock the release",
        "promote: create the release manifest (If-None-Match)",
    }
    judged = judge_flows(flows, [_with_policy(registry, f"{REGISTRY}-promote-access", no_lock)])
    denied_lock = [j for j in judged if j.decision.outcome == "deny"]
    assert [j.flow.name for j in denied_lock] == ["promote: lock the release"]
    assert "model-registry-promote" in denied_lock[0].decision.missing


@pytest.mark.parametrize("flow_name", ["promote: create the release manifest", "promote: create a release shard"])
def test_a_release_object_written_without_if_none_match_is_denied_by_the_bucket_policy(flow_name: str) -> None:
    """DenyModelOverwrite: the declared writes of a release's manifest and shards carry If-None-Match and are
    allowed; the same write without it (a PutObject or CompleteMultipartUpload that would replace a released shard:
    s3:ObjectCreationOperation true) is denied, whatever the promote role allows. The multipart calls that take no
    conditional header (s3:ObjectCreationOperation false) stay allowed. This is the evaluation moto does not make:
    its bucket-policy check ignores Condition blocks."""
    (flow,) = [f for f in flows_of(REGISTRY) if f.name.startswith(flow_name)]
    (allowed,) = judge_flows([flow], [example_graph(REGISTRY)])
    assert allowed.decision.outcome == "allow"
    bare = dataclasses.replace(flow, context={"s3:ObjectCreationOperation": "true"})
    (denied,) = judge_flows([bare], [example_graph(REGISTRY)])
    assert denied.decision.outcome == "deny"
    (part,) = [f for f in flows_of(REGISTRY) if f.name == "promote: write the release (multipart)"]
    assert part.context == {"s3:ObjectCreationOperation": "false"}
    (judged,) = judge_flows([part], [example_graph(REGISTRY)])
    assert judged.decision.outcome == "allow"


def test_a_bucket_policy_deny_on_the_model_prefix_denies_the_release_whatever_the_role_allows() -> None:
    """An explicit Deny in the bucket policy wins over the role's Allow (IAM policy evaluation logic)."""
    flows = [f for f in flows_of(REGISTRY) if f.name == "promote: write the release (multipart)"]
    deny = {
        "Sid": "Planted",
        "Effect": "Deny",
        "Principal": "*",
        "Action": "s3:PutObject",
        "Resource": "arn:aws:s3:::acme-model-registry/models/*",
    }
    planted = _with_policy(example_graph(REGISTRY), f"{REGISTRY}-primary-policy", lambda s: [*s, deny])
    (judged,) = judge_flows(flows, [planted])
    assert judged.decision.outcome == "deny"
