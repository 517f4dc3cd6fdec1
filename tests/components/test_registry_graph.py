"""The registry stack: grants by purpose (write for training, read for inference, nothing else) and
one replication rule per inference region."""

from __future__ import annotations

import json

import pytest
from gpuinfra.graph import Graph
from helpers import example_graph, org_data

ORG = org_data()
TRAINING = "arn:aws:iam::111111111111:root"
INFERENCE = "arn:aws:iam::222222222222:root"


@pytest.fixture(scope="module")
def graph() -> Graph:
    return example_graph("model-registry")


def policy_of(graph: Graph, bucket: str) -> list[dict]:
    (policy,) = [
        p
        for p in graph.of_type("aws:s3/bucketPolicy:BucketPolicy")
        if any(graph.by_urn[u].inputs.get("bucket") == bucket for u in p.dependencies if u in graph.by_urn)
    ]
    return json.loads(policy.inputs["policy"])["Statement"]


def test_primary_grants_write_to_training_and_read_to_inference_only(graph: Graph) -> None:
    statements = {s["Sid"]: s for s in policy_of(graph, "acme-model-registry")}
    assert set(statements) == {
        "TrainingUpload",
        "TrainingReadModels",  # a fine-tuning run's base model (read only, models/ only)
        "TrainingListModels",
        "InferenceReadModels",
        "InferenceListModels",
        "DenyManifestOverwrite",
        "DenyModelOverwrite",  # every object under models/: conditional create only (promote.sh)
        "DenyInsecureTransport",
    }
    upload = statements["TrainingUpload"]
    # multipart uploads: PutObject covers Create/UploadPart/Complete; Abort is its own action (S3 UG "Multipart
    # upload API and permissions")
    assert upload["Principal"] == {"AWS": [TRAINING]}
    assert upload["Action"] == ["s3:PutObject", "s3:AbortMultipartUpload"]
    assert upload["Resource"] == ["arn:aws:s3:::acme-model-registry/uploads/*"]
    read = statements["InferenceReadModels"]
    assert read["Principal"] == {"AWS": [INFERENCE]} and read["Action"] == ["s3:GetObject"]
    assert read["Resource"] == ["arn:aws:s3:::acme-model-registry/models/*"]
    assert statements["InferenceListModels"]["Condition"] == {"StringLike": {"s3:prefix": ["models/*"]}}
    base = statements["TrainingReadModels"]
    assert base["Principal"] == {"AWS": [TRAINING]} and base["Action"] == ["s3:GetObject"]
    assert base["Resource"] == ["arn:aws:s3:::acme-model-registry/models/*"]
    assert statements["DenyInsecureTransport"]["Effect"] == "Deny"
    release = statements["DenyModelOverwrite"]
    assert release["Resource"] == ["arn:aws:s3:::acme-model-registry/models/*"]
    # S3 UG "Enforce conditional writes": multipart's Create/UploadPart exempt by s3:ObjectCreationOperation.
    assert release["Condition"] == {
        "Null": {"s3:if-none-match": "true"},
        "Bool": {"s3:ObjectCreationOperation": "true"},
    }
    assert release["Action"] == "s3:PutObject" and release["Principal"] == "*"


@pytest.mark.parametrize("region", ORG["registry"]["replica_regions"])
def test_replicas_are_read_only_for_inference(graph: Graph, region: str) -> None:
    statements = policy_of(graph, f"acme-model-registry-{region}")
    allows = [s for s in statements if s["Effect"] == "Allow"]
    assert {a for s in allows for a in s["Action"]} == {"s3:GetObject", "s3:ListBucket"}
    assert all(s["Principal"] == {"AWS": [INFERENCE]} for s in allows)
    # Write-once there too (replication writes with s3:ReplicateObject, which the Deny does not name).
    deny = next(s for s in statements if s["Sid"] == "DenyModelOverwrite")
    assert deny["Resource"] == [f"arn:aws:s3:::acme-model-registry-{region}/models/*"]


def test_one_replication_rule_per_inference_region(graph: Graph) -> None:
    config = graph.one("aws:s3/bucketReplicationConfig:BucketReplicationConfig").inputs
    rules = config["rules"]
    destinations = sorted(r["destination"]["bucket"] for r in rules)
    assert destinations == sorted(f"arn:aws:s3:::acme-model-registry-{r}" for r in ORG["registry"]["replica_regions"])
    for rule in rules:
        assert rule["filter"] == {"prefix": "models/"} and rule["status"] == "Enabled"
        assert rule["destination"]["encryptionConfiguration"]["replicaKmsKeyId"].startswith("arn:aws:kms:")
        # Replication Time Control with its metrics, both at 15 minutes: the only value S3 accepts (S3 API
        # ReplicationTimeValue, Metrics.EventThreshold), and the window a replica region's canary waits for.
        assert rule["destination"]["replicationTime"] == {"status": "Enabled", "time": {"minutes": 15}}
        assert rule["destination"]["metrics"] == {"status": "Enabled", "eventThreshold": {"minutes": 15}}
    assert len({r["priority"] for r in rules}) == len(rules)
    # Per replica region: alarms on failed replication and on latency past RTC's 15 minutes, per rule.
    alarms = {a.name: a.inputs for a in graph.of_type("aws:cloudwatch/metricAlarm:MetricAlarm")}
    for region in ORG["registry"]["replica_regions"]:
        failed = alarms[f"model-registry-{region}-operationsfailedreplication"]
        late = alarms[f"model-registry-{region}-replicationlatency"]
        for alarm in (failed, late):
            assert alarm["namespace"] == "AWS/S3"
            assert alarm["dimensions"] == {
                "SourceBucket": "acme-model-registry",
                "DestinationBucket": f"acme-model-registry-{region}",
                "RuleId": f"models-to-{region}",
            }
        assert failed["threshold"] == 0 and late["threshold"] == 900


