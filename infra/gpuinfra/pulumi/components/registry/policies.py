"""The registry's resource policies as pure functions: who may write, who may read, and replication."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpuinfra.plan.lineage import MANIFEST_NAME
from gpuinfra.plan.registry import Grant
from gpuinfra.pulumi.components import iam
from gpuinfra.pulumi.components.iam import deny_insecure_transport

Statement = dict[str, Any]


def _root(account_id: str) -> str:
    return f"arn:aws:iam::{account_id}:root"


def read_statements(bucket: str, readers: Sequence[Grant], who: str = "Inference") -> list[Statement]:
    """Inference accounts (and training accounts, whose fine-tuning runs start from a released base): GetObject
    on the model prefix and ListBucket of it, nothing more. Their key use is already allowed (kms:Decrypt through
    S3: InferenceDecrypt, TrainingEncrypt)."""
    if not readers:
        return []
    principals = sorted(_root(g.account_id) for g in readers)
    prefix = readers[0].prefix
    return [
        {
            "Sid": f"{who}ReadModels",
            "Effect": "Allow",
            "Principal": {"AWS": principals},
            "Action": ["s3:GetObject"],
            "Resource": [f"arn:aws:s3:::{bucket}/{prefix}*"],
        },
        {
            "Sid": f"{who}ListModels",
            "Effect": "Allow",
            "Principal": {"AWS": principals},
            "Action": ["s3:ListBucket"],
            "Resource": [f"arn:aws:s3:::{bucket}"],
            "Condition": {"StringLike": {"s3:prefix": [f"{prefix}*"]}},
        },
    ]


def write_statements(bucket: str, writers: Sequence[Grant]) -> list[Statement]:
    """Training accounts: PutObject (which also authorizes CreateMultipartUpload, UploadPart and
    CompleteMultipartUpload) and AbortMultipartUpload on the upload prefix only, per S3 UG "Multipart upload API
    and permissions" (https://docs.aws.amazon.com/AmazonS3/latest/userguide/mpuoverview.html#mpuAndPermissions).
    BucketOwnerEnforced makes the registry account own every object, so no ACL condition is needed."""
    if not writers:
        return []
    principals = sorted(_root(g.account_id) for g in writers)
    return [
        {
            "Sid": "TrainingUpload",
            "Effect": "Allow",
            "Principal": {"AWS": principals},
            "Action": ["s3:PutObject", "s3:AbortMultipartUpload"],
            "Resource": [f"arn:aws:s3:::{bucket}/{writers[0].prefix}*"],
        }
    ]


def deny_manifest_overwrite(bucket: str, writers: Sequence[Grant]) -> list[Statement]:
    """A run's lineage manifest (plan/lineage.py) may only be created, never replaced: every PutObject of a
    manifest must be a conditional create, `If-None-Match: *`, which S3 refuses (412) when the key exists. The
    bucket policy enforces it with the s3:if-none-match key, as S3 UG "Enforce conditional writes on Amazon S3
    buckets" (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes-enforce.html) shows: Deny
    s3:PutObject when the key is Null. Object Lock would need the bucket recreated; this needs nothing."""
    if not writers:
        return []
    return [
        {
            "Sid": "DenyManifestOverwrite",
            "Effect": "Deny",
            "Principal": "*",
            "Action": "s3:PutObject",
            "Resource": [f"arn:aws:s3:::{bucket}/{writers[0].prefix}*/{MANIFEST_NAME}"],
            "Condition": {"Null": {"s3:if-none-match": "true"}},
        }
    ]


def deny_model_overwrite(bucket: str, model_prefix: str) -> Statement:
    """Every object under the model prefix (shards, adapters, manifests) may only be created, never replaced: a
    PutObject or CompleteMultipartUpload there must be a conditional create, `If-None-Match: *`, which S3 refuses
    (412) when the key exists. s3:ObjectCreationOperation exempts CreateMultipartUpload and UploadPart, which take
    no conditional header, as S3 UG "Enforce conditional writes on Amazon S3 buckets" requires for multipart
    uploads; CopyObject into the prefix is refused by the same statement (same guide). S3 replication writes
    replicas with s3:ReplicateObject, which this does not touch. Object Lock keeps every version; this keeps
    the key's current one, so a released shard's sha256 never changes under a fleet."""
    return {
        "Sid": "DenyModelOverwrite",
        "Effect": "Deny",
        "Principal": "*",
        "Action": "s3:PutObject",
        "Resource": [f"arn:aws:s3:::{bucket}/{model_prefix}*"],
        "Condition": {"Null": {"s3:if-none-match": "true"}, "Bool": {"s3:ObjectCreationOperation": "true"}},
    }


def bucket_policy(
    bucket: str,
    writers: Sequence[Grant],
    readers: Sequence[Grant],
    base_readers: Sequence[Grant] = (),
    model_prefix: str | None = None,
) -> str:
    """`model_prefix`: the released models' prefix, create-only in every bucket (primary and replicas)."""
    return iam.document(
        *write_statements(bucket, writers),
        *read_statements(bucket, readers),
        *read_statements(bucket, base_readers, "Training"),
        *deny_manifest_overwrite(bucket, writers),
        *([deny_model_overwrite(bucket, model_prefix)] if model_prefix else []),
        deny_insecure_transport(bucket),
    )


