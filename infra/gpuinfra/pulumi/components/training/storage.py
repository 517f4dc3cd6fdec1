"""Training storage: a KMS key, FSx for Lustre linked to S3 (dataset in, checkpoints out), and the
checkpoint bucket (versioned, encrypted, private, superseded checkpoints expired after the retention).

Keys are chosen so every principal that uses one is in its policy:
- the cluster key (Lustre; EKS secrets) names the account alone (IAM policies then grant its roles). Node root
  volumes, PCS's and EKS's alike, use the account's AWS-managed EBS key: a customer key on volumes an Auto Scaling
  group launches (EKS managed node groups) must name the Auto Scaling service-linked role (EC2 Auto Scaling User
  Guide, "Required AWS KMS key policy for use with encrypted volumes"), and KMS refuses a policy naming a role that
  does not exist (MalformedPolicyDocumentException), which it does not in an account that never used Auto Scaling;
- the checkpoint bucket is encrypted with S3-managed keys (SSE-S3): a customer key would have to name FSx's
  per-file-system role AWSServiceRoleForFSxS3Access_<fs-id> for the export to work (FSx for Lustre User Guide,
  "Working with server-side encrypted Amazon S3 buckets"), which only exists after the file system does, and
  buys nothing here: the bucket is private to the account.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpuinfra.plan.checkpoint import SUPERSEDED_TAG
from gpuinfra.pulumi.components import iam
from gpuinfra.pulumi.components.base import child, stateful
from gpuinfra.pulumi.components.buckets import harden

TYPE = "gpuinfra:training:Storage"
DATASET_PATH = "/datasets"
CHECKPOINT_PATH = "/checkpoints"
CODE_PATH = "/code"
"""Where the training code's S3 prefix (lustre.code_path) is linked on Lustre."""
EXPORT_EVENTS = ["NEW", "CHANGED"]
"""Checkpoints flow to S3 on creation and change, never on deletion: pruning Lustre must not delete S3 copies
(FSx for Lustre User Guide, automatic export: DELETED exports deletions)."""
METADATA_MODE = "AUTOMATIC"
"""Metadata IOPS provisioned and scaled by FSx with the storage capacity (an EFA-enabled file system needs a metadata
configuration; AUTOMATIC keeps the IOPS in step with capacity without a figure of ours)."""


def key_policy(account_id: str) -> str:
    """The cluster key's policy: the account administers it, and IAM policies grant its roles. No service-linked
    role is named, so the first `pulumi up` in a fresh account does not depend on one existing."""
    admin: iam.Statement = {
        "Sid": "AccountAdministers",
        "Effect": "Allow",
        "Principal": {"AWS": f"arn:aws:iam::{account_id}:root"},
        "Action": "kms:*",
        "Resource": "*",
    }
    return iam.document(admin)


@dataclass(frozen=True)
class LustreArgs:
    deployment_type: str
    storage_capacity_gib: int
    """Already rounded to a valid FSx increment by the planner."""
    throughput_mb_s_per_tib: int | None
    import_path: str
    export_path: str
    code_path: str | None = None
    """S3 prefix linked at CODE_PATH with automatic import (None: no code link)."""
    efa: bool = False
    """EFA-enabled (PERSISTENT_2 only; the plan's lustre_efa)."""


@dataclass(frozen=True)
class StorageArgs:
    checkpoint_bucket: str
    checkpoint_prefix: str
    retention_days: int
    """Days a superseded (tagged) checkpoint object stays."""
    account_id: str
    lustre: LustreArgs | None
    subnet_id: pulumi.Input[str]
    security_group_id: pulumi.Input[str]
    kms_alias: str
    protect: bool = True
    """Pulumi protect and retainOnDelete on the key, the checkpoint bucket and the file system."""
    """An Auto Scaling group (EKS node groups) launches volumes encrypted with the cluster key."""


def split_s3(uri: str) -> tuple[str, str]:
    """s3://bucket/prefix/ -> (bucket, prefix/)."""
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    return bucket, prefix


def checkpoint_lifecycle(args: StorageArgs) -> list[aws.s3.BucketLifecycleConfigurationRuleArgs]:
    """The checkpoint bucket's lifecycle rules: tagged-superseded objects expire after the retention, overwritten
    versions after a week."""
    return [
        # Only objects the pruner tagged superseded expire: never the last kept checkpoints of a run,
        # never a milestone, whatever their age (S3 User Guide, lifecycle filters on prefix and tag).
        aws.s3.BucketLifecycleConfigurationRuleArgs(
            id="superseded-checkpoints",
            status="Enabled",
            # The tag alone: only the pruner sets it, and only under the checkpoint prefix.
            filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(
                tag=aws.s3.BucketLifecycleConfigurationRuleFilterTagArgs(key=SUPERSEDED_TAG, value="true")
            ),
            expiration=aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(days=args.retention_days),
            noncurrent_version_expiration=aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
                noncurrent_days=1
            ),
        ),
        # Overwritten objects (a checkpoint re-exported) keep their previous version for a week.
        aws.s3.BucketLifecycleConfigurationRuleArgs(
            id="checkpoint-versions",
            status="Enabled",
            filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=args.checkpoint_prefix),
            noncurrent_version_expiration=aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
                noncurrent_days=7
            ),
            abort_incomplete_multipart_upload=aws.s3.BucketLifecycleConfigurationRuleAbortIncompleteMultipartUploadArgs(
                days_after_initiation=2
            ),
        ),
    ]


