"""An AWS PCS cluster's scheduler and job completion logs, delivered to a CloudWatch Logs group of their own through
CloudWatch Logs vended-log delivery (a delivery source on the cluster per log type, one delivery destination on the
group, one delivery per source).

Upstream facts, each settling a choice here:
- Log types: AWS PCS User Guide, "Scheduler logs in AWS PCS" (`PCS_SCHEDULER_LOGS`: slurmctld, slurmdbd from Slurm
  24.11, slurmrestd from 25.05) and "Job completion logs in AWS PCS" (one JSON record per finished job: state, exit
  code, nodes and their instance ids; "at no additional cost" from PCS, the delivery is billed by CloudWatch). The
  log type name `PCS_JOBCOMP_LOGS` is botocore 1.44.18's logs model (PutDeliverySourceRequest.logType: "For PCS,
  the valid values are PCS_SCHEDULER_LOGS, PCS_JOBCOMP_LOGS, PCS_SCHEDULER_AUDIT_LOGS, and PCS_SCALING_LOGS").
  The audit (every slurmctld RPC) and scaling logs are left out: neither is on a User Guide page yet, and the
  audit log's volume is per RPC.
- The three resources and their arguments: CloudWatch Logs API Reference PutDeliverySource (name, resourceArn,
  logType), PutDeliveryDestination (name, deliveryDestinationConfiguration.destinationResourceArn) and
  CreateDelivery (deliverySourceName, deliveryDestinationArn); pulumi-aws 7.51 aws.cloudwatch.LogDeliverySource,
  LogDeliveryDestination and LogDelivery take exactly these.
- The group's resource policy: CloudWatch Logs User Guide, "Logs sent to CloudWatch Logs" (V2 permissions): the
  group must let `delivery.logs.amazonaws.com` logs:CreateLogStream and logs:PutLogEvents on its streams, with
  aws:SourceAccount the account and aws:SourceArn `arn:aws:logs:<region>:<account>:*`. AWS writes that policy
  itself when the deployer may logs:PutResourcePolicy; the stack writes it instead, scoped to this group
  (PutResourcePolicy's resourceArn, botocore 1.44.18: "Currently only supports LogGroup ARN"), so no account-wide
  policy (ten per region at most) is created out of band and the deploy role needs no PutResourcePolicy on `*`.
- No customer KMS key: no other log group the stacks create is encrypted with one (vpc_logs.py, access_logs.py
  keep the CloudWatch Logs default encryption), and a key would need a key policy naming the regional logs
  service principal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpuinfra.graph.log_delivery import VENDED_LOG_SERVICE

LOG_TYPES = {"scheduler": "PCS_SCHEDULER_LOGS", "jobcomp": "PCS_JOBCOMP_LOGS"}
"""Delivery source suffix -> PCS log type."""
GROUP_PREFIX = "/aws/vendedlogs/pcs/"
"""CloudWatch Logs User Guide, "Enable logging from AWS services": vended log groups named under /aws/vendedlogs/."""
DELIVERY_ACTIONS = ["logs:CreateLogStream", "logs:PutLogEvents"]
NAME_MAX = 60
"""PutDeliverySource / PutDeliveryDestination name: 1-60 characters of [\\w-]."""


@dataclass(frozen=True)
class PcsLogArgs:
    cluster: str
    region: str
    account_id: str
    retention_days: int


def group_name(cluster: str) -> str:
    return f"{GROUP_PREFIX}{cluster}"


def group_arn(region: str, account_id: str, cluster: str) -> str:
    """The group's ARN, known at preview (so the resource policy and the access flows can be read offline)."""
    return f"arn:aws:logs:{region}:{account_id}:log-group:{group_name(cluster)}"


def delivery_name(cluster: str, suffix: str) -> str:
    """A delivery source or destination name: unique in the account, at most NAME_MAX characters."""
    tail = f"-pcs-{suffix}"
    return f"{cluster[: NAME_MAX - len(tail)]}{tail}"


def resource_policy(region: str, account_id: str, cluster: str) -> str:
    """The group policy the CloudWatch Logs User Guide gives for vended-log delivery, on this one group."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "AWSLogDeliveryWrite",
                    "Effect": "Allow",
                    "Principal": {"Service": VENDED_LOG_SERVICE},
                    "Action": DELIVERY_ACTIONS,
                    "Resource": f"{group_arn(region, account_id, cluster)}:log-stream:*",
                    "Condition": {
                        "StringEquals": {"aws:SourceAccount": account_id},
                        "ArnLike": {"aws:SourceArn": f"arn:aws:logs:{region}:{account_id}:*"},
                    },
                }
            ],
        },
        sort_keys=True,
    )


@dataclass(frozen=True)
class PcsLogs:
    group: aws.cloudwatch.LogGroup
    policy: aws.cloudwatch.LogResourcePolicy
    destination: aws.cloudwatch.LogDeliveryDestination
    sources: dict[str, aws.cloudwatch.LogDeliverySource]
    deliveries: dict[str, aws.cloudwatch.LogDelivery]


def pcs_logs(name: str, args: PcsLogArgs, cluster_arn: pulumi.Input[str], o: pulumi.ResourceOptions) -> PcsLogs:
    """The group (kept `retention_days`), its delivery policy, the destination, and a source and a delivery per
    log type. Each delivery waits for the policy: CreateDelivery checks that the destination may be written."""
    group = aws.cloudwatch.LogGroup(
        f"{name}-logs", name=group_name(args.cluster), retention_in_days=args.retention_days, opts=o
    )
    policy = aws.cloudwatch.LogResourcePolicy(
        f"{name}-logs-delivery",
        resource_arn=group_arn(args.region, args.account_id, args.cluster),
        policy_document=resource_policy(args.region, args.account_id, args.cluster),
        opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[group])),
    )
    destination = aws.cloudwatch.LogDeliveryDestination(
        f"{name}-logs",
        name=delivery_name(args.cluster, "logs"),
        delivery_destination_configuration=aws.cloudwatch.LogDeliveryDestinationDeliveryDestinationConfigurationArgs(
            destination_resource_arn=group.arn
        ),
        opts=o,
    )
    sources, deliveries = {}, {}
    for suffix, log_type in LOG_TYPES.items():
        source = aws.cloudwatch.LogDeliverySource(
            f"{name}-{suffix}",
            name=delivery_name(args.cluster, suffix),
            log_type=log_type,
            resource_arn=cluster_arn,
            opts=o,
        )
        sources[suffix] = source
        deliveries[suffix] = aws.cloudwatch.LogDelivery(
            f"{name}-{suffix}",
            delivery_source_name=source.name,
            delivery_destination_arn=destination.arn,
            opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[policy])),
        )
    return PcsLogs(group, policy, destination, sources, deliveries)


__all__ = [
    "DELIVERY_ACTIONS",
    "GROUP_PREFIX",
    "LOG_TYPES",
    "PcsLogArgs",
    "PcsLogs",
    "delivery_name",
    "group_arn",
    "group_name",
    "pcs_logs",
    "resource_policy",
]
