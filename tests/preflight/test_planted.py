"""One violation planted per covered resource type (and per documented rule) into a copy of a real example
graph: preflight must catch each, at the input path where it was planted.

Expected limits are the AWS API references' (cited per case), not read from the code under test.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from gpuinfra.catalog import load_catalog
from gpuinfra.clouds.aws.preflight import RULES
from gpuinfra.clouds.aws.preflight.table import AWS
from gpuinfra.graph import Graph
from gpuinfra.preflight import preflight
from gpuinfra.report.build.stack import preflight_out
from helpers import graph_for
from planting import Plant, added, planted, removing, setting

LT = "aws:ec2/launchTemplate:LaunchTemplate"
ASG = "aws:autoscaling/group:Group"
NAT_CIDR = {"cidrBlock": "0.0.0.0/0"}

# (stack, type, rule, input path, mutation) — the comment names the limit's source.
API_PLANTS = [
    # SNS API Reference, Tag.Key: 1 to 128 characters (CreateTopic's Tags)
    Plant("llm-train", "aws:sns/topic:Topic", "PF-AWS-API", "tags[0].Key", setting("tags", {"k" * 129: "v"})),
    # SetTopicAttributes.AttributeValue: a string (the policy document's JSON)
    Plant("llm-train", "aws:sns/topicPolicy:TopicPolicy", "PF-AWS-API", "policy", setting("policy", 5)),
    # Subscribe.Protocol: a string (email, https, ...)
    Plant("llm-train", "aws:sns/topicSubscription:TopicSubscription", "PF-AWS-API", "protocol", setting("protocol", 7)),
    # Route 53 API Reference, HostedZoneConfig.Comment: at most 256 characters (chat-serve-k8s's private zone)
    Plant("chat-serve-k8s", "aws:route53/zone:Zone", "PF-AWS-API", "comment", setting("comment", "x" * 257)),
    # EC2 API Reference, LaunchTemplateInstanceMetadataOptionsRequest.HttpTokens: optional | required
    Plant(
        "llm-train", LT, "PF-AWS-API", "metadataOptions.httpTokens", setting("metadataOptions.httpTokens", "sometimes")
    ),
    # RunInstances.InstanceType: an EC2 instance type name
    Plant(
        "llm-train",
        "aws:ec2/instance:Instance",
        "PF-AWS-API",
        "instanceType",
        add={"ami": "ami-0123456789abcdef0", "instanceType": "m7i.huge"},
        like=LT,
    ),
    # CreatePlacementGroup.Strategy: cluster | spread | partition
    Plant(
        "llm-train", "aws:ec2/placementGroup:PlacementGroup", "PF-AWS-API", "strategy", setting("strategy", "clustered")
    ),
    # CreateFlowLogs.TrafficType: ACCEPT | REJECT | ALL
    Plant("llm-train", "aws:ec2/flowLog:FlowLog", "PF-AWS-API", "trafficType", setting("trafficType", "EVERYTHING")),
    # CreateFlowLogs.LogDestinationType: cloud-watch-logs | s3 | kinesis-data-firehose
    Plant(
        "llm-train",
        "aws:ec2/flowLog:FlowLog",
        "PF-AWS-API",
        "logDestinationType",
        setting("logDestinationType", "bucket"),
    ),
    # PutRetentionPolicy.retentionInDays: an integer (chat-serve's WAF log group)
    Plant(
        "chat-serve",
        "aws:cloudwatch/logGroup:LogGroup",
        "PF-AWS-API",
        "retentionInDays",
        setting("retentionInDays", "a year"),
    ),
    # PutResourcePolicy.policyDocument: a string of 1 to 5120 characters (CloudWatch Logs API Reference)
    Plant(
        "llm-train",
        "aws:cloudwatch/logResourcePolicy:LogResourcePolicy",
        "PF-AWS-API",
        "policyDocument",
        setting("policyDocument", ""),
    ),
    # PutDeliverySource.name: 1 to 60 characters of [\w-] (CloudWatch Logs API Reference)
    Plant(
        "llm-train",
        "aws:cloudwatch/logDeliverySource:LogDeliverySource",
        "PF-AWS-API",
        "name",
        setting("name", "llm-train/pcs/scheduler"),
    ),
    # PutDeliveryDestination.outputFormat: json | plain | w3c | raw | parquet
    Plant(
        "llm-train",
        "aws:cloudwatch/logDeliveryDestination:LogDeliveryDestination",
        "PF-AWS-API",
        "outputFormat",
        setting("outputFormat", "yaml"),
    ),
    # CreateDelivery.fieldDelimiter: at most 5 characters
    Plant(
        "llm-train",
        "aws:cloudwatch/logDelivery:LogDelivery",
        "PF-AWS-API",
        "fieldDelimiter",
        setting("fieldDelimiter", " | ; | "),
    ),
    # PutParameter.Tier: Standard | Advanced | Intelligent-Tiering (Systems Manager API Reference)
    Plant("llm-train", "aws:ssm/parameter:Parameter", "PF-AWS-API", "tier", setting("tier", "Free")),
    # CreateVpc.InstanceTenancy: default | dedicated | host
    Plant("llm-train", "aws:ec2/vpc:Vpc", "PF-AWS-API", "instanceTenancy", setting("instanceTenancy", "shared")),
    # CreateSubnet.CidrBlock: a string
    Plant("llm-train", "aws:ec2/subnet:Subnet", "PF-AWS-API", "cidrBlock", setting("cidrBlock", 10)),
    # IpPermission.IpProtocol: a string ("tcp", "6", "-1")
    Plant(
        "llm-train",
        "aws:ec2/securityGroup:SecurityGroup",
        "PF-AWS-API",
        "ingress[0].protocol",
        setting("ingress[0].protocol", 6),
    ),
    # The default group's inline rules go through the same AuthorizeSecurityGroupIngress (IpProtocol: a string)
    Plant(
        "llm-train",
        "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup",
        "PF-AWS-API",
        "ingress[0].protocol",
        setting("ingress", [{"protocol": 6, "fromPort": 443, "toPort": 443, "self": True}]),
    ),
    # DescribeSecurityGroups Filter.Values: strings (the VPC id)
    Plant(
        "llm-train",
        "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup",
        "PF-AWS-API",
        "vpcId",
        setting("vpcId", 42),
    ),
    # AttachInternetGateway.VpcId: a string
    Plant("llm-train", "aws:ec2/internetGateway:InternetGateway", "PF-AWS-API", "vpcId", setting("vpcId", 12)),
    # AllocateAddress.Domain: vpc | standard
    Plant("llm-train", "aws:ec2/eip:Eip", "PF-AWS-API", "domain", setting("domain", "classic")),
    # CreateNatGateway.ConnectivityType: private | public
    Plant(
        "llm-train",
        "aws:ec2/natGateway:NatGateway",
        "PF-AWS-API",
        "connectivityType",
        setting("connectivityType", "open"),
    ),
    # CreateRoute.DestinationCidrBlock: a string
    Plant(
        "llm-train",
        "aws:ec2/routeTable:RouteTable",
        "PF-AWS-API",
        "routes[0].cidrBlock",
        setting("routes[0].cidrBlock", 0),
    ),
    # CreateRoute.NatGatewayId: a string
    Plant(
        "llm-train",
        "aws:ec2/route:Route",
        "PF-AWS-API",
        "natGatewayId",
        add={"routeTableId": "rtb-0123456789abcdef0", "destinationCidrBlock": "0.0.0.0/0", "natGatewayId": 7},
        like="aws:ec2/routeTable:RouteTable",
    ),
    # AssociateRouteTable: RouteTableId is required
    Plant(
        "llm-train",
        "aws:ec2/routeTableAssociation:RouteTableAssociation",
        "PF-AWS-API",
        "RouteTableId",
        removing("routeTableId"),
    ),
    # CreateVpcEndpoint.VpcEndpointType: Interface | Gateway | GatewayLoadBalancer | Resource | ServiceNetwork
    Plant(
        "llm-train",
        "aws:ec2/vpcEndpoint:VpcEndpoint",
        "PF-AWS-API",
        "vpcEndpointType",
        setting("vpcEndpointType", "Gateways"),
    ),
    # CreateAutoScalingGroup.MaxSize: an integer
    Plant("chat-serve", ASG, "PF-AWS-API", "maxSize", setting("maxSize", "16")),
    # MetricStatistic: Average | Minimum | Maximum | SampleCount | Sum
    Plant(
        "chat-serve",
        "aws:autoscaling/policy:Policy",
        "PF-AWS-API",
        "targetTrackingConfiguration.customizedMetricSpecification.statistic",
        setting("targetTrackingConfiguration.customizedMetricSpecification.statistic", "Mean"),
    ),
    # PutScheduledUpdateGroupAction.Recurrence: length 1 to 255
    Plant("chat-serve", "aws:autoscaling/schedule:Schedule", "PF-AWS-API", "recurrence", setting("recurrence", "")),
    # PutLifecycleHook.LifecycleTransition: a string (autoscaling:EC2_INSTANCE_LAUNCHING | ..._TERMINATING)
    Plant(
        "chat-serve",
        "aws:autoscaling/lifecycleHook:LifecycleHook",
        "PF-AWS-API",
        "lifecycleTransition",
        add={"autoscalingGroupName": "chat-serve-us-east-1-base", "name": "drain", "lifecycleTransition": 1},
        like=ASG,
        deps=("chat-serve-us-east-1-replicas-base",),
    ),
    # PutMetricAlarm.ComparisonOperator: GreaterThanOrEqualToThreshold | GreaterThanThreshold | LessThanThreshold | ...
    Plant(
        "chat-serve",
        "aws:cloudwatch/metricAlarm:MetricAlarm",
        "PF-AWS-API",
        "comparisonOperator",
        setting("comparisonOperator", "LessThan"),
    ),
    # CreateLoadBalancer.Type: application | network | gateway
    Plant(
        "chat-serve",
        "aws:lb/loadBalancer:LoadBalancer",
        "PF-AWS-API",
        "loadBalancerType",
        setting("loadBalancerType", "app"),
    ),
    # CreateTargetGroup.HealthCheckIntervalSeconds: 5 to 300
    Plant(
        "chat-serve",
        "aws:lb/targetGroup:TargetGroup",
        "PF-AWS-API",
        "healthCheck.interval",
        setting("healthCheck.interval", 500),
    ),
    # CreateListener.Port: 1 to 65535
    Plant("chat-serve", "aws:lb/listener:Listener", "PF-AWS-API", "port", setting("port", 70000)),
    # CreateRule.Priority: 1 to 50000
    Plant("chat-serve", "aws:lb/listenerRule:ListenerRule", "PF-AWS-API", "priority", setting("priority", 60000)),
    # ResourceRecordSet.Type: A | AAAA | CAA | CNAME | ... (RRType)
    Plant("chat-serve", "aws:route53/record:Record", "PF-AWS-API", "type", setting("type", "ALIAS")),
    # HealthCheckConfig.FailureThreshold: 1 to 10
    Plant(
        "chat-serve",
        "aws:route53/healthCheck:HealthCheck",
        "PF-AWS-API",
        "failureThreshold",
        setting("failureThreshold", 11),
    ),
    # FSx CreateFileSystemLustreConfiguration.DeploymentType: SCRATCH_1 | SCRATCH_2 | PERSISTENT_1 | PERSISTENT_2
    Plant(
        "llm-train",
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        "PF-AWS-API",
        "deploymentType",
        setting("deploymentType", "PERSISTENT_3"),
    ),
    # CreateDataRepositoryAssociation.FileSystemPath: at most 4096 characters
    Plant(
        "llm-train",
        "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation",
        "PF-AWS-API",
        "fileSystemPath",
        setting("fileSystemPath", "/" + "d" * 4096),
    ),
    # EFS CreateFileSystem.PerformanceMode: generalPurpose | maxIO
    Plant(
        "llm-train",
        "aws:efs/fileSystem:FileSystem",
        "PF-AWS-API",
        "performanceMode",
        setting("performanceMode", "fast"),
    ),
    # EFS PutBackupPolicy.BackupPolicy.Status: ENABLED | ENABLING | DISABLED | DISABLING (botocore EFS model, Status)
    Plant(
        "llm-train",
        "aws:efs/backupPolicy:BackupPolicy",
        "PF-AWS-API",
        "backupPolicy.status",
        setting("backupPolicy", {"status": "ON"}),
    ),
    # EFS CreateMountTarget.SecurityGroups: at most 100 (SecurityGroups, max 100 items)
    Plant(
        "llm-train",
        "aws:efs/mountTarget:MountTarget",
        "PF-AWS-API",
        "securityGroups",
        setting("securityGroups", [f"sg-{n:017x}" for n in range(101)]),
    ),
    # CreateBucket.ObjectLockEnabledForBucket: a boolean
    Plant("llm-train", "aws:s3/bucket:Bucket", "PF-AWS-API", "objectLockEnabled", setting("objectLockEnabled", "yes")),
    Plant(
        "llm-train",
        "aws:s3/bucketV2:BucketV2",
        "PF-AWS-API",
        "objectLockEnabled",
        add={"bucket": "acme-planted", "objectLockEnabled": "yes"},
        like="aws:s3/bucket:Bucket",
    ),
    # VersioningConfiguration.Status: Enabled | Suspended
    Plant(
        "llm-train",
        "aws:s3/bucketVersioning:BucketVersioning",
        "PF-AWS-API",
        "versioningConfiguration.status",
        setting("versioningConfiguration.status", "On"),
    ),
    Plant(
        "llm-train",
        "aws:s3/bucketVersioningV2:BucketVersioningV2",
        "PF-AWS-API",
        "versioningConfiguration.status",
        add={"bucket": "acme-planted", "versioningConfiguration": {"status": "On"}},
        like="aws:s3/bucket:Bucket",
    ),
    # LifecycleRule.Status: Enabled | Disabled
    Plant(
        "llm-train",
        "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
        "PF-AWS-API",
        "rules[0].status",
        setting("rules[0].status", "On"),
    ),
    # PublicAccessBlockConfiguration.BlockPublicAcls: a boolean
    Plant(
        "llm-train",
        "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
        "PF-AWS-API",
        "blockPublicAcls",
        setting("blockPublicAcls", "true"),
    ),
    # ServerSideEncryptionByDefault.SSEAlgorithm: AES256 | aws:fsx | aws:kms | aws:kms:dsse
    Plant(
        "llm-train",
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        "PF-AWS-API",
        "rules[0].applyServerSideEncryptionByDefault.sseAlgorithm",
        setting("rules[0].applyServerSideEncryptionByDefault.sseAlgorithm", "AES"),
    ),
    # OwnershipControlsRule.ObjectOwnership: BucketOwnerPreferred | ObjectWriter | BucketOwnerEnforced
    Plant(
        "model-registry",
        "aws:s3/bucketOwnershipControls:BucketOwnershipControls",
        "PF-AWS-API",
        "rule.objectOwnership",
        setting("rule.objectOwnership", "Owner"),
    ),
    # DefaultRetention.Mode: GOVERNANCE | COMPLIANCE; ObjectLockEnabled: Enabled (PutObjectLockConfiguration)
    Plant(
        "model-registry",
        "aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration",
        "PF-AWS-API",
        "rule.defaultRetention.mode",
        setting("rule.defaultRetention.mode", "WEEKLY"),
    ),
    Plant(
        "model-registry",
        "aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration",
        "PF-AWS-API",
        "objectLockEnabled",
        setting("objectLockEnabled", "Yes"),
        index=1,
    ),
    # PutBucketPolicy.Policy: a string (a JSON document)
    Plant("model-registry", "aws:s3/bucketPolicy:BucketPolicy", "PF-AWS-API", "policy", setting("policy", 5)),
    # ReplicationRule.Status: Enabled | Disabled
    Plant(
        "model-registry",
        "aws:s3/bucketReplicationConfig:BucketReplicationConfig",
        "PF-AWS-API",
        "rules[0].status",
        setting("rules[0].status", "On"),
    ),
    # IAM CreateRole.RoleName: 1 to 64 characters
    Plant("llm-train", "aws:iam/role:Role", "PF-AWS-API", "name", setting("name", "r" * 65)),
    # PutRolePolicy.PolicyName: pattern [\w+=,.@-]+
    Plant("llm-train", "aws:iam/rolePolicy:RolePolicy", "PF-AWS-API", "name", setting("name", "bad name!")),
    # AttachRolePolicy.PolicyArn: 20 to 2048 characters
    Plant(
        "llm-train",
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
        "PF-AWS-API",
        "policyArn",
        setting("policyArn", "arn:aws:iam::aws:x"),
    ),
    # CreateInstanceProfile.Path: begins and ends with '/'
    Plant("llm-train", "aws:iam/instanceProfile:InstanceProfile", "PF-AWS-API", "path", setting("path", "nodes")),
    # KMS ScheduleKeyDeletion.PendingWindowInDays: 1 to 365 in the model (7 to 30 in the API reference's text)
    Plant("llm-train", "aws:kms/key:Key", "PF-AWS-API", "deletionWindowInDays", setting("deletionWindowInDays", 400)),
    # CreateAlias.AliasName: pattern ^[a-zA-Z0-9:/_-]+$
    Plant("llm-train", "aws:kms/alias:Alias", "PF-AWS-API", "name", setting("name", "alias/bad name")),
    # Secrets Manager CreateSecret.Name: 1 to 512 characters
    Plant(
        "llm-train",
        "aws:secretsmanager/secret:Secret",
        "PF-AWS-API",
        "name",
        add={"name": "m" * 513, "recoveryWindowInDays": 7},
        like="aws:kms/key:Key",
    ),
    # PutSecretValue.SecretId: 1 to 2048 characters
    Plant(
        "llm-train",
        "aws:secretsmanager/secretVersion:SecretVersion",
        "PF-AWS-API",
        "secretId",
        add={"secretId": "s" * 2049, "secretString": "x"},
        like="aws:kms/key:Key",
    ),
    # EKS AccessConfigRequest.authenticationMode: API | API_AND_CONFIG_MAP | CONFIG_MAP
    Plant(
        "llm-train-eks",
        "aws:eks/cluster:Cluster",
        "PF-AWS-API",
        "accessConfig.authenticationMode",
        setting("accessConfig.authenticationMode", "IAM"),
    ),
    # CreateNodegroup.capacityType: ON_DEMAND | SPOT | CAPACITY_BLOCK
    Plant(
        "llm-train-eks",
        "aws:eks/nodeGroup:NodeGroup",
        "PF-AWS-API",
        "capacityType",
        setting("capacityType", "RESERVED"),
    ),
    # Service Quotas RequestServiceQuotaIncrease.DesiredValue: a number
    Plant(
        "llm-train",
        "aws:servicequotas/serviceQuota:ServiceQuota",
        "PF-AWS-API",
        "value",
        add={"serviceCode": "ec2", "quotaCode": "L-417A185B", "value": "lots"},
        like="aws:kms/key:Key",
    ),
    # WAFv2 CreateWebACL.Scope: CLOUDFRONT | REGIONAL
    Plant(
        "chat-serve",
        "aws:wafv2/webAcl:WebAcl",
        "PF-AWS-API",
        "scope",
        add={
            "scope": "GLOBAL",
            "defaultAction": {"allow": {}},
            "visibilityConfig": {"cloudwatchMetricsEnabled": True, "metricName": "waf", "sampledRequestsEnabled": True},
        },
        like="aws:lb/loadBalancer:LoadBalancer",
    ),
    # AssociateWebACL.ResourceArn: 20 to 2048 characters
    Plant(
        "chat-serve",
        "aws:wafv2/webAclAssociation:WebAclAssociation",
        "PF-AWS-API",
        "resourceArn",
        add={"resourceArn": "arn:aws:elb", "webAclArn": "arn:aws:wafv2:us-east-1:222222222222:regional/webacl/x/y"},
        like="aws:lb/loadBalancer:LoadBalancer",
    ),
]

GA = {"global_routing": {"type": "global_accelerator", "domain_name": "chat.acme.example"}}
GA_PLANTS = [
    # Global Accelerator CreateAccelerator.IpAddressType: IPV4 | DUAL_STACK
    ("aws:globalaccelerator/accelerator:Accelerator", "ipAddressType", setting("ipAddressType", "IPV4ONLY")),
    # CreateListener.Protocol: TCP | UDP
    ("aws:globalaccelerator/listener:Listener", "protocol", setting("protocol", "HTTP")),
    # CreateEndpointGroup.TrafficDialPercentage: 0 to 100
    (
        "aws:globalaccelerator/endpointGroup:EndpointGroup",
        "trafficDialPercentage",
        setting("trafficDialPercentage", 150),
    ),
]


def _caught(graph: Graph, rule: str, urn: str, path: str) -> list[str]:
    findings = preflight(graph, load_catalog())
    hits = [f for f in findings if f.rule == rule and f.urn == urn and f.path == path]
    assert hits, f"{rule} at {path} not caught; found: {[(f.rule, f.name, f.path) for f in findings if f.blocking]}"
    return [f.message for f in hits]


@pytest.mark.parametrize("plant", API_PLANTS, ids=lambda p: p.id)
def test_api_violation_is_caught(plant: Plant) -> None:
    graph, target = plant.graph()
    messages = _caught(graph, plant.rule, target.urn, plant.path)
    entry = AWS[plant.type_]
    assert any(entry.service in m for m in messages), messages


@pytest.mark.parametrize(("type_", "path", "mutate"), GA_PLANTS, ids=[p[0].rsplit(":", 1)[-1] for p in GA_PLANTS])
def test_global_accelerator_violation_is_caught(type_: str, path: str, mutate) -> None:  # type: ignore[no-untyped-def]
    graph, target = planted(graph_for("chat-serve", GA), type_, mutate)
    _caught(graph, "PF-AWS-API", target.urn, path)


def test_every_aws_table_entry_has_a_planted_violation() -> None:
    planted_types = {p.type_ for p in API_PLANTS} | {p[0] for p in GA_PLANTS}
    assert set(AWS) - planted_types == set()


def test_the_unchanged_resources_of_a_planted_graph_stay_clean() -> None:
    """Planting changes one resource only: the API findings are on it alone."""
    plant = API_PLANTS[0]
    graph, target = plant.graph()
    api = [f for f in preflight(graph, load_catalog()) if f.rule == "PF-AWS-API"]
    assert {f.urn for f in api} == {target.urn}


def test_an_input_the_table_cannot_map_is_reported_not_passed() -> None:
    graph, target = planted(plant_base("llm-train"), LT, setting("frobnicate", 1))
    _caught(graph, "PF-AWS-UNMAPPED", target.urn, "frobnicate")


def plant_base(stack: str) -> Graph:
    from helpers import example_graph

    return example_graph(stack)


def test_a_value_unknown_until_apply_is_not_judged() -> None:
    from gpuinfra.graph import UNKNOWN

    graph, target = planted(
        plant_base("llm-train"), "aws:ec2/placementGroup:PlacementGroup", setting("strategy", UNKNOWN)
    )
    assert not [f for f in preflight(graph, load_catalog()) if f.urn == target.urn]


def test_dependencies_dropped_from_a_policy_are_caught() -> None:
    base = plant_base("chat-serve")
    policy = base.of_type("aws:autoscaling/policy:Policy")[0]
    orphan = replace(policy, dependencies=())
    graph = Graph.of(base.stack, base.project, [orphan if r.urn == policy.urn else r for r in base.resources])
    _caught(graph, "PF-X-DEPENDS", policy.urn, "autoscalingGroupName")


def test_an_alias_record_whose_target_is_not_in_the_graph_is_caught() -> None:
    base = plant_base("chat-serve")
    record = base.of_type("aws:route53/record:Record")[0]
    health = [u for u in record.dependencies if ":route53/healthCheck:" in u]
    graph = Graph.of(
        base.stack,
        base.project,
        [replace(record, dependencies=tuple(health)) if r.urn == record.urn else r for r in base.resources],
    )
    _caught(graph, "PF-X-TARGET", record.urn, "aliases[0].name")


def test_the_added_resource_helper_keeps_the_graph_sorted() -> None:
    graph, resource = added(plant_base("llm-train"), "aws:ec2/route:Route", "r", {}, "aws:ec2/routeTable:RouteTable")
    assert [r.urn for r in graph.resources] == sorted(r.urn for r in graph.resources) and resource in graph.resources


def test_findings_are_json_ready() -> None:
    graph, _ = API_PLANTS[0].graph()
    for f in preflight(graph, load_catalog()):
        assert json.loads(preflight_out(f).model_dump_json())["rule"] == f.rule


def test_rule_ids_are_unique_and_sourced() -> None:
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))
    assert all(r.source and r.text for r in RULES)
