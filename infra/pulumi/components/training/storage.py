"""Training storage: a KMS key, FSx for Lustre linked to S3 (dataset in, checkpoints out), and the
checkpoint bucket (versioned, encrypted, private, expired after the retention)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from infra.pulumi.components.base import child
from infra.pulumi.components.buckets import harden

TYPE = "gpuinfra:training:Storage"
DATASET_PATH = "/datasets"
CHECKPOINT_PATH = "/checkpoints"


@dataclass(frozen=True)
class LustreArgs:
    deployment_type: str
    storage_capacity_gib: int
    """Already rounded to a valid FSx increment by the planner."""
    throughput_mb_s_per_tib: int | None
    import_path: str
    export_path: str


@dataclass(frozen=True)
class StorageArgs:
    checkpoint_bucket: str
    checkpoint_prefix: str
    retention_days: int
    lustre: LustreArgs | None
    subnet_id: pulumi.Input[str]
    security_group_id: pulumi.Input[str]
    kms_alias: str


def split_s3(uri: str) -> tuple[str, str]:
    """s3://bucket/prefix/ -> (bucket, prefix/)."""
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    return bucket, prefix


class TrainingStorage(pulumi.ComponentResource):
    key: aws.kms.Key
    bucket: aws.s3.Bucket
    lustre: aws.fsx.LustreFileSystem | None

    def __init__(
        self,
        name: str,
        args: StorageArgs,
        provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        o = child(self, provider)
        self.key = aws.kms.Key(
            f"{name}-key",
            description=f"gpuinfra {name}: Lustre, checkpoints, EBS",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            opts=o,
        )
        aws.kms.Alias(f"{name}-key-alias", name=args.kms_alias, target_key_id=self.key.key_id, opts=o)
        self.bucket = aws.s3.Bucket(f"{name}-checkpoints", bucket=args.checkpoint_bucket, force_destroy=False, opts=o)
        hardened = harden(f"{name}-checkpoints", self.bucket, self.key.arn, o)
        aws.s3.BucketLifecycleConfiguration(
            f"{name}-checkpoints-retention",
            bucket=self.bucket.id,
            rules=[
                aws.s3.BucketLifecycleConfigurationRuleArgs(
                    id="checkpoint-retention",
                    status="Enabled",
                    filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=args.checkpoint_prefix),
                    expiration=aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(days=args.retention_days),
                    noncurrent_version_expiration=aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
                        noncurrent_days=1
                    ),
                    abort_incomplete_multipart_upload=aws.s3.BucketLifecycleConfigurationRuleAbortIncompleteMultipartUploadArgs(
                        days_after_initiation=2
                    ),
                )
            ],
            opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[hardened.versioning])),
        )
        self.lustre = self._lustre(name, args, o) if args.lustre else None
        self.register_outputs(
            {
                "checkpoint_bucket": self.bucket.bucket,
                "kms_key_arn": self.key.arn,
                "lustre_dns_name": self.lustre.dns_name if self.lustre else None,
            }
        )

    def _lustre(self, name: str, args: StorageArgs, o: pulumi.ResourceOptions) -> aws.fsx.LustreFileSystem:
        spec = args.lustre
        assert spec is not None
        persistent = spec.deployment_type.startswith("PERSISTENT")
        fs = aws.fsx.LustreFileSystem(
            f"{name}-lustre",
            deployment_type=spec.deployment_type,
            storage_capacity=spec.storage_capacity_gib,
            per_unit_storage_throughput=spec.throughput_mb_s_per_tib if persistent else None,
            storage_type="SSD",
            subnet_ids=args.subnet_id,
            security_group_ids=[args.security_group_id],
            file_system_type_version="2.15",
            data_compression_type="LZ4",
            # Customer-managed KMS applies to PERSISTENT; SCRATCH is encrypted with an FSx-managed key.
            kms_key_id=self.key.arn if persistent else None,
            opts=o,
        )
        aws.fsx.DataRepositoryAssociation(
            f"{name}-dataset",
            file_system_id=fs.id,
            data_repository_path=spec.import_path.rstrip("/"),
            file_system_path=DATASET_PATH,
            batch_import_meta_data_on_create=True,
            s3=aws.fsx.DataRepositoryAssociationS3Args(
                auto_import_policy=aws.fsx.DataRepositoryAssociationS3AutoImportPolicyArgs(
                    events=["NEW", "CHANGED", "DELETED"]
                )
            ),
            opts=o,
        )
        aws.fsx.DataRepositoryAssociation(
            f"{name}-checkpoint-export",
            file_system_id=fs.id,
            data_repository_path=spec.export_path.rstrip("/"),
            file_system_path=CHECKPOINT_PATH,
            s3=aws.fsx.DataRepositoryAssociationS3Args(
                auto_export_policy=aws.fsx.DataRepositoryAssociationS3AutoExportPolicyArgs(
                    events=["NEW", "CHANGED", "DELETED"]
                )
            ),
            opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[self.bucket])),
        )
        return fs


__all__ = ["CHECKPOINT_PATH", "DATASET_PATH", "TYPE", "LustreArgs", "StorageArgs", "TrainingStorage", "split_s3"]
