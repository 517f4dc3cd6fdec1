"""Separation, every path: each way AWS offers between a training and an inference account or network, planted
into a real graph (the engine's, of an unchanged example) the way a hand-edited program would add it, and caught;
the unchanged examples pass.

Types and arguments are pulumi-aws's (schema at the pinned version): aws.ec2.Route, aws.ec2.RouteTable routes,
aws.ec2transitgateway.Route, aws.ram.ResourceShare / PrincipalAssociation, aws.ec2.VpcEndpoint (serviceName),
aws.ec2.VpcEndpointService (allowedPrincipals), aws.kms.Grant (granteePrincipal), aws.kms.KeyPolicy,
aws.secretsmanager.SecretPolicy, aws.sqs.QueuePolicy, aws.vpc.SecurityGroupIngressRule
(referencedSecurityGroupId "account/sg-id" for another account's group), aws.s3.BucketReplicationConfig.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from gpuinfra.graph import Graph
from gpuinfra.policy.pack import pack_config, police
from helpers import EXAMPLES, example_graph
from policy_helpers import edited, facts_for, planted, run_example

INFERENCE = "222222222222"
"""stacks/org.yaml: ml-inference's id; the stacks below are training's (111111111111) or the registry's."""

COVERS = ["separation-paths"]
"""Failing and passing cases below (test_registration reads this)."""


def found(stack: str, graph: Graph, policy: str, config: dict[str, Any] | None = None) -> list[str]:
    run = police(graph, facts_for(stack), pack_config(given=config or {}))
    return [v.message for v in run.violations if v.rule == policy and v.level.enforcement == "mandatory"]


def policy_doc(principal: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Sid": "Other", "Effect": "Allow", "Principal": {"AWS": principal}, "Action": "*"}],
        }
    )


TRAINING_PATHS = [
    (
        "aws:ec2/route:Route",
        {"routeTableId": "rtb-1", "destinationCidrBlock": "10.64.0.0/16", "vpcPeeringConnectionId": "pcx-0abc"},
        "separation-network",
        r"routes to VPC peering connection pcx-0abc, which this stack does not create",
    ),
    (
        "aws:ec2/route:Route",
        {"routeTableId": "rtb-1", "destinationCidrBlock": "10.64.0.0/16", "transitGatewayId": "tgw-0abc"},
        "separation-network",
        r"routes to transit gateway tgw-0abc",
    ),
    (
        "aws:ec2/routeTable:RouteTable",
        {"vpcId": "vpc-1", "routes": [{"cidrBlock": "10.64.0.0/16", "transitGatewayId": "tgw-0abc"}]},
        "separation-network",
        r"routes to transit gateway tgw-0abc",
    ),
    (
        "aws:ec2transitgateway/route:Route",
        {
            "destinationCidrBlock": "10.64.0.0/16",
            "transitGatewayAttachmentId": "tgw-attach-1",
            "transitGatewayRouteTableId": "tgw-rtb-1",
        },
        "separation-network",
        r"adds a transit gateway route",
    ),
    (
        "aws:ram/principalAssociation:PrincipalAssociation",
        {"principal": INFERENCE, "resourceShareArn": "arn:share"},
        "separation-paths",
        r"RAM shares with ml-inference \(222222222222\), an inference account",
    ),
    (
        "aws:ram/principalAssociation:PrincipalAssociation",
        {"principal": "arn:aws:organizations::111111111111:organization/o-abc", "resourceShareArn": "arn:share"},
        "separation-paths",
        r"an organization or OU",
    ),
    (
        "aws:ram/resourceShare:ResourceShare",
        {"name": "subnets", "allowExternalPrincipals": True},
        "separation-paths",
        r"allows external principals",
    ),
    (
        "aws:ec2/vpcEndpoint:VpcEndpoint",
        {
            "vpcId": "vpc-1",
            "vpcEndpointType": "Interface",
            "serviceName": "com.amazonaws.vpce.us-east-1.vpce-svc-0123456789abcdef0",
        },
        "separation-paths",
        r"connects to endpoint service com\.amazonaws\.vpce\.us-east-1\.vpce-svc-0123456789abcdef0",
    ),
    (
        "aws:ec2/vpcEndpointService:VpcEndpointService",
        {"acceptanceRequired": False, "allowedPrincipals": [f"arn:aws:iam::{INFERENCE}:root"]},
        "separation-paths",
        r"the endpoint service allows ml-inference \(222222222222\)",
    ),
    (
        "aws:kms/grant:Grant",
        {"keyId": "key-1", "granteePrincipal": f"arn:aws:iam::{INFERENCE}:role/reader", "operations": ["Decrypt"]},
        "separation-paths",
        r"KMS grants \(granteePrincipal\) the key to ml-inference \(222222222222\)",
    ),
    (
        "aws:kms/keyPolicy:KeyPolicy",
        {"keyId": "key-1", "policy": policy_doc(f"arn:aws:iam::{INFERENCE}:root")},
        "separation-cross-account-grants",
        r"grants ml-inference \(222222222222, inference\)",
    ),
    (
        "aws:secretsmanager/secretPolicy:SecretPolicy",
        {"secretArn": "arn:secret", "policy": policy_doc(f"arn:aws:iam::{INFERENCE}:root")},
        "separation-cross-account-grants",
        r"grants ml-inference \(222222222222, inference\)",
    ),
    (
        "aws:sqs/queuePolicy:QueuePolicy",
        {"queueUrl": "https://sqs/q", "policy": policy_doc(INFERENCE)},
        "separation-cross-account-grants",
        r"grants ml-inference \(222222222222, inference\)",
    ),
    (
        "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
        {
            "securityGroupId": "sg-1",
            "ipProtocol": "tcp",
            "fromPort": 443,
            "toPort": 443,
            "referencedSecurityGroupId": f"{INFERENCE}/sg-0abc",
        },
        "separation-network",
        r"refers to security group 222222222222/sg-0abc in account 222222222222",
    ),
]


