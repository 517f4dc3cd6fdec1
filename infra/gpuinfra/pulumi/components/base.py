"""What every component shares: explicit providers, tags, and child options.

No resource ever uses the default provider: each account and region gets one `aws.Provider` that
assumes the account's role, pins `allowed_account_ids`, and applies default tags.
"""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_aws as aws
import pulumi_aws_native as aws_native

from gpuinfra.graph import tokens
from gpuinfra.spec import Account

STACK_TAG = "gpuinfra:stack"
SSM_CORE = "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"
"""AWS-managed policy for Session Manager access: no SSH keys, no open ports."""


def stack_tags(workload: str, stack: str, owner_key: str, owner: str, *extra: Mapping[str, str]) -> dict[str, str]:
    """The tags every resource of a stack carries: workload, stack, and the cluster/fleet name."""
    tags: dict[str, str] = {}
    for more in extra:
        tags.update(more)
    tags.update({tokens.WORKLOAD_TAG: workload, STACK_TAG: stack, owner_key: owner})
    return tags


def aws_provider(name: str, account: Account, region: str, tags: Mapping[str, str], session: str) -> aws.Provider:
    """One provider per account and region: assumes the account's role, pinned to its id."""
    return aws.Provider(
        name,
        region=region,
        allowed_account_ids=[account.id],
        assume_roles=[aws.ProviderAssumeRoleArgs(role_arn=account.role_arn, session_name=session)],
        default_tags=aws.ProviderDefaultTagsArgs(tags=dict(tags)),
    )


def aws_native_provider(
    name: str, account: Account, region: str, tags: Mapping[str, str], session: str
) -> aws_native.Provider:
    """The pulumi-aws-native (Cloud Control) provider for the same account and region, configured like
    `aws_provider`: the account's role, pinned to its id, the same default tags (applied to resources whose
    CloudFormation schema has tags)."""
    return aws_native.Provider(
        name,
        region=region,
        allowed_account_ids=[account.id],
        assume_role=aws_native.ProviderAssumeRoleArgs(role_arn=account.role_arn, session_name=session),
        default_tags=aws_native.ProviderDefaultTagsArgs(tags=dict(tags)),
    )


def group_tags(tags: dict[str, str], expected_capacity: int) -> list[aws.autoscaling.GroupTagArgs]:
    """Auto Scaling groups take no provider default tags: carry them (propagated to instances), plus
    the planner's expected instance count for cost estimates (not propagated)."""
    out = [aws.autoscaling.GroupTagArgs(key=k, value=v, propagate_at_launch=True) for k, v in sorted(tags.items())]
    out.append(
        aws.autoscaling.GroupTagArgs(
            key=tokens.EXPECTED_CAPACITY_TAG, value=str(expected_capacity), propagate_at_launch=False
        )
    )
    return out


def child(parent: pulumi.Resource, provider: pulumi.ProviderResource | None, **extra: object) -> pulumi.ResourceOptions:
    """Options for a child resource: parented, with the explicit provider (pulumi-eks style)."""
    return pulumi.ResourceOptions(parent=parent, provider=provider, **extra)  # type: ignore[arg-type]


def stateful(opts: pulumi.ResourceOptions, protect: bool) -> pulumi.ResourceOptions:
    """Options for a resource that holds data (file system, bucket, key): `protect` makes the engine refuse a
    deletion or replacement, `retain_on_delete` keeps it in the cloud if it is ever dropped from the program
    (Pulumi resource options; lifted only for scratch stacks)."""
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(protect=protect, retain_on_delete=protect))


__all__ = [
    "SSM_CORE",
    "STACK_TAG",
    "aws_native_provider",
    "aws_provider",
    "child",
    "group_tags",
    "stack_tags",
    "stateful",
]