class TrainingStorage(pulumi.ComponentResource):
    component_type = TYPE
    """The component's type token; its middle part is the workload the separation policy checks (a fine-tuning
    stack's storage is its own: components/finetune/stack.py)."""
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
        super().__init__(self.component_type, name, None, opts)
        o = child(self, provider)
        self.key = self._key(name, args, o)
        self.bucket = self._checkpoint_bucket(name, args, o)
        self.lustre = self._lustre(name, args, o) if args.lustre else None
        self.register_outputs(
            {
                "checkpoint_bucket": self.bucket.bucket,
                "kms_key_arn": self.key.arn,
                "lustre_dns_name": self.lustre.dns_name if self.lustre else None,
            }
        )

    @staticmethod
    def _key(name: str, args: StorageArgs, o: pulumi.ResourceOptions) -> aws.kms.Key:
        """The cluster key (rotated, protected with the data) and its alias."""
        key = aws.kms.Key(
            f"{name}-key",
            description=f"gpuinfra {name}: Lustre, checkpoints, EBS",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            policy=key_policy(args.account_id),
            opts=stateful(o, args.protect),
        )
        aws.kms.Alias(f"{name}-key-alias", name=args.kms_alias, target_key_id=key.key_id, opts=o)
        return key

    @staticmethod
    def _checkpoint_bucket(name: str, args: StorageArgs, o: pulumi.ResourceOptions) -> aws.s3.Bucket:
        """The checkpoint bucket: hardened (versioned, private, encrypted), TLS only, with the retention rules."""
        bucket = aws.s3.Bucket(
            f"{name}-checkpoints", bucket=args.checkpoint_bucket, force_destroy=False, opts=stateful(o, args.protect)
        )
        hardened = harden(f"{name}-checkpoints", bucket, None, o)
        aws.s3.BucketPolicy(
            f"{name}-checkpoints-policy",
            bucket=bucket.id,
            policy=iam.document(iam.deny_insecure_transport(args.checkpoint_bucket)),
            opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[hardened.public_access_block])),
        )
        aws.s3.BucketLifecycleConfiguration(
            f"{name}-checkpoints-retention",
            bucket=bucket.id,
            rules=checkpoint_lifecycle(args),
            opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[hardened.versioning])),
        )
        return bucket

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
            **efa_arguments(spec.efa),
            opts=stateful(o, args.protect),
        )
        imported(f"{name}-dataset", fs, spec.import_path, DATASET_PATH, o)
        aws.fsx.DataRepositoryAssociation(
            f"{name}-checkpoint-export",
            file_system_id=fs.id,
            data_repository_path=spec.export_path.rstrip("/"),
            file_system_path=CHECKPOINT_PATH,
            s3=aws.fsx.DataRepositoryAssociationS3Args(
                auto_export_policy=aws.fsx.DataRepositoryAssociationS3AutoExportPolicyArgs(events=EXPORT_EVENTS)
            ),
            opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[self.bucket])),
        )
        if spec.code_path:
            # Code delivery: every node sees what is put under the prefix, imported automatically (FSx for Lustre
            # User Guide, "Automatically import updates from your S3 bucket"; events NEW, CHANGED, DELETED).
            imported(f"{name}-code", fs, spec.code_path, CODE_PATH, o)
        return fs


def efa_arguments(efa: bool) -> dict[str, object]:
    """What makes the file system EFA-enabled (FSx for Lustre User Guide, "Working with EFA-enabled file systems":
    PERSISTENT_2 with a metadata configuration specified, an EFA-enabled security group): efa_enabled and an
    AUTOMATIC metadata configuration, which provisions and scales Metadata IOPS with the storage capacity (FSx API
    CreateFileSystemLustreMetadataConfiguration; pulumi-aws LustreFileSystem `efa_enabled`, `metadata_configuration`,
    CloudFormation AWS::FSx::FileSystem LustreConfiguration EfaEnabled, MetadataConfiguration.Mode). The security
    group is the network's, already EFA-enabled: all traffic in and out to itself (the nodes and the file system
    share it; EC2 User Guide, "Prepare an EFA-enabled security group"). Without EFA: neither argument, as before
    (adding a metadata configuration later is refused by FSx, so none is set where it would buy nothing)."""
    if not efa:
        return {}
    return {
        "efa_enabled": True,
        "metadata_configuration": aws.fsx.LustreFileSystemMetadataConfigurationArgs(mode=METADATA_MODE),
    }


def imported(
    name: str, fs: aws.fsx.LustreFileSystem, s3_path: str, fs_path: str, opts: pulumi.ResourceOptions
) -> aws.fsx.DataRepositoryAssociation:
    """An S3 prefix linked at `fs_path`, its listing imported at creation and every later change imported
    automatically (FSx for Lustre User Guide, "Automatically import updates from your S3 bucket")."""
    return aws.fsx.DataRepositoryAssociation(
        name,
        file_system_id=fs.id,
        data_repository_path=s3_path.rstrip("/"),
        file_system_path=fs_path,
        batch_import_meta_data_on_create=True,
        s3=aws.fsx.DataRepositoryAssociationS3Args(
            auto_import_policy=aws.fsx.DataRepositoryAssociationS3AutoImportPolicyArgs(
                events=["NEW", "CHANGED", "DELETED"]
            )
        ),
        opts=opts,
    )


__all__ = [
    "CHECKPOINT_PATH",
    "CODE_PATH",
    "DATASET_PATH",
    "EXPORT_EVENTS",
    "METADATA_MODE",
    "TYPE",
    "LustreArgs",
    "StorageArgs",
    "TrainingStorage",
    "checkpoint_lifecycle",
    "efa_arguments",
    "key_policy",
    "split_s3",
]
