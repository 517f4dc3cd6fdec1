"""The instance identity every EC2-launched node gets: a role only EC2 can assume, one inline policy
(least privilege, per purpose), Session Manager access instead of SSH, and the instance profile."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpuinfra.pulumi.components import iam
from gpuinfra.pulumi.components.base import SSM_CORE


@dataclass(frozen=True)
class InstanceIdentity:
    role: aws.iam.Role
    profile: aws.iam.InstanceProfile


def instance_identity(
    name: str, description: str, policy: pulumi.Input[str], opts: pulumi.ResourceOptions, path: str | None = None
) -> InstanceIdentity:
    """`path` puts role and profile under an IAM path (AWS PCS requires /aws-pcs/ or an AWSPCS name prefix)."""
    role = aws.iam.Role(
        f"{name}-role",
        assume_role_policy=iam.assume_role("ec2.amazonaws.com"),
        description=description,
        path=path,
        opts=opts,
    )
    aws.iam.RolePolicy(f"{name}-access", role=role.id, policy=policy, opts=opts)
    aws.iam.RolePolicyAttachment(f"{name}-ssm", role=role.name, policy_arn=SSM_CORE, opts=opts)
    return InstanceIdentity(role, aws.iam.InstanceProfile(f"{name}-profile", role=role.name, path=path, opts=opts))


__all__ = ["InstanceIdentity", "instance_identity"]
