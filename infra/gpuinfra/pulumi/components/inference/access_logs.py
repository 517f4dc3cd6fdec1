"""Load balancer access logs and WAF logs of a serving region.

Access logs go to a bucket of their own in the load balancer's region (ELB requires the same region, and SSE-S3:
"The only server-side encryption option that's supported is Amazon S3-managed keys (SSE-S3)", ELB user guide,
"Enable access logs"), hardened like every bucket, TLS-only, expiring after a year. Its policy grants exactly
what the ELB guide's step 2 grants: s3:PutObject under <prefix>/AWSLogs/<account>/ to the region's ELB
log-delivery principal (ALB) or to CloudWatch vended-log delivery with bucket-owner-full-control (NLB).

WAF logs go to a CloudWatch Logs group whose name starts `aws-waf-logs-` (AWS WAF DG, "CloudWatch Logs log
group": the name must start with it), kept a year; AWS WAF adds the group's resource policy for log delivery
itself when the logging configuration is created (same page, "Permissions")."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from gpuinfra.graph.log_delivery import VENDED_LOG_SERVICE, elb_log_principal
from gpuinfra.pulumi.components.buckets import LogBucket, log_bucket
from gpuinfra.pulumi.components.iam import Statement

PREFIX = "lb"
RETENTION_DAYS = 365


def delivery_statements(bucket: str, account_id: str, region: str, alb: bool) -> list[Statement]:
    """The ELB guide's grants for `bucket`: ALB logs as the region's ELB principal, NLB logs as vended logs."""
    objects = f"arn:aws:s3:::{bucket}/{PREFIX}/AWSLogs/{account_id}/*"
    if alb:
        return [
            {
                "Sid": "ElbAccessLogs",
                "Effect": "Allow",
                "Principal": elb_log_principal(region),
                "Action": "s3:PutObject",
                "Resource": objects,
            }
        ]
    source = {"aws:SourceAccount": account_id}
    return [
        {
            "Sid": "AWSLogDeliveryWrite",
            "Effect": "Allow",
            "Principal": {"Service": VENDED_LOG_SERVICE},
            "Action": "s3:PutObject",
            "Resource": objects,
            "Condition": {"StringEquals": {"s3:x-amz-acl": "bucket-owner-full-control", **source}},
        },
        {
            "Sid": "AWSLogDeliveryAclCheck",
            "Effect": "Allow",
            "Principal": {"Service": VENDED_LOG_SERVICE},
            "Action": "s3:GetBucketAcl",
            "Resource": f"arn:aws:s3:::{bucket}",
            "Condition": {"StringEquals": source},
        },
    ]


def access_log_bucket(
    name: str,
    bucket_name: str,
    account_id: str,
    region: str,
    alb: bool,
    opts: pulumi.ResourceOptions,
    retention_days: int = RETENTION_DAYS,
) -> tuple[aws.s3.Bucket, aws.s3.BucketPolicy]:
    """The bucket and its policy (the load balancer waits for the policy: ELB checks it when logging is enabled)."""
    grants = delivery_statements(bucket_name, account_id, region, alb)
    return log_bucket(
        LogBucket(f"{name}-access-logs", bucket_name, grants, f"{PREFIX}/", "expire-access-logs", retention_days), opts
    )


def waf_logging(
    name: str, acl: aws.wafv2.WebAcl, opts: pulumi.ResourceOptions, retention_days: int = RETENTION_DAYS
) -> aws.wafv2.WebAclLoggingConfiguration:
    """The web ACL's logs to a log group kept `retention_days` (ingestion priced on the group, usage based)."""
    group = aws.cloudwatch.LogGroup(
        f"{name}-waf-logs", name=f"aws-waf-logs-{name}", retention_in_days=retention_days, opts=opts
    )
    return aws.wafv2.WebAclLoggingConfiguration(
        f"{name}-waf-logging", resource_arn=acl.arn, log_destination_configs=[group.arn], opts=opts
    )


__all__ = ["PREFIX", "RETENTION_DAYS", "access_log_bucket", "delivery_statements", "waf_logging"]
