"""Security policies on the example training cluster's graph, mutated the way a hand-edited program would."""

from __future__ import annotations

import json

import pytest
from helpers import DELETE
from policy_helpers import PolicyCase, run_case

LT = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"
PAB = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
SG = "aws:ec2/securityGroup:SecurityGroup"
FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
ADMIN = json.dumps({"Version": "2012-10-17", "Statement": [
    {"Sid": "Everything", "Effect": "Allow", "Action": "*", "Resource": "*"}]})
SSH_FROM_ANYWHERE = {"protocol": "tcp", "fromPort": 22, "toPort": 22, "cidrBlocks": ["0.0.0.0/0"]}

CASES = [
    PolicyCase("security-imdsv2", "llm-train", fires=False),
    PolicyCase("security-imdsv2", "llm-train", edits=((LT, None, {"metadataOptions.httpTokens": "optional"}),),
               message="llm-train-compute-lt: metadataOptions.httpTokens is 'optional'"),
    PolicyCase("security-imdsv2", "llm-train", edits=((INSTANCE, None, {"metadataOptions": DELETE}),),
               message="llm-train-slurm-controller: metadataOptions.httpTokens is 'optional \\(not set\\)'"),
    PolicyCase("security-ebs-encrypted", "llm-train", fires=False),
    PolicyCase("security-ebs-encrypted", "llm-train",
               edits=((LT, None, {"blockDeviceMappings[0].ebs.encrypted": "false"}),),
               message="block device /dev/sda1 is not encrypted"),
    PolicyCase("security-ebs-encrypted", "llm-train", edits=((INSTANCE, None, {"rootBlockDevice": DELETE}),),
               message="no rootBlockDevice"),
    PolicyCase("security-s3-encrypted", "llm-train", fires=False),
    PolicyCase("security-s3-encrypted", "llm-train", edits=((SSE, None, {"rules": []}),),
               message="bucket llm-train-storage-checkpoints has no server-side encryption configuration"),
    PolicyCase("security-fsx-encrypted", "llm-train", fires=False),
    PolicyCase("security-fsx-encrypted", "llm-train", edits=((FSX, None, {"kmsKeyId": DELETE}),),
               message="PERSISTENT_2 without kmsKeyId"),
    PolicyCase("security-fsx-encrypted", "llm-train", fires=False, label="scratch",
               spec={"lustre.deployment_type": "SCRATCH_2", "lustre.throughput_mb_s_per_tib": None}),
    PolicyCase("security-s3-public-access-blocked", "llm-train", fires=False),
    PolicyCase("security-s3-public-access-blocked", "llm-train", edits=((PAB, None, {"blockPublicPolicy": False}),),
               message="public access block leaves blockPublicPolicy off"),
    PolicyCase("security-open-ingress", "llm-train", fires=False),
    PolicyCase("security-open-ingress", "llm-train", edits=((SG, None, {"ingress[0]": SSH_FROM_ANYWHERE}),),
               message="llm-train-net-efa: tcp 22 open to the internet on a group no load balancer uses"),
    PolicyCase("security-iam-no-admin", "llm-train", fires=False),
    PolicyCase("security-iam-no-admin", "llm-train", edits=((ROLE_POLICY, "llm-train-compute-access", {"policy": ADMIN}),),
               message="statement Everything allows every action on every resource"),
    PolicyCase("security-iam-no-admin", "llm-train",
               edits=((ATTACHMENT, "llm-train-slurm-ssm", {"policyArn": "arn:aws:iam::aws:policy/AdministratorAccess"}),),
               message="llm-train-slurm-ssm attaches AdministratorAccess"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_security_policies(case: PolicyCase) -> None:
    run_case(case)
