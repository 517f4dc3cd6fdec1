"""VPC flow logs for every VPC gpuinfra creates: all traffic (accepted and rejected), kept for a retention, to
an S3 bucket of their own (the default) or to a CloudWatch Logs group. Security Hub EC2.6 ("VPC flow logging
should be enabled in all VPCs") and CIS AWS Foundations 3.7 ask for them.

- **S3** follows the Amazon VPC user guide, "Publish flow logs to Amazon S3" and its "Amazon S3 bucket permissions
  for flow logs": the bucket policy lets `delivery.logs.amazonaws.com` PutObject under `AWSLogs/<account>/` with
  `bucket-owner-full-control` and GetBucketAcl/ListBucket on the bucket, both conditioned on `aws:SourceAccount`
  (the confused deputy); no IAM role (EC2 CreateFlowLogs: "DeliverLogsPermissionArn ... This parameter is
  required if the destination type is cloud-watch-logs, or if ... cross-account"). The bucket is hardened like
  every bucket (SSE-S3: the guide's default key needs no key policy), TLS-only, and its objects expire after the
  retention. Delivery is billed as CloudWatch vended logs to S3 per GB (priced on the flow log, usage based), the
  objects as S3 storage (on the bucket).
- **CloudWatch Logs** follows "Publish flow logs to CloudWatch Logs": the role trusts
  `vpc-flow-logs.amazonaws.com` (with `aws:SourceAccount`) and may logs:CreateLogGroup, CreateLogStream,
  PutLogEvents, DescribeLogGroups and DescribeLogStreams; the flow log names the group's ARN as `log_destination`
  and the role as `iam_role_arn`. Ingestion and storage are priced on the log group (usage based).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpuinfra.graph.log_delivery import VENDED_LOG_SERVICE
from gpuinfra.pulumi.components.buckets import LogBucket, log_bucket
from gpuinfra.pulumi.components.iam import Statement, document
from gpuinfra.spec import FinetuneSpec, InferenceSpec, TrainingSpec
from gpuinfra.spec.base import FlowLogDestination

RETENTION_DAYS = 365
"""A year: CloudWatch Logs accepts only its listed values (PutRetentionPolicy retentionInDays: 1, 3, 5, 7,
14, 30, 60, 90, 120, 150, 180, 365, ...); a year covers an incident found late."""
SERVICE = "vpc-flow-logs.amazonaws.com"
DELIVERY_ACTIONS = ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"]
"""On the one group and its streams."""
DESCRIBE_ACTIONS = ["logs:DescribeLogGroups"]
"""Lists groups: the Service Authorization Reference gives it no log-group resource, so "*"."""
BUCKET_NAME_MAX = 63
"""S3 bucket naming rules: 3 to 63 characters."""


@dataclass(frozen=True)
class FlowLogSettings:
    """Where a stack's flow logs go and how long they are kept (the spec's `flow_logs` and
    `log_retention_days`)."""

    destination: FlowLogDestination = "s3"
    retention_days: int = RETENTION_DAYS

    @classmethod
    def of(cls, spec: TrainingSpec | InferenceSpec | FinetuneSpec) -> FlowLogSettings:
        """The settings a workload spec gives."""
        return cls(spec.flow_logs, spec.log_retention_days)


DEFAULT_SETTINGS = FlowLogSettings()
"""To a bucket, kept a year."""


def trust(account_id: str | None) -> str:
    """The flow logs service may assume the role, only on behalf of `account_id` (when known)."""
    statement: dict[str, object] = {"Effect": "Allow", "Principal": {"Service": SERVICE}, "Action": "sts:AssumeRole"}
    if account_id:
        statement["Condition"] = {"StringEquals": {"aws:SourceAccount": account_id}}
    return document(statement)


def delivery(group_arn: str) -> str:
    """The guide's policy grants all five actions on "*"; here the writes are scoped to the one group."""
    return document(
        {
            "Sid": "FlowLogDelivery",
            "Effect": "Allow",
            "Action": DELIVERY_ACTIONS,
            "Resource": [group_arn, f"{group_arn}:*"],
        },
        {"Sid": "FlowLogDescribe", "Effect": "Allow", "Action": DESCRIBE_ACTIONS, "Resource": "*"},
    )