@pytest.mark.parametrize(("kind", "inputs", "policy", "message"), TRAINING_PATHS, ids=lambda v: str(v)[:60])
def test_each_path_out_of_the_training_stack_is_caught(
    kind: str, inputs: dict[str, Any], policy: str, message: str
) -> None:
    graph = example_graph("llm-train")
    assert found("llm-train", graph, policy) == []
    messages = found("llm-train", planted(graph, kind, "planted", inputs), policy)
    assert any(re.search(message, m) for m in messages), messages


def test_a_route_to_a_peering_this_stack_creates_is_judged_by_the_peering() -> None:
    graph = planted(
        example_graph("llm-train"),
        "aws:ec2/vpcPeeringConnection:VpcPeeringConnection",
        "peer",
        {"vpcId": "vpc-1", "peerVpcId": "vpc-2", "peerOwnerId": "111111111111"},
    )
    graph = planted(
        graph,
        "aws:ec2/route:Route",
        "to-peer",
        {"routeTableId": "rtb-1", "destinationCidrBlock": "10.9.0.0/16", "vpcPeeringConnectionId": "pcx"},
        depends_on=("aws:ec2/vpcPeeringConnection:VpcPeeringConnection",),
    )
    assert found("llm-train", graph, "separation-network") == []


def test_an_allowed_transit_gateway_and_endpoint_service_pass() -> None:
    graph = planted(
        example_graph("llm-train"),
        "aws:ec2/route:Route",
        "tgw",
        {"routeTableId": "rtb-1", "destinationCidrBlock": "10.64.0.0/16", "transitGatewayId": "tgw-0abc"},
    )
    config = {"separation-network": {"allowed_transit_gateways": ["tgw-0abc"]}}
    assert found("llm-train", graph, "separation-network", config) == []
    service = "com.amazonaws.vpce.us-east-1.vpce-svc-0123456789abcdef0"
    graph = planted(
        example_graph("llm-train"),
        "aws:ec2/vpcEndpoint:VpcEndpoint",
        "svc",
        {"vpcId": "vpc-1", "vpcEndpointType": "Interface", "serviceName": service},
    )
    assert (
        found("llm-train", graph, "separation-paths", {"separation-paths": {"allowed_endpoint_services": [service]}})
        == []
    )


def test_replication_to_a_bucket_the_registry_does_not_create_is_caught() -> None:
    graph = example_graph("model-registry")
    assert found("model-registry", graph, "separation-paths") == []
    kind = "aws:s3/bucketReplicationConfig:BucketReplicationConfig"
    moved = edited(graph, [(kind, None, {"rules[0].destination.bucket": "arn:aws:s3:::someone-elses-bucket"})])
    (message,) = found("model-registry", moved, "separation-paths")
    assert "replicates to arn:aws:s3:::someone-elses-bucket, a bucket this stack does not create" in message


@pytest.mark.parametrize("stack", EXAMPLES)
def test_the_unchanged_examples_pass_every_separation_policy(stack: str) -> None:
    run = run_example(stack)
    assert [v for v in run.mandatory if v.rule.startswith("separation-")] == []
