"""ModelRegistry: the weights bucket in the registry account, a replica in every inference region,
and the replication that carries released models (the model prefix) to them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpuinfra.plan import RegistryPlan
from gpuinfra.plan.registry import ReplicaBucket, promote_role
from gpuinfra.plan.rollout import REPLICATION_SLA_MINUTES
from gpuinfra.pulumi.components import iam
from gpuinfra.pulumi.components.alerts import alert_topic, notify
from gpuinfra.pulumi.components.base import child, stateful
from gpuinfra.pulumi.components.buckets import harden
from gpuinfra.pulumi.components.registry.policies import (
    bucket_policy,
    key_policy,
    promote_policy,
    promote_trust,
    replication_policy,
)
from gpuinfra.pulumi.components.registry.promote import promote_script
from gpuinfra.spec.org import Alerts

TYPE = "gpuinfra:registry:ModelRegistry"
BUCKET_TYPE = "gpuinfra:registry:Bucket"


@dataclass(frozen=True)
class RegistryArgs:
    plan: RegistryPlan
    account_id: str
    model_prefix: str
    noncurrent_version_expiration_days: int
    kms_deletion_window_days: int
    protect: bool = True
    """Pulumi protect and retainOnDelete on every model bucket and its key."""
    alerts: Alerts | None = None
    """The registry account's `alerts` (organization file): the replication alarms page through a topic they
    subscribe in the home region (None: the alarms have no actions; registry-alarms-page-no-one warns)."""


def object_lock(
    name: str,
    bucket: aws.s3.Bucket,
    default_days: int | None,
    o: pulumi.ResourceOptions,
    versioning: aws.s3.BucketVersioning,
) -> aws.s3.BucketObjectLockConfiguration:
    """S3 Object Lock on the bucket, with a governance-mode default retention of `default_days` (None: no default,
    each writer sets its own).

    Enabled by PutObjectLockConfiguration on the existing, versioned bucket: S3 UG "Configuring S3 Object Lock",
    "Enable Object Lock on an existing S3 bucket" (versioning first), and pulumi-aws BucketObjectLockConfiguration
    ("This resource can be used enable Object Lock for new and existing buckets"). Not Bucket.object_lock_enabled:
    that argument takes effect only at CreateBucket (ObjectLockEnabledForBucket), so setting it on these protected
    buckets would replace them. Once enabled it cannot be disabled, nor versioning suspended (same guide).

    The replicas hold only the model prefix (replication filters on it), so their default retention locks exactly
    the released versions, whatever retention a replica arrives with. The primary also holds the upload prefix,
    which stays unlocked: the promote script locks each version it releases (PutObjectRetention) before it writes
    the manifest that makes the release visible."""
    rule = (
        aws.s3.BucketObjectLockConfigurationRuleArgs(
            default_retention=aws.s3.BucketObjectLockConfigurationRuleDefaultRetentionArgs(
                mode="GOVERNANCE", days=default_days
            )
        )
        if default_days is not None
        else None
    )
    return aws.s3.BucketObjectLockConfiguration(
        f"{name}-object-lock",
        bucket=bucket.id,
        object_lock_enabled="Enabled",
        rule=rule,
        opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[versioning])),
    )


def expire_old_versions(
    name: str,
    bucket: aws.s3.Bucket,
    days: int,
    versioning: pulumi.Resource,
    o: pulumi.ResourceOptions,
) -> None:
    """Noncurrent versions expire after `days` and abandoned multipart uploads after a week: a superseded release
    (or a half-finished upload of one) stops costing storage."""
    aws.s3.BucketLifecycleConfiguration(
        f"{name}-lifecycle",
        bucket=bucket.id,
        rules=[
            aws.s3.BucketLifecycleConfigurationRuleArgs(
                id="expire-old-versions",
                status="Enabled",
                filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
                noncurrent_version_expiration=aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
                    noncurrent_days=days
                ),
                abort_incomplete_multipart_upload=aws.s3.BucketLifecycleConfigurationRuleAbortIncompleteMultipartUploadArgs(
                    days_after_initiation=7
                ),
            )
        ],
        opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[versioning])),
    )


class RegistryBucket(pulumi.ComponentResource):
    """One hardened, versioned, KMS-encrypted bucket with its resource policy."""

    bucket: aws.s3.Bucket
    key: aws.kms.Key
    versioning: aws.s3.BucketVersioning
    object_lock: aws.s3.BucketObjectLockConfiguration

    def __init__(
        self,
        name: str,
        bucket_name: str,
        region: str,
        args: RegistryArgs,
        writable: bool,
        provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(BUCKET_TYPE, name, None, opts)
        o = child(self, provider)
        plan = args.plan
        writers = plan.writers if writable else []
        self.key = aws.kms.Key(
            f"{name}-key",
            description=f"model weights {bucket_name}",
            enable_key_rotation=True,
            deletion_window_in_days=args.kms_deletion_window_days,
            policy=key_policy(args.account_id, region, writers, plan.readers),
            opts=stateful(o, args.protect),
        )
        self.bucket = aws.s3.Bucket(
            f"{name}-bucket", bucket=bucket_name, force_destroy=False, opts=stateful(o, args.protect)
        )
        hardened = harden(name, self.bucket, self.key.arn, o)
        self.versioning = hardened.versioning
        aws.s3.BucketOwnershipControls(
            f"{name}-ownership",
            bucket=self.bucket.id,
            rule=aws.s3.BucketOwnershipControlsRuleArgs(object_ownership="BucketOwnerEnforced"),
            opts=o,
        )
        aws.s3.BucketPolicy(
            f"{name}-policy",
            bucket=self.bucket.id,
            # training accounts read bases from the primary (their region); replicas serve inference only
            policy=bucket_policy(
                bucket_name,
                writers,
                plan.readers,
                plan.base_readers if writable else [],
                plan.model_prefix,
            ),
            opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[hardened.public_access_block])),
        )
        self.object_lock = object_lock(name, self.bucket, None if writable else plan.lock_days, o, self.versioning)
        expire_old_versions(name, self.bucket, args.noncurrent_version_expiration_days, self.versioning, o)
        self.register_outputs({"bucket": self.bucket.bucket, "key_arn": self.key.arn})


def promote(
    name: str, plan: RegistryPlan, primary: RegistryBucket, o: pulumi.ResourceOptions
) -> tuple[aws.iam.Role, pulumi.Output[str]]:
    """The promote role (assumed by the organization's promoters) and the script that uses it."""
    role = aws.iam.Role(
        promote_role(name),
        assume_role_policy=promote_trust(plan.promoters),
        description="promote a verified upload to a locked release of the model registry",
        max_session_duration=12 * 3600,  # a large model's download, verification and copy (IAM: at most 12 h)
        opts=o,
    )
    aws.iam.RolePolicy(
        f"{promote_role(name)}-access",
        role=role.id,
        policy=primary.key.arn.apply(
            lambda key: promote_policy(plan.bucket, plan.upload_prefix, plan.model_prefix, key)
        ),
        opts=o,
    )
    return role, role.arn.apply(lambda arn: promote_script(plan, arn))


def replication_rule(
    index: int, replica: ReplicaBucket, args: RegistryArgs, bucket: RegistryBucket
) -> aws.s3.BucketReplicationConfigRuleArgs:
    """One replica region's rule: released models (and their delete markers), re-encrypted under the replica's key,
    within Replication Time Control's 15 minutes."""
    return aws.s3.BucketReplicationConfigRuleArgs(
        id=f"models-to-{replica.region}",
        status="Enabled",
        priority=index,
        filter=aws.s3.BucketReplicationConfigRuleFilterArgs(prefix=args.model_prefix),
        delete_marker_replication=aws.s3.BucketReplicationConfigRuleDeleteMarkerReplicationArgs(status="Enabled"),
        source_selection_criteria=aws.s3.BucketReplicationConfigRuleSourceSelectionCriteriaArgs(
            sse_kms_encrypted_objects=aws.s3.BucketReplicationConfigRuleSourceSelectionCriteriaSseKmsEncryptedObjectsArgs(
                status="Enabled"
            )
        ),
        destination=aws.s3.BucketReplicationConfigRuleDestinationArgs(
            bucket=bucket.bucket.arn,
            storage_class="STANDARD",
            encryption_configuration=aws.s3.BucketReplicationConfigRuleDestinationEncryptionConfigurationArgs(
                replica_kms_key_id=bucket.key.arn
            ),
            # Replication Time Control: a release reaches every region within 15 minutes (99.99%
            # of objects, S3 UG), with its metrics (ReplicationLatency, OperationsPendingReplication,
            # OperationsFailedReplication per rule); RTC requires the metrics, both at 15 minutes.
            replication_time=aws.s3.BucketReplicationConfigRuleDestinationReplicationTimeArgs(
                status="Enabled",
                time=aws.s3.BucketReplicationConfigRuleDestinationReplicationTimeTimeArgs(
                    minutes=REPLICATION_SLA_MINUTES
                ),
            ),
            metrics=aws.s3.BucketReplicationConfigRuleDestinationMetricsArgs(
                status="Enabled",
                event_threshold=aws.s3.BucketReplicationConfigRuleDestinationMetricsEventThresholdArgs(
                    minutes=REPLICATION_SLA_MINUTES
                ),
            ),
        ),
    )


def replication(
    name: str,
    args: RegistryArgs,
    primary: RegistryBucket,
    replicas: Mapping[str, RegistryBucket],
    o: pulumi.ResourceOptions,
) -> None:
    """S3's replication role and rules from the primary to every replica region."""
    plan = args.plan
    role = aws.iam.Role(
        f"{name}-replication",
        assume_role_policy=iam.assume_role("s3.amazonaws.com"),
        description="S3 replication of released models to every inference region",
        opts=o,
    )
    destinations = [(r.bucket, replicas[r.region].key.arn, r.region) for r in plan.replicas]
    aws.iam.RolePolicy(
        f"{name}-replication-access",
        role=role.id,
        policy=pulumi.Output.all(primary.key.arn, *[key for _, key, _ in destinations]).apply(
            lambda keys: replication_policy(
                plan.bucket,
                keys[0],
                [(b, k, r) for (b, _, r), k in zip(destinations, keys[1:], strict=True)],
            )
        ),
        opts=o,
    )
    aws.s3.BucketReplicationConfig(
        f"{name}-replication-rules",
        bucket=primary.bucket.id,
        role=role.arn,
        rules=[replication_rule(i, r, args, replicas[r.region]) for i, r in enumerate(plan.replicas)],
        # A source with Object Lock replicates only to destinations with Object Lock (S3 replication
        # failure reason DstBucketObjectLockConfigMissing).
        opts=pulumi.ResourceOptions.merge(
            o,
            pulumi.ResourceOptions(
                depends_on=[
                    primary.versioning,
                    *(b.versioning for b in replicas.values()),
                    *(b.object_lock for b in replicas.values()),
                ]
            ),
        ),
    )


def replication_alarms(
    name: str, plan: RegistryPlan, topic_arn: pulumi.Input[str] | None, o: pulumi.ResourceOptions
) -> None:
    """Per replica region: an object that failed to replicate, or one past the 15 minutes RTC promises (S3
    publishes these RTC metrics per rule in the source bucket's region, 1-minute periods: S3 UG "Monitoring
    progress with replication metrics"). A release stuck there holds every canary of that region (the launch hook
    waits for its manifest), so this says why, to whoever `topic_arn` pages (None: nobody, actions off)."""
    for r in plan.replicas:
        dimensions = {
            "SourceBucket": plan.bucket,
            "DestinationBucket": r.bucket,
            "RuleId": f"models-to-{r.region}",
        }
        for metric, stat, threshold, what in (
            ("OperationsFailedReplication", "Maximum", 0, "objects failed to replicate"),
            ("ReplicationLatency", "Maximum", REPLICATION_SLA_MINUTES * 60, "replication slower than RTC's 15 minutes"),
        ):
            aws.cloudwatch.MetricAlarm(
                f"{name}-{r.region}-{metric.lower()}",
                alarm_description=f"model releases to {r.region}: {what}",
                namespace="AWS/S3",
                metric_name=metric,
                dimensions=dimensions,
                statistic=stat,
                period=60,
                evaluation_periods=5,
                datapoints_to_alarm=1,
                threshold=threshold,
                comparison_operator="GreaterThanThreshold",
                treat_missing_data="notBreaching",
                **notify(topic_arn),
                opts=o,
            )


class ModelRegistry(pulumi.ComponentResource):
    promote_role: aws.iam.Role
    promote_script: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: RegistryArgs,
        providers: Mapping[str, pulumi.ProviderResource],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        here = pulumi.ResourceOptions(parent=self)
        plan = args.plan
        home = providers[plan.region]
        primary = RegistryBucket(f"{name}-primary", plan.bucket, plan.region, args, True, home, here)
        replicas = {
            r.region: RegistryBucket(f"{name}-{r.region}", r.bucket, r.region, args, False, providers[r.region], here)
            for r in plan.replicas
        }
        self.promote_role, self.promote_script = promote(name, plan, primary, child(self, home))
        if replicas:
            o = child(self, home)
            replication(name, args, primary, replicas, o)
            topic = alert_topic(f"{name}-alerts", args.account_id, args.alerts, o).arn if args.alerts else None
            replication_alarms(name, plan, topic, o)
        self.register_outputs(
            {"bucket": primary.bucket.bucket, "replicas": sorted(replicas), "promote_role": self.promote_role.arn}
        )


__all__ = ["BUCKET_TYPE", "TYPE", "ModelRegistry", "RegistryArgs", "RegistryBucket"]