def key_policy(owner_account_id: str, region: str, writers: Sequence[Grant], readers: Sequence[Grant]) -> str:
    """The bucket key: the owner administers it; other accounts may only use it through S3 here.

    Training accounts get kms:Decrypt as well as GenerateDataKey/Encrypt: "To perform a multipart upload with
    encryption using an AWS KMS key, the requester must have permission to the kms:Decrypt and
    kms:GenerateDataKey actions on the key" (S3 UG, "Multipart upload API and permissions"), and across accounts
    the key policy must allow it (KMS DG, "Allowing users in other accounts to use a KMS key")."""
    statements: list[Statement] = [
        {
            "Sid": "Owner",
            "Effect": "Allow",
            "Principal": {"AWS": _root(owner_account_id)},
            "Action": "kms:*",
            "Resource": "*",
        },
    ]
    via_s3 = {"StringEquals": {"kms:ViaService": f"s3.{region}.amazonaws.com"}}
    if writers:
        statements.append(
            {
                "Sid": "TrainingEncrypt",
                "Effect": "Allow",
                "Principal": {"AWS": sorted(_root(g.account_id) for g in writers)},
                "Action": ["kms:GenerateDataKey", "kms:Encrypt", "kms:Decrypt"],
                "Resource": "*",
                "Condition": via_s3,
            }
        )
    if readers:
        statements.append(
            {
                "Sid": "InferenceDecrypt",
                "Effect": "Allow",
                "Principal": {"AWS": sorted(_root(g.account_id) for g in readers)},
                "Action": ["kms:Decrypt"],
                "Resource": "*",
                "Condition": via_s3,
            }
        )
    return iam.document(*statements)


def promote_trust(principals: Sequence[str]) -> str:
    """Who may assume the promote role: the organization's named promoters (role ARNs, or an account root, which
    leaves the choice to that account's IAM: the caller's own identity policy must allow sts:AssumeRole on the
    role too, IAM UG "Cross account resource access in IAM")."""
    return iam.document(
        {"Effect": "Allow", "Principal": {"AWS": sorted(principals)}, "Action": "sts:AssumeRole"},
    )


