"""The hardening every bucket gpuinfra creates gets: versioning, KMS encryption, public access blocked."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws


@dataclass(frozen=True)
class Hardened:
    versioning: aws.s3.BucketVersioning
    """Lifecycle and replication configurations wait for it."""
    public_access_block: aws.s3.BucketPublicAccessBlock
    """A bucket policy waits for it: S3 rejects the two calls when they race."""


def harden(
    name: str, bucket: aws.s3.Bucket, key_arn: pulumi.Input[str] | None, opts: pulumi.ResourceOptions
) -> Hardened:
    """Version, encrypt with `key_arn` (bucket keys on; None: S3-managed keys, SSE-S3) and make private."""
    by_default = (
        aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(sse_algorithm="AES256")
        if key_arn is None
        else aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
            sse_algorithm="aws:kms", kms_master_key_id=key_arn
        )
    )
    versioning = aws.s3.BucketVersioning(
        f"{name}-versioning",
        bucket=bucket.id,
        versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(status="Enabled"),
        opts=opts,
    )
    aws.s3.BucketServerSideEncryptionConfiguration(
        f"{name}-sse",
        bucket=bucket.id,
        rules=[
            aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                apply_server_side_encryption_by_default=by_default, bucket_key_enabled=key_arn is not None or None
            )
        ],
        opts=opts,
    )
    block = aws.s3.BucketPublicAccessBlock(
        f"{name}-private",
        bucket=bucket.id,
        block_public_acls=True,
        block_public_policy=True,
        ignore_public_acls=True,
        restrict_public_buckets=True,
        opts=opts,
    )
    return Hardened(versioning, block)


__all__ = ["Hardened", "harden"]
