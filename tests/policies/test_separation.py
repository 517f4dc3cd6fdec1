"""Separation policies: workload tags, one workload per stack, accounts, networks and grants."""

from __future__ import annotations

import json
import re

import pytest
from gpuinfra.graph import Graph, Resource
from gpuinfra.policy.pack import pack_config, police
from helpers import DELETE, example_graph
from policy_helpers import PolicyCase, facts_for, run_case, with_resources

PROVIDER = "pulumi:providers:aws"
ASG = "aws:autoscaling/group:Group"
SG = "aws:ec2/securityGroup:SecurityGroup"
ROLE = "aws:iam/role:Role"
INFERENCE_TAGS = json.dumps({"tags": {"workload": "inference", "gpuinfra:stack": "llm-train"}})
TRAINING_TRUST = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "TrainingMayAssume",
                "Effect": "Allow",
                "Principal": {"AWS": "arn:aws:iam::111111111111:root"},
                "Action": "sts:AssumeRole",
            }
        ],
    }
)
CROSS_ACCOUNT_TRUST = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "InferenceMayAssume",
                "Effect": "Allow",
                "Principal": {"AWS": "arn:aws:iam::222222222222:root"},
                "Action": "sts:AssumeRole",
            }
        ],
    }
)
BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
INFERENCE_WRITES_MODELS = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "InferenceWrites",
                "Effect": "Allow",
                "Principal": {"AWS": ["arn:aws:iam::222222222222:root"]},
                "Action": ["s3:PutObject"],
                "Resource": ["arn:aws:s3:::acme-model-registry/models/*"],
            }
        ],
    }
)
TRAINING_READS_EVERYTHING = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "TrainingReads",
                "Effect": "Allow",
                "Principal": {"AWS": ["arn:aws:iam::111111111111:root"]},
                "Action": ["s3:GetObject"],
                "Resource": ["arn:aws:s3:::acme-model-registry/*"],
            }
        ],
    }
)
TO_INFERENCE_VPC = {"protocol": "tcp", "fromPort": 443, "toPort": 443, "cidrBlocks": ["10.64.0.0/16"]}