def promote_policy(bucket: str, upload_prefix: str, model_prefix: str, key_arn: str) -> str:
    """The promote role (templates/registry/promote.sh.j2): read an upload, write and lock its release.

    - Read uploads: GetObject and ListBucket on the upload prefix.
    - Write releases: PutObject (which also authorizes the multipart calls of a large copy, S3 UG "Multipart upload
      API and permissions") and ListBucket on the model prefix (the script refuses a version already released),
      GetObject there for HeadObject (is the version released already? which version did the copy write?),
      and s3:PutObjectRetention to lock each released version (S3 UG "Object Lock considerations": setting a
      retention period needs s3:PutObjectRetention; no s3:BypassGovernanceRetention, so the role cannot shorten
      or lift a lock it set).
    - The bucket key: Decrypt to read an upload, GenerateDataKey (and Decrypt, for multipart) to write a release
      (S3 UG "Using server-side encryption with AWS KMS keys"). Same account as the key, whose policy delegates to
      IAM (the Owner statement), so this identity policy is enough.
    Nothing else: no delete, no writing uploads, no other prefix."""
    return iam.document(
        *iam.s3_read("Uploads", bucket, upload_prefix),
        {
            "Sid": "ReleaseObjects",
            "Effect": "Allow",
            "Action": ["s3:PutObject", "s3:AbortMultipartUpload", "s3:PutObjectRetention", "s3:GetObject"],
            "Resource": [f"arn:aws:s3:::{bucket}/{model_prefix}*"],
        },
        {
            "Sid": "ReleaseList",
            "Effect": "Allow",
            "Action": ["s3:ListBucket"],
            "Resource": [f"arn:aws:s3:::{bucket}"],
            "Condition": {"StringLike": {"s3:prefix": [f"{model_prefix}*"]}},
        },
        {
            "Sid": "BucketKey",
            "Effect": "Allow",
            "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
            "Resource": [key_arn],
        },
    )


def replica_key_statement(bucket: str, key_arn: str, region: str) -> Statement:
    """The replication role on one replica key: kms:Encrypt to write the replica and, because the replica bucket
    uses an S3 Bucket Key, kms:Decrypt too ("the AWS KMS key policy for the KMS key used to encrypt the object
    replica must include kms:Decrypt permissions for the calling principal", S3 UG "Replicating objects created
    with server-side encryption", https://docs.aws.amazon.com/AmazonS3/latest/userguide/replication-config-for-kms-objects.html).
    Only through S3 in the replica's region and only for that bucket: with a Bucket Key the encryption context
    is the bucket ARN (S3 UG "Reducing the cost of SSE-KMS with Amazon S3 Bucket Keys")."""
    return {
        "Sid": f"ReplicaKey{''.join(part.capitalize() for part in region.split('-'))}",
        "Effect": "Allow",
        "Action": ["kms:Encrypt", "kms:Decrypt"],
        "Resource": [key_arn],
        "Condition": {
            "StringEquals": {"kms:ViaService": f"s3.{region}.amazonaws.com"},
            "StringLike": {"kms:EncryptionContext:aws:s3:arn": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]},
        },
    }


def replication_policy(source: str, source_key_arn: str, destinations: Sequence[tuple[str, str, str]]) -> str:
    """What S3 replication needs: read versions of the source, write replicas, the keys on both ends.
    `destinations`: (bucket, key ARN, region) of each replica."""
    return iam.document(
        {
            "Sid": "SourceBucket",
            "Effect": "Allow",
            "Action": ["s3:GetReplicationConfiguration", "s3:ListBucket"],
            "Resource": [f"arn:aws:s3:::{source}"],
        },
        {
            "Sid": "SourceObjects",
            "Effect": "Allow",
            # Retention and legal hold: the source has Object Lock, its locks replicate with the objects (S3 UG
            # "Object Lock considerations", using Object Lock with S3 Replication).
            "Action": [
                "s3:GetObjectVersionForReplication",
                "s3:GetObjectVersionAcl",
                "s3:GetObjectVersionTagging",
                "s3:GetObjectRetention",
                "s3:GetObjectLegalHold",
            ],
            "Resource": [f"arn:aws:s3:::{source}/*"],
        },
        {
            "Sid": "Replicas",
            "Effect": "Allow",
            "Action": ["s3:ReplicateObject", "s3:ReplicateDelete", "s3:ReplicateTags"],
            "Resource": sorted(f"arn:aws:s3:::{bucket}/*" for bucket, _, _ in destinations),
        },
        {"Sid": "SourceKey", "Effect": "Allow", "Action": ["kms:Decrypt"], "Resource": [source_key_arn]},
        *(replica_key_statement(bucket, key, region) for bucket, key, region in sorted(destinations)),
    )


__all__ = [
    "bucket_policy",
    "deny_insecure_transport",
    "deny_manifest_overwrite",
    "deny_model_overwrite",
    "key_policy",
    "promote_policy",
    "promote_trust",
    "read_statements",
    "replica_key_statement",
    "replication_policy",
    "write_statements",
]
