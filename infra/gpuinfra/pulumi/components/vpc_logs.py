"""VPC flow logs for every VPC gpuinfra creates: all traffic (accepted and rejected) to a CloudWatch Logs
group with a retention, delivered under a role only the flow logs service of this account can assume.

Follows the Amazon VPC user guide, "Publish flow logs to CloudWatch Logs": the role trusts
`vpc-flow-logs.amazonaws.com` (with `aws:SourceAccount` against the confused deputy) and may
logs:CreateLogGroup, CreateLogStream, PutLogEvents, DescribeLogGroups and DescribeLogStreams; the flow log
names the group's ARN as `log_destination` and the role as `iam_role_arn` (EC2 API CreateFlowLogs:
LogDestinationType cloud-watch-logs, DeliverLogsPermissionArn). Security Hub EC2.6 ("VPC flow logging should
be enabled in all VPCs") and CIS AWS Foundations 3.7 ask for it. Ingestion and storage are priced on the log
group (usage based: unknown until a usage file states the GB).
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from gpuinfra.pulumi.components.iam import document

RETENTION_DAYS = 365
"""A year: CloudWatch Logs accepts only its listed values (PutRetentionPolicy retentionInDays: 1, 3, 5, 7,
14, 30, 60, 90, 120, 150, 180, 365, ...); a year covers an incident found late."""
SERVICE = "vpc-flow-logs.amazonaws.com"
DELIVERY_ACTIONS = ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"]
"""On the one group and its streams."""
DESCRIBE_ACTIONS = ["logs:DescribeLogGroups"]
"""Lists groups: the Service Authorization Reference gives it no log-group resource, so "*"."""


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


def flow_logs(
    name: str,
    network: aws.ec2.Vpc,
    account_id: str | None,
    opts: pulumi.ResourceOptions,
    retention_days: int = RETENTION_DAYS,
) -> aws.ec2.FlowLog:
    """A log group kept `retention_days`, the delivery role, and the VPC's flow log of ALL traffic."""
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


__all__ = ["DELIVERY_ACTIONS", "DESCRIBE_ACTIONS", "RETENTION_DAYS", "delivery", "flow_logs", "trust"]
