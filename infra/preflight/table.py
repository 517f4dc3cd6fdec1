"""The one table: a resource type token -> how preflight judges it.

pulumi-aws types map to the AWS API operation the provider calls and a translation of the inputs into
its request (validated against botocore's model); pulumi-aws-native types map to their CloudFormation
schema; Kubernetes objects to the OpenAPI schema. A new resource type is one entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from infra.graph import Resource

from .aws import autoscaling, ec2, elbv2, identity, routing, services, storage
from .translate import Call

TF = "terraform-provider-aws internal/service/"


@dataclass(frozen=True)
class AwsApi:
    """A pulumi-aws resource: the botocore service and operation its creation calls, the translation of its
    inputs into that request (and any follow-up requests the provider sends), and the provider source the
    translation follows."""

    service: str
    operation: str
    translate: Callable[[Resource], list[Call]]
    source: str


AWS: dict[str, AwsApi] = {
    # EC2: compute
    "aws:ec2/launchTemplate:LaunchTemplate": AwsApi(
        "ec2", "CreateLaunchTemplate", ec2.launch_template, TF + "ec2/ec2_launch_template.go"
    ),
    "aws:ec2/instance:Instance": AwsApi("ec2", "RunInstances", ec2.instance, TF + "ec2/ec2_instance.go"),
    "aws:ec2/placementGroup:PlacementGroup": AwsApi(
        "ec2", "CreatePlacementGroup", ec2.placement_group, TF + "ec2/ec2_placement_group.go"
    ),
    # EC2: network
    "aws:ec2/vpc:Vpc": AwsApi("ec2", "CreateVpc", ec2.vpc, TF + "ec2/vpc_.go"),
    "aws:ec2/subnet:Subnet": AwsApi("ec2", "CreateSubnet", ec2.subnet, TF + "ec2/vpc_subnet.go"),
    "aws:ec2/securityGroup:SecurityGroup": AwsApi(
        "ec2", "CreateSecurityGroup", ec2.security_group, TF + "ec2/vpc_security_group.go"
    ),
    "aws:ec2/internetGateway:InternetGateway": AwsApi(
        "ec2", "CreateInternetGateway", ec2.internet_gateway, TF + "ec2/vpc_internet_gateway.go"
    ),
    "aws:ec2/eip:Eip": AwsApi("ec2", "AllocateAddress", ec2.eip, TF + "ec2/ec2_eip.go"),
    "aws:ec2/natGateway:NatGateway": AwsApi("ec2", "CreateNatGateway", ec2.nat_gateway, TF + "ec2/vpc_nat_gateway.go"),
    "aws:ec2/routeTable:RouteTable": AwsApi("ec2", "CreateRouteTable", ec2.route_table, TF + "ec2/vpc_route_table.go"),
    "aws:ec2/route:Route": AwsApi("ec2", "CreateRoute", ec2.route, TF + "ec2/vpc_route.go"),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": AwsApi(
        "ec2", "AssociateRouteTable", ec2.route_table_association, TF + "ec2/vpc_route_table_association.go"
    ),
    "aws:ec2/vpcEndpoint:VpcEndpoint": AwsApi("ec2", "CreateVpcEndpoint", ec2.vpc_endpoint, TF + "ec2/vpc_endpoint.go"),
    # EC2 Auto Scaling
    "aws:autoscaling/group:Group": AwsApi(
        "autoscaling", "CreateAutoScalingGroup", autoscaling.group, TF + "autoscaling/group.go"
    ),
    "aws:autoscaling/policy:Policy": AwsApi(
        "autoscaling", "PutScalingPolicy", autoscaling.policy, TF + "autoscaling/policy.go"
    ),
    "aws:autoscaling/schedule:Schedule": AwsApi(
        "autoscaling", "PutScheduledUpdateGroupAction", autoscaling.schedule, TF + "autoscaling/schedule.go"
    ),
    "aws:autoscaling/lifecycleHook:LifecycleHook": AwsApi(
        "autoscaling", "PutLifecycleHook", autoscaling.lifecycle_hook, TF + "autoscaling/lifecycle_hook.go"
    ),
    "aws:cloudwatch/metricAlarm:MetricAlarm": AwsApi(
        "cloudwatch", "PutMetricAlarm", services.metric_alarm, TF + "cloudwatch/metric_alarm.go"
    ),
    # Load balancing and routing
    "aws:lb/loadBalancer:LoadBalancer": AwsApi(
        "elbv2", "CreateLoadBalancer", elbv2.load_balancer, TF + "elbv2/load_balancer.go"
    ),
    "aws:lb/targetGroup:TargetGroup": AwsApi(
        "elbv2", "CreateTargetGroup", elbv2.target_group, TF + "elbv2/target_group.go"
    ),
    "aws:lb/listener:Listener": AwsApi("elbv2", "CreateListener", elbv2.listener, TF + "elbv2/listener.go"),
    "aws:route53/record:Record": AwsApi(
        "route53", "ChangeResourceRecordSets", routing.record, TF + "route53/record.go"
    ),
    "aws:route53/healthCheck:HealthCheck": AwsApi(
        "route53", "CreateHealthCheck", routing.health_check, TF + "route53/health_check.go"
    ),
    "aws:globalaccelerator/accelerator:Accelerator": AwsApi(
        "globalaccelerator", "CreateAccelerator", routing.accelerator, TF + "globalaccelerator/accelerator.go"
    ),
    "aws:globalaccelerator/listener:Listener": AwsApi(
        "globalaccelerator", "CreateListener", routing.ga_listener, TF + "globalaccelerator/listener.go"
    ),
    "aws:globalaccelerator/endpointGroup:EndpointGroup": AwsApi(
        "globalaccelerator", "CreateEndpointGroup", routing.endpoint_group, TF + "globalaccelerator/endpoint_group.go"
    ),
    # Storage
    "aws:fsx/lustreFileSystem:LustreFileSystem": AwsApi(
        "fsx", "CreateFileSystem", storage.lustre_file_system, TF + "fsx/lustre_file_system.go"
    ),
    "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation": AwsApi(
        "fsx",
        "CreateDataRepositoryAssociation",
        storage.data_repository_association,
        TF + "fsx/data_repository_association.go",
    ),
    "aws:s3/bucket:Bucket": AwsApi("s3", "CreateBucket", storage.bucket, TF + "s3/bucket.go"),
    "aws:s3/bucketV2:BucketV2": AwsApi("s3", "CreateBucket", storage.bucket, TF + "s3/bucket.go"),
    "aws:s3/bucketVersioning:BucketVersioning": AwsApi(
        "s3", "PutBucketVersioning", storage.bucket_versioning, TF + "s3/bucket_versioning.go"
    ),
    "aws:s3/bucketVersioningV2:BucketVersioningV2": AwsApi(
        "s3", "PutBucketVersioning", storage.bucket_versioning, TF + "s3/bucket_versioning.go"
    ),
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": AwsApi(
        "s3", "PutBucketLifecycleConfiguration", storage.bucket_lifecycle, TF + "s3/bucket_lifecycle_configuration.go"
    ),
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": AwsApi(
        "s3", "PutPublicAccessBlock", storage.public_access_block, TF + "s3/bucket_public_access_block.go"
    ),
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": AwsApi(
        "s3", "PutBucketEncryption", storage.encryption, TF + "s3/bucket_server_side_encryption_configuration.go"
    ),
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls": AwsApi(
        "s3", "PutBucketOwnershipControls", storage.ownership_controls, TF + "s3/bucket_ownership_controls.go"
    ),
    "aws:s3/bucketPolicy:BucketPolicy": AwsApi(
        "s3", "PutBucketPolicy", storage.bucket_policy, TF + "s3/bucket_policy.go"
    ),
    "aws:s3/bucketReplicationConfig:BucketReplicationConfig": AwsApi(
        "s3", "PutBucketReplication", storage.replication, TF + "s3/bucket_replication_configuration.go"
    ),
    # Identity, keys, secrets
    "aws:iam/role:Role": AwsApi("iam", "CreateRole", identity.role, TF + "iam/role.go"),
    "aws:iam/rolePolicy:RolePolicy": AwsApi("iam", "PutRolePolicy", identity.role_policy, TF + "iam/role_policy.go"),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": AwsApi(
        "iam", "AttachRolePolicy", identity.role_policy_attachment, TF + "iam/role_policy_attachment.go"
    ),
    "aws:iam/instanceProfile:InstanceProfile": AwsApi(
        "iam", "CreateInstanceProfile", identity.instance_profile, TF + "iam/instance_profile.go"
    ),
    "aws:kms/key:Key": AwsApi("kms", "CreateKey", identity.key, TF + "kms/key.go"),
    "aws:kms/alias:Alias": AwsApi("kms", "CreateAlias", identity.alias, TF + "kms/alias.go"),
    "aws:secretsmanager/secret:Secret": AwsApi(
        "secretsmanager", "CreateSecret", identity.secret, TF + "secretsmanager/secret.go"
    ),
    "aws:secretsmanager/secretVersion:SecretVersion": AwsApi(
        "secretsmanager", "PutSecretValue", identity.secret_version, TF + "secretsmanager/secret_version.go"
    ),
    # EKS, quotas, WAF
    "aws:eks/cluster:Cluster": AwsApi("eks", "CreateCluster", services.cluster, TF + "eks/cluster.go"),
    "aws:eks/nodeGroup:NodeGroup": AwsApi("eks", "CreateNodegroup", services.node_group, TF + "eks/node_group.go"),
    "aws:servicequotas/serviceQuota:ServiceQuota": AwsApi(
        "service-quotas", "RequestServiceQuotaIncrease", services.service_quota, TF + "servicequotas/service_quota.go"
    ),
    "aws:wafv2/webAcl:WebAcl": AwsApi("wafv2", "CreateWebACL", services.web_acl, TF + "wafv2/web_acl.go"),
    "aws:wafv2/webAclAssociation:WebAclAssociation": AwsApi(
        "wafv2", "AssociateWebACL", services.web_acl_association, TF + "wafv2/web_acl_association.go"
    ),
}

CLOUDFORMATION_PREFIX = "aws-native:"
"""Every pulumi-aws-native type: its CloudFormation schema (`aws-native:pcs:Cluster` -> AWS::PCS::Cluster)."""
KUBERNETES_PREFIX = "kubernetes:"
"""Every Kubernetes object: the OpenAPI schema of its kind (Helm releases: see kubernetes.py)."""
NOT_JUDGED = frozenset(
    {"kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart", "kubernetes:yaml/v2:ConfigGroup"}
)
"""Kubernetes types that are not one object of the API: their content is judged by the conformance tests."""

__all__ = ["AWS", "CLOUDFORMATION_PREFIX", "KUBERNETES_PREFIX", "NOT_JUDGED", "AwsApi"]
