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
LISTENER = "aws:lb/listener:Listener"
SERVICE = "kubernetes:core/v1:Service"
ADMIN = json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Sid": "Everything", "Effect": "Allow", "Action": "*", "Resource": "*"}]}
)
ADMIN_ARN = "arn:aws:iam::aws:policy/AdministratorAccess"
SSH_FROM_ANYWHERE = {"protocol": "tcp", "fromPort": 22, "toPort": 22, "cidrBlocks": ["0.0.0.0/0"]}

EKS = "aws:eks/cluster:Cluster"

CASES = [
    PolicyCase("security-eks-endpoint", "llm-train-eks", fires=False),
    PolicyCase(
        "security-eks-endpoint",
        "llm-train-eks",
        edits=((EKS, None, {"vpcConfig.publicAccessCidrs": ["10.0.0.0/8", "0.0.0.0/0"]}),),
        message="llm-train-eks-eks-cluster: the Kubernetes API endpoint is public to 0.0.0.0/0;",
    ),
    PolicyCase(
        "security-eks-endpoint",
        "llm-train-eks",
        edits=((EKS, None, {"vpcConfig.publicAccessCidrs": DELETE}),),
        message="public to 0.0.0.0/0 \\(the default\\)",
    ),
    PolicyCase("security-imdsv2", "llm-train", fires=False),
    PolicyCase(
        "security-imdsv2",
        "llm-train",
        edits=((LT, None, {"metadataOptions.httpTokens": "optional"}),),
        message="llm-train-slurm-pcs-od-lt: metadataOptions.httpTokens is 'optional'",
    ),
    PolicyCase("security-ebs-encrypted", "llm-train", fires=False),
    PolicyCase(
        "security-ebs-encrypted",
        "llm-train",
        edits=((LT, None, {"blockDeviceMappings[0].ebs.encrypted": "false"}),),
        message="block device /dev/xvda is not encrypted",  # the pinned AMI's root device (engine mock: /dev/xvda)
    ),
    PolicyCase("security-s3-encrypted", "llm-train", fires=False),
    PolicyCase(
        "security-s3-encrypted",
        "llm-train",
        edits=((SSE, None, {"rules": []}),),
        message="bucket llm-train-storage-checkpoints has no server-side encryption configuration",
    ),
    PolicyCase("security-fsx-encrypted", "llm-train", fires=False),
    PolicyCase(
        "security-fsx-encrypted",
        "llm-train",
        edits=((FSX, None, {"kmsKeyId": DELETE}),),
        message="PERSISTENT_2 without kmsKeyId",
    ),
    PolicyCase(
        "security-fsx-encrypted",
        "llm-train",
        fires=False,
        label="scratch",
        spec={"lustre.deployment_type": "SCRATCH_2", "lustre.throughput_mb_s_per_tib": None},
    ),
    PolicyCase("security-s3-public-access-blocked", "llm-train", fires=False),
    PolicyCase(
        "security-s3-public-access-blocked",
        "llm-train",
        edits=((PAB, None, {"blockPublicPolicy": False}),),
        message="public access block leaves blockPublicPolicy off",
    ),
    PolicyCase("security-open-ingress", "llm-train", fires=False),
    PolicyCase(
        "security-open-ingress",
        "llm-train",
        edits=((SG, None, {"ingress[0]": SSH_FROM_ANYWHERE}),),
        message="llm-train-net-efa: tcp 22 open to the internet on a group no load balancer uses",
    ),
    PolicyCase("security-open-ingress", "chat-serve", fires=False, label="load balancers on 80 and 443"),
    PolicyCase(
        "security-open-ingress",
        "chat-serve",
        edits=((SG, "chat-serve-us-east-1-net-lb", {"ingress[0].fromPort": 8443, "ingress[0].toPort": 8443}),),
        message="chat-serve-us-east-1-net-lb: tcp 8443 open to the internet on a load balancer",
    ),
    PolicyCase("security-open-ingress", "chat-serve-k8s", fires=False),
    PolicyCase(
        "security-open-ingress",
        "chat-serve-k8s",
        # The example's fleet is internal; made internet-facing here, on a port other than 443.
        edits=(
            (
                SERVICE,
                None,
                {
                    "spec.ports[0].port": 8443,
                    "metadata.annotations": {
                        "service.beta.kubernetes.io/aws-load-balancer-type": "external",
                        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing",
                    },
                },
            ),
        ),
        message=r"internet-facing load balancer on port\(s\) 8443",
    ),
    PolicyCase("security-https-listeners", "chat-serve", fires=False),
    PolicyCase("security-https-listeners", "chat-serve-k8s", fires=False),
    PolicyCase(
        "security-https-listeners",
        "chat-serve",
        edits=(
            (
                LISTENER,
                "chat-serve-us-east-1-endpoint-http",
                {"defaultActions": [{"type": "forward", "targetGroupArn": "arn:tg"}]},
            ),
        ),
        message="HTTP listener on port 80 serves traffic in clear text",
    ),
    PolicyCase(
        "security-https-listeners",
        "chat-serve",
        edits=((LISTENER, "chat-serve-us-east-1-endpoint-https", {"certificateArn": DELETE}),),
        message="HTTPS listener on port 443 has no certificateArn",
    ),
    PolicyCase(
        "security-https-listeners",
        "chat-serve-k8s",
        edits=((SERVICE, None, {"metadata.annotations": {}}),),
        message="load balancer without service.beta.kubernetes.io/aws-load-balancer-ssl-cert",
    ),
    PolicyCase("security-s3-public-access-blocked", "model-registry", fires=False),
    PolicyCase("security-s3-encrypted", "model-registry", fires=False),
    PolicyCase("security-iam-no-admin", "llm-train", fires=False),
    PolicyCase(
        "security-iam-no-admin",
        "llm-train",
        edits=((ROLE_POLICY, "llm-train-slurm-access", {"policy": ADMIN}),),
        message="statement Everything allows every action on every resource",
    ),
    PolicyCase(
        "security-iam-no-admin",
        "llm-train",
        edits=((ATTACHMENT, "llm-train-slurm-ssm", {"policyArn": ADMIN_ARN}),),
        message="llm-train-slurm-ssm attaches AdministratorAccess",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_security_policies(case: PolicyCase) -> None:
    run_case(case)


ACCOUNT_PAB = "aws:s3/accountPublicAccessBlock:AccountPublicAccessBlock"
ALL_FLAGS = {
    "blockPublicAcls": True,
    "blockPublicPolicy": True,
    "ignorePublicAcls": True,
    "restrictPublicBuckets": True,
}


@pytest.mark.parametrize(
    ("account", "covered"),
    [
        ("999999999999", False),  # another account's block covers nothing here (review #34, harness 12b)
        ("111111111111", True),  # llm-train's own account (stacks/org.yaml ml-training)
        (None, True),  # no accountId: the provider's account, the stack's own
    ],
)
def test_an_account_block_covers_only_its_own_accounts_buckets(account: str | None, covered: bool) -> None:
    from gpuinfra.graph import Graph
    from gpuinfra.policy.pack import pack_config, police
    from helpers import example_graph
    from policy_helpers import facts_for, planted

    base = example_graph("llm-train")
    unblocked = Graph.of(base.stack, base.project, [r for r in base.resources if r.type != PAB])
    graph = planted(unblocked, ACCOUNT_PAB, "account-pab", {**ALL_FLAGS, **({"accountId": account} if account else {})})
    found = [
        v.message
        for v in police(graph, facts_for("llm-train"), pack_config()).violations
        if v.rule == "security-s3-public-access-blocked"
    ]
    assert (found == []) is covered, found
    if not covered:
        assert any("has no BucketPublicAccessBlock" in m for m in found)
