"""The dataprep stack's buckets and key: the tokenized output (read by the training accounts the spec names, by
bucket policy) and the scratch bucket whose intermediates (raw text with PII, signatures) expire. The raw
corpus is not the stack's: its workers only read it."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpuinfra.pulumi.components import iam
from gpuinfra.pulumi.components.base import child, stateful
from gpuinfra.pulumi.components.buckets import harden

TYPE = "gpuinfra:dataprep:Storage"


def split(uri: str) -> tuple[str, str]:
    """(bucket, key prefix ending in '/') of s3://bucket/prefix/."""
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    return bucket, (prefix.rstrip("/") + "/") if prefix else ""


@dataclass(frozen=True)
class StorageArgs:
    name: str
    account_id: str
    output_uri: str
    scratch_uri: str
    expire_days: int
    readers: list[str]
    """Account ids of the training accounts that read the output."""
    protect: bool = True


def key_policy(account_id: str) -> str:
    """The account administers and uses the key; no other account is named (the tokens are SSE-S3)."""
    return iam.document(
        {
            "Sid": "AccountAdministers",
            "Effect": "Allow",
            "Principal": {"AWS": f"arn:aws:iam::{account_id}:root"},
            "Action": "kms:*",
            "Resource": "*",
        }
    )


def output_policy(bucket: str, prefix: str, readers: list[str]) -> str:
    """TLS only; the training accounts read and list the tokenized prefix, nothing else."""
    statements = [iam.deny_insecure_transport(bucket)]
    if readers:
        roots = [f"arn:aws:iam::{r}:root" for r in readers]
        statements += [
            {
                "Sid": "TrainingReadsTokens",
                "Effect": "Allow",
                "Principal": {"AWS": roots},
                "Action": ["s3:GetObject"],
                "Resource": [f"arn:aws:s3:::{bucket}/{prefix}*"],
            },
            {
                "Sid": "TrainingListsTokens",
                "Effect": "Allow",
                "Principal": {"AWS": roots},
                "Action": ["s3:ListBucket"],
                "Resource": [f"arn:aws:s3:::{bucket}"],
                "Condition": {"StringLike": {"s3:prefix": [f"{prefix}*"]}},
            },
        ]
    return iam.document(*statements)


class DataprepStorage(pulumi.ComponentResource):
    key: aws.kms.Key
    output: aws.s3.Bucket
    scratch: aws.s3.Bucket

    def __init__(self, name: str, args: StorageArgs, region: str, provider: pulumi.ProviderResource) -> None:
        super().__init__(TYPE, name, None, None)
        o = child(self, provider)
        kept = stateful(o, args.protect)
        self.key = aws.kms.Key(
            f"{name}-key",
            description=f"{args.name}: tokenized corpus and its intermediates",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            policy=key_policy(args.account_id),
            opts=kept,
        )
        out_bucket, out_prefix = split(args.output_uri)
        scratch_bucket, scratch_prefix = split(args.scratch_uri)
        self.output = aws.s3.Bucket(f"{name}-output", bucket=out_bucket, force_destroy=False, opts=kept)
        # SSE-S3 on the tokens: a training account reads them with its own role's S3 grant, no key policy to share
        # (the raw text's intermediates, which may hold PII, are the ones under the stack's key).
        out = harden(f"{name}-output", self.output, None, o)
        aws.s3.BucketPolicy(
            f"{name}-output-policy",
            bucket=self.output.id,
            policy=output_policy(out_bucket, out_prefix, args.readers),
            opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[out.public_access_block])),
        )
        self.scratch = aws.s3.Bucket(f"{name}-scratch", bucket=scratch_bucket, force_destroy=False, opts=o)
        scratch = harden(f"{name}-scratch", self.scratch, self.key.arn, o)
        aws.s3.BucketPolicy(
            f"{name}-scratch-policy",
            bucket=self.scratch.id,
            policy=iam.document(iam.deny_insecure_transport(scratch_bucket)),
            opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[scratch.public_access_block])),
        )
        aws.s3.BucketLifecycleConfiguration(
            f"{name}-scratch-expiry",
            bucket=self.scratch.id,
            rules=[
                aws.s3.BucketLifecycleConfigurationRuleArgs(
                    id="intermediates-expire",
                    status="Enabled",
                    filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=scratch_prefix),
                    expiration=aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(days=args.expire_days),
                    noncurrent_version_expiration=aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
                        noncurrent_days=1
                    ),
                    abort_incomplete_multipart_upload=aws.s3.BucketLifecycleConfigurationRuleAbortIncompleteMultipartUploadArgs(
                        days_after_initiation=1
                    ),
                )
            ],
            opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[scratch.versioning])),
        )
        self.register_outputs({"output": self.output.bucket, "scratch": self.scratch.bucket})


__all__ = ["DataprepStorage", "StorageArgs", "key_policy", "output_policy", "split"]