def test_every_bucket_is_versioned_encrypted_and_private(graph: Graph) -> None:
    buckets = graph.of_type("aws:s3/bucket:Bucket")
    assert len(buckets) == 1 + len(ORG["registry"]["replica_regions"])
    for kind, check in [
        ("aws:s3/bucketVersioning:BucketVersioning", lambda i: i["versioningConfiguration"]["status"] == "Enabled"),
        (
            "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
            lambda i: i["rules"][0]["applyServerSideEncryptionByDefault"]["sseAlgorithm"] == "aws:kms",
        ),
        ("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", lambda i: i["restrictPublicBuckets"] is True),
    ]:
        configs = graph.of_type(kind)
        assert len(configs) == len(buckets) and all(check(c.inputs) for c in configs), kind


def test_replica_buckets_live_in_their_regions(graph: Graph) -> None:
    for bucket in graph.of_type("aws:s3/bucket:Bucket"):
        region = graph.provider_of(bucket).inputs["region"]  # type: ignore[union-attr]
        name = bucket.inputs["bucket"]
        assert name == "acme-model-registry" if region == "us-east-1" else name == f"acme-model-registry-{region}"


def test_key_policies_let_other_accounts_use_keys_only_through_s3(graph: Graph) -> None:
    for key in graph.of_type("aws:kms/key:Key"):
        for statement in json.loads(key.inputs["policy"])["Statement"]:
            if statement["Sid"] != "Owner":
                assert statement["Condition"]["StringEquals"]["kms:ViaService"].startswith("s3.")
                assert "kms:*" not in statement["Action"]


LOCK = "aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration"


def test_object_lock_on_every_bucket_governance_default_on_the_replicas_only(graph: Graph) -> None:
    """Replicas hold only models/ (the replication filter), so their default retention locks exactly the released
    versions; the primary's uploads/ stay unlocked and the promote script locks each version it releases. 90 days:
    the registry spec's model_lock_days default."""
    locks = {lock.inputs["bucket"]: lock for lock in graph.of_type(LOCK)}
    assert set(locks) == {"acme-model-registry"} | {
        f"acme-model-registry-{r}" for r in ORG["registry"]["replica_regions"]
    }
    for bucket, lock in locks.items():
        assert lock.inputs["objectLockEnabled"] == "Enabled"
        if bucket == "acme-model-registry":
            assert "rule" not in lock.inputs
        else:
            assert lock.inputs["rule"] == {"defaultRetention": {"mode": "GOVERNANCE", "days": 90}}
        # PutObjectLockConfiguration on an existing bucket needs versioning first (S3 UG, configuring Object Lock)
        deps = {graph.by_urn[u].type for u in lock.dependencies if u in graph.by_urn}
        assert "aws:s3/bucketVersioning:BucketVersioning" in deps
    # the buckets themselves are not recreated for it: no ObjectLockEnabledForBucket at CreateBucket
    assert all("objectLockEnabled" not in b.inputs for b in graph.of_type("aws:s3/bucket:Bucket"))


def test_replication_waits_for_object_lock_on_every_destination(graph: Graph) -> None:
    """Replication from a bucket with Object Lock needs it on the destination (S3 replication failure reason
    DstBucketObjectLockConfigMissing); the role reads each version's retention and legal hold."""
    config = graph.one("aws:s3/bucketReplicationConfig:BucketReplicationConfig")
    waited = {graph.by_urn[u].inputs.get("bucket") for u in config.dependencies if graph.by_urn[u].type == LOCK}
    assert waited == {f"acme-model-registry-{r}" for r in ORG["registry"]["replica_regions"]}
    policy = json.loads(
        graph.named("aws:iam/rolePolicy:RolePolicy", "model-registry-replication-access").inputs["policy"]
    )
    source = next(s for s in policy["Statement"] if s["Sid"] == "SourceObjects")
    assert {"s3:GetObjectRetention", "s3:GetObjectLegalHold"} <= set(source["Action"])


def test_the_promote_role_is_assumed_by_one_named_role_and_reads_uploads_writes_models(graph: Graph) -> None:
    role = next(r for r in graph.of_type("aws:iam/role:Role") if r.name == "model-registry-promote")
    (trust,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    # The organization's registry.promoters: one role of the training account, not the account (promoter-not-a-role).
    release = "arn:aws:iam::111111111111:role/ml-release"
    assert ORG["registry"]["promoters"] == [release]
    assert trust == {"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"AWS": [release]}}
    policy = json.loads(
        next(
            p for p in graph.of_type("aws:iam/rolePolicy:RolePolicy") if p.name == "model-registry-promote-access"
        ).inputs["policy"]
    )
    by_sid = {s["Sid"]: s for s in policy["Statement"]}
    assert by_sid["UploadsObjects"]["Action"] == ["s3:GetObject"]
    assert by_sid["UploadsObjects"]["Resource"] == ["arn:aws:s3:::acme-model-registry/uploads/*"]
    assert by_sid["ReleaseObjects"]["Resource"] == ["arn:aws:s3:::acme-model-registry/models/*"]
    actions = {a for s in policy["Statement"] for a in s["Action"]}
    # never delete, never lift a governance lock
    assert not {a for a in actions if "Delete" in a or "Bypass" in a}


def test_named_promoters_replace_the_training_accounts() -> None:
    from helpers import graph_for

    release = "arn:aws:iam::111111111111:role/release-managers"
    g = graph_for("model-registry", org={"registry.promoters": [release]})
    role = next(r for r in g.of_type("aws:iam/role:Role") if r.name == "model-registry-promote")
    assert json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]["Principal"] == {"AWS": [release]}
