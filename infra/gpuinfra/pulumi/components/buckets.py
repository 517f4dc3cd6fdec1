"""The hardening every bucket gpuinfra creates gets: versioning, KMS encryption, public access blocked; and the
buckets that only receive AWS service logs (flow logs, load balancer access logs)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpuinfra.pulumi.components.iam import Statement, deny_insecure_transport, document


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


@dataclass(frozen=True)
class LogBucket:
    """A bucket AWS services deliver logs into: what it is named, who may write, what expires."""

    name: str
    """The logical name; its parts are `<name>-retention` and `<name>-policy`."""
    bucket_name: str
    delivery: list[Statement]
    """The delivering service's grants, as its guide gives them."""
    prefix: str
    """Objects under it expire."""
    rule_id: str
    retention_days: int


def log_bucket(spec: LogBucket, opts: pulumi.ResourceOptions) -> tuple[aws.s3.Bucket, aws.s3.BucketPolicy]:
    """Hardened with S3-managed keys (ELB access logs accept only SSE-S3; the VPC guide's default for flow logs
    needs no key policy), its objects under `prefix` expired after the retention (old versions a day later), and
    a policy of the delivery grants plus TLS-only. Deliveries wait for the policy: the services check it."""
    bucket = aws.s3.Bucket(spec.name, bucket=spec.bucket_name, force_destroy=False, opts=opts)
    hardened = harden(spec.name, bucket, None, opts)
    aws.s3.BucketLifecycleConfiguration(
        f"{spec.name}-retention",
        bucket=bucket.id,
        rules=[
            aws.s3.BucketLifecycleConfigurationRuleArgs(
                id=spec.rule_id,
                status="Enabled",
                filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=spec.prefix),
                expiration=aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(days=spec.retention_days),
                noncurrent_version_expiration=aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
                    noncurrent_days=1
                ),
            )
        ],
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[hardened.versioning])),
    )
    policy = aws.s3.BucketPolicy(
        f"{spec.name}-policy",
        bucket=bucket.id,
        policy=document(*spec.delivery, deny_insecure_transport(spec.bucket_name)),
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[hardened.public_access_block])),
    )
    return bucket, policy


__all__ = ["Hardened", "LogBucket", "harden", "log_bucket"]