def bucket_name(name: str, account_id: str | None) -> str:
    """`<name>-<account>-vpc-flow-logs`, the account keeping it unique across accounts; a name too long for S3
    is cut and keeps a digest of the whole, so two long names never meet."""
    tail = f"-{account_id}-vpc-flow-logs" if account_id else "-vpc-flow-logs"
    whole = f"{name}{tail}"
    if len(whole) <= BUCKET_NAME_MAX:
        return whole
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: BUCKET_NAME_MAX - len(tail) - len(digest) - 1].rstrip('-')}-{digest}{tail}"


def s3_delivery(bucket: str, account_id: str | None) -> list[Statement]:
    """The VPC guide's bucket policy for flow logs (and every vended log delivered to S3)."""
    account = {"aws:SourceAccount": account_id} if account_id else {}
    write: Statement = {
        "Sid": "AWSLogDeliveryWrite",
        "Effect": "Allow",
        "Principal": {"Service": VENDED_LOG_SERVICE},
        "Action": "s3:PutObject",
        "Resource": f"arn:aws:s3:::{bucket}/AWSLogs/{account_id or '*'}/*",
        "Condition": {"StringEquals": {"s3:x-amz-acl": "bucket-owner-full-control", **account}},
    }
    check: Statement = {
        "Sid": "AWSLogDeliveryAclCheck",
        "Effect": "Allow",
        "Principal": {"Service": VENDED_LOG_SERVICE},
        "Action": ["s3:GetBucketAcl", "s3:ListBucket"],
        "Resource": f"arn:aws:s3:::{bucket}",
    }
    if account:
        check["Condition"] = {"StringEquals": account}
    return [write, check]


def to_bucket(
    name: str, network: aws.ec2.Vpc, account_id: str | None, retention_days: int, opts: pulumi.ResourceOptions
) -> aws.ec2.FlowLog:
    """A hardened bucket whose objects expire after `retention_days`, its delivery policy, and the flow log."""
    named = bucket_name(name, account_id)
    grants = s3_delivery(named, account_id)
    bucket, policy = log_bucket(
        LogBucket(f"{name}-flow-logs", named, grants, "AWSLogs/", "expire-flow-logs", retention_days), opts
    )
    return aws.ec2.FlowLog(
        f"{name}-flow-log",
        vpc_id=network.id,
        traffic_type="ALL",
        log_destination_type="s3",
        log_destination=bucket.arn,
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[policy])),
    )


def to_log_group(
    name: str, network: aws.ec2.Vpc, account_id: str | None, retention_days: int, opts: pulumi.ResourceOptions
) -> aws.ec2.FlowLog:
    """A log group kept `retention_days`, the delivery role, and the flow log."""
    group = aws.cloudwatch.LogGroup(f"{name}-flow-logs", retention_in_days=retention_days, opts=opts)
    role = aws.iam.Role(f"{name}-flow-logs", assume_role_policy=trust(account_id), opts=opts)
    aws.iam.RolePolicy(f"{name}-flow-logs", role=role.id, policy=group.arn.apply(delivery), opts=opts)
    return aws.ec2.FlowLog(
        f"{name}-flow-log",
        vpc_id=network.id,
        traffic_type="ALL",
        log_destination_type="cloud-watch-logs",
        log_destination=group.arn,
        iam_role_arn=role.arn,
        opts=opts,
    )


def flow_logs(
    name: str,
    network: aws.ec2.Vpc,
    account_id: str | None,
    opts: pulumi.ResourceOptions,
    settings: FlowLogSettings = DEFAULT_SETTINGS,
) -> aws.ec2.FlowLog:
    """The VPC's flow log of ALL traffic, where `settings` says."""
    build = to_bucket if settings.destination == "s3" else to_log_group
    return build(name, network, account_id, settings.retention_days, opts)


__all__ = [
    "DEFAULT_SETTINGS",
    "DELIVERY_ACTIONS",
    "DESCRIBE_ACTIONS",
    "RETENTION_DAYS",
    "FlowLogSettings",
    "bucket_name",
    "delivery",
    "flow_logs",
    "s3_delivery",
    "trust",
]