CASES = [
    PolicyCase("separation-workload-tag", "llm-train", fires=False),
    PolicyCase(
        "separation-workload-tag",
        "chat-serve",
        edits=((ASG, None, {"tags": []}),),
        message="chat-serve-us-east-1-replicas-base has no workload tag in inference stack chat-serve; Auto Scaling",
    ),
    PolicyCase(
        "separation-workload-tag",
        "llm-train",
        edits=((PROVIDER, None, {"defaultTags": INFERENCE_TAGS}),),
        message="llm-train-storage-key has workload=inference in training stack llm-train",
    ),
    PolicyCase("separation-workload-tag", "chat-serve-k8s", fires=False),
    PolicyCase(
        "separation-workload-tag",
        "chat-serve-k8s",
        edits=((DEPLOYMENT, None, {"metadata.labels": {"app.kubernetes.io/name": "chat-k8s"}}),),
        message="chat-k8s-us-east-1-server has no gpuinfra.io/workload label in inference stack chat-serve-k8s",
    ),
    PolicyCase("separation-one-workload", "llm-train", fires=False),
    PolicyCase(
        "separation-one-workload",
        "llm-train",
        edits=((PROVIDER, None, {"defaultTags": INFERENCE_TAGS}),),
        message="training stack llm-train also holds inference: aws-ml-training-us-east-1; move them",
    ),
    PolicyCase("separation-accounts", "llm-train", fires=False),
    PolicyCase(
        "separation-accounts",
        "llm-train",
        spec={"account": "ml-inference"},
        unchecked=True,
        message=r"deploys into ml-inference \(222222222222\), an inference account, but llm-train is a training "
        "stack: training and inference never share an account",
    ),
    PolicyCase("separation-accounts", "chat-serve", fires=False),
    PolicyCase(
        "separation-accounts",
        "chat-serve",
        spec={"account": "ml-training"},
        unchecked=True,
        label="inference pointed at the training account",
        message=r"provider aws-ml-training-us-east-1 deploys into ml-training \(111111111111\), a training "
        "account, but chat-serve is an inference stack",
    ),
    PolicyCase(
        "separation-accounts",
        "llm-train",
        edits=((PROVIDER, None, {"assumeRoles": DELETE}),),
        message="assumes no role",
    ),
    PolicyCase(
        "separation-accounts",
        "llm-train",
        edits=((PROVIDER, None, {"allowedAccountIds": '["444444444444"]'}),),
        message="deploys into account 444444444444, which the organization file does not list",
    ),
    PolicyCase("separation-network", "llm-train", fires=False),
    PolicyCase(
        "separation-network",
        "llm-train",
        edits=((SG, None, {"egress[1]": TO_INFERENCE_VPC}),),
        message="llm-train-net-efa egress: 10.64.0.0/16 is a private range outside this stack's VPCs",
    ),
    PolicyCase(
        "separation-network",
        "llm-train",
        fires=False,
        label="allowed_cidrs",
        edits=((SG, None, {"egress[1]": TO_INFERENCE_VPC}),),
        config={"separation-network": {"allowed_cidrs": ["10.64.0.0/16"]}},
    ),
    PolicyCase("separation-cross-account-grants", "llm-train", fires=False),
    PolicyCase("separation-cross-account-grants", "model-registry", fires=False, label="the registry's own grants"),
    PolicyCase(
        "separation-cross-account-grants",
        "model-registry",
        edits=((BUCKET_POLICY, "model-registry-primary-policy", {"policy": INFERENCE_WRITES_MODELS}),),
        message=r"statement InferenceWrites grants ml-inference \(222222222222, inference\) s3:PutObject",
    ),
    PolicyCase(
        "separation-cross-account-grants",
        "model-registry",
        edits=((BUCKET_POLICY, "model-registry-primary-policy", {"policy": TRAINING_READS_EVERYTHING}),),
        message=r"statement TrainingReads grants ml-training \(111111111111, training\) s3:GetObject",
    ),
    # The registry's promote role: training accounts may assume it (the example), an inference account may not,
    # nor may a training account assume another registry role (the replication role).
    PolicyCase(
        "separation-cross-account-grants",
        "model-registry",
        edits=((ROLE, "model-registry-promote", {"assumeRolePolicy": CROSS_ACCOUNT_TRUST}),),
        message=r"model-registry-promote: statement InferenceMayAssume grants ml-inference \(222222222222, inference\)",
    ),
    PolicyCase(
        "separation-cross-account-grants",
        "model-registry",
        edits=((ROLE, "model-registry-replication", {"assumeRolePolicy": TRAINING_TRUST}),),
        message=r"model-registry-replication: statement TrainingMayAssume grants ml-training \(111111111111",
    ),
    PolicyCase(
        "separation-cross-account-grants",
        "llm-train",
        edits=((ROLE, "llm-train-slurm-role", {"assumeRolePolicy": CROSS_ACCOUNT_TRUST}),),
        message=r"statement InferenceMayAssume grants ml-inference \(222222222222, inference\) sts:AssumeRole",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_separation_policies(case: PolicyCase) -> None:
    run_case(case)


def peering(graph: Graph, peer_account: str | None, accepter: bool = False) -> Resource:
    """A VPC peering in the training network, as a hand-written program might add it."""
    network = graph.one("gpuinfra:training:Network")
    vpc = graph.one("aws:ec2/vpc:Vpc")
    kind = (
        "vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter"
        if accepter
        else "vpcPeeringConnection:VpcPeeringConnection"
    )
    inputs: dict[str, object] = {"vpcId": "vpc-0a", "peerVpcId": "vpc-0123456789abcdef0"}
    if peer_account:
        inputs["peerOwnerId"] = peer_account
    return Resource(
        urn=f"{network.urn.rsplit('::', 1)[0]}$aws:ec2/{kind}::peer",
        type=f"aws:ec2/{kind}",
        name="peer",
        parent=network.urn,
        provider=vpc.provider,
        dependencies=(vpc.urn,),
        inputs=inputs,
    )


def tgw_attachment(graph: Graph, tgw: str) -> Resource:
    network = graph.one("gpuinfra:training:Network")
    vpc = graph.one("aws:ec2/vpc:Vpc")
    kind = "aws:ec2transitgateway/vpcAttachment:VpcAttachment"
    return Resource(
        urn=f"{network.urn.rsplit('::', 1)[0]}${kind}::tgw",
        type=kind,
        name="tgw",
        parent=network.urn,
        provider=vpc.provider,
        dependencies=(vpc.urn,),
        inputs={"transitGatewayId": tgw, "vpcId": "vpc"},
    )


def network_violations(graph: Graph, config: dict[str, object] | None = None) -> list[str]:
    run = police(graph, facts_for("llm-train"), pack_config(given=config or {}))
    return [v.message for v in run.violations if v.rule == "separation-network"]


@pytest.mark.parametrize(
    ("peer", "accepter", "expected"),
    [
        ("222222222222", False, r"peers with a VPC in 222222222222 \(an inference account\)"),
        ("999999999999", False, r"peers with a VPC in 999999999999 \(an account the organization file does not list\)"),
        (None, True, "accepts a peering requested from outside this stack"),
        (None, False, None),
    ],
)
def test_peering(peer: str | None, accepter: bool, expected: str | None) -> None:
    graph = with_resources(example_graph("llm-train"), peering(example_graph("llm-train"), peer, accepter))
    found = network_violations(graph)
    if expected is None:
        assert found == []
    else:
        assert len(found) == 1 and re.search(expected, found[0]), found


def test_transit_gateway_attachments_need_allowing() -> None:
    graph = with_resources(example_graph("llm-train"), tgw_attachment(example_graph("llm-train"), "tgw-0abc"))
    (found,) = network_violations(graph)
    assert "attaches to transit gateway tgw-0abc" in found
    assert network_violations(graph, {"separation-network": {"allowed_transit_gateways": ["tgw-0abc"]}}) == []


def test_the_onprem_example_passes_every_mandatory_policy() -> None:
    from policy_helpers import run_example

    assert run_example("llm-train-onprem").mandatory == []
