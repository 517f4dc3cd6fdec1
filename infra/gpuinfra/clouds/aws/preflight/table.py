"""The one table: a resource type token -> how preflight judges it.

pulumi-aws types map to the AWS API operation the provider calls and a translation of the inputs into
its request (validated against botocore's model); pulumi-aws-native types map to their CloudFormation
schema (Kubernetes objects: gpuinfra.preflight.kubernetes). A new AWS resource type is one entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpuinfra.clouds.aws.preflight.requests import autoscaling, ec2, elbv2, identity, routing, services, storage
from gpuinfra.clouds.aws.preflight.translate import Call
from gpuinfra.graph import Resource, tokens

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
    tokens.LAUNCH_TEMPLATE: AwsApi(
        "ec2", "CreateLaunchTemplate", ec2.launch_template, TF + "ec2/ec2_launch_template.go"
    ),
    tokens.INSTANCE: AwsApi("ec2", "RunInstances", ec2.instance, TF + "ec2/ec2_instance.go"),
    tokens.PLACEMENT_GROUP: AwsApi(
        "ec2", "CreatePlacementGroup", ec2.placement_group, TF + "ec2/ec2_placement_group.go"
    ),
    # EC2: network
    tokens.VPC: AwsApi("ec2", "CreateVpc", ec2.vpc, TF + "ec2/vpc_.go"),
    tokens.SUBNET: AwsApi("ec2", "CreateSubnet", ec2.subnet, TF + "ec2/vpc_subnet.go"),
    tokens.SECURITY_GROUP: AwsApi("ec2", "CreateSecurityGroup", ec2.security_group, TF + "ec2/vpc_security_group.go"),
    tokens.DEFAULT_SECURITY_GROUP: AwsApi(
        "ec2", "DescribeSecurityGroups", ec2.default_security_group, TF + "ec2/vpc_default_security_group.go"
    ),
    tokens.INTERNET_GATEWAY: AwsApi(
        "ec2", "CreateInternetGateway", ec2.internet_gateway, TF + "ec2/vpc_internet_gateway.go"
    ),
    tokens.EIP: AwsApi("ec2", "AllocateAddress", ec2.eip, TF + "ec2/ec2_eip.go"),
    tokens.NAT_GATEWAY: AwsApi("ec2", "CreateNatGateway", ec2.nat_gateway, TF + "ec2/vpc_nat_gateway.go"),
    tokens.ROUTE_TABLE: AwsApi("ec2", "CreateRouteTable", ec2.route_table, TF + "ec2/vpc_route_table.go"),
    tokens.ROUTE: AwsApi("ec2", "CreateRoute", ec2.route, TF + "ec2/vpc_route.go"),
    tokens.ROUTE_TABLE_ASSOCIATION: AwsApi(
        "ec2", "AssociateRouteTable", ec2.route_table_association, TF + "ec2/vpc_route_table_association.go"
    ),
    tokens.VPC_ENDPOINT: AwsApi("ec2", "CreateVpcEndpoint", ec2.vpc_endpoint, TF + "ec2/vpc_endpoint.go"),
    tokens.FLOW_LOG: AwsApi("ec2", "CreateFlowLogs", ec2.flow_log, TF + "ec2/vpc_flow_log.go"),
    # EC2 Auto Scaling
    tokens.ASG: AwsApi("autoscaling", "CreateAutoScalingGroup", autoscaling.group, TF + "autoscaling/group.go"),
    tokens.ASG_POLICY: AwsApi("autoscaling", "PutScalingPolicy", autoscaling.policy, TF + "autoscaling/policy.go"),
    tokens.ASG_SCHEDULE: AwsApi(
        "autoscaling", "PutScheduledUpdateGroupAction", autoscaling.schedule, TF + "autoscaling/schedule.go"
    ),
    tokens.ASG_LIFECYCLE_HOOK: AwsApi(
        "autoscaling", "PutLifecycleHook", autoscaling.lifecycle_hook, TF + "autoscaling/lifecycle_hook.go"
    ),
    tokens.METRIC_ALARM: AwsApi(
        "cloudwatch", "PutMetricAlarm", services.metric_alarm, TF + "cloudwatch/metric_alarm.go"
    ),
    tokens.SNS_TOPIC: AwsApi("sns", "CreateTopic", services.sns_topic, TF + "sns/topic.go"),
    tokens.SNS_TOPIC_POLICY: AwsApi("sns", "SetTopicAttributes", services.sns_topic_policy, TF + "sns/topic_policy.go"),
    tokens.SNS_SUBSCRIPTION: AwsApi("sns", "Subscribe", services.sns_subscription, TF + "sns/topic_subscription.go"),
    # Load balancing and routing
    tokens.LOAD_BALANCER: AwsApi("elbv2", "CreateLoadBalancer", elbv2.load_balancer, TF + "elbv2/load_balancer.go"),
    tokens.TARGET_GROUP: AwsApi("elbv2", "CreateTargetGroup", elbv2.target_group, TF + "elbv2/target_group.go"),
    tokens.LISTENER: AwsApi("elbv2", "CreateListener", elbv2.listener, TF + "elbv2/listener.go"),
    tokens.LISTENER_RULE: AwsApi("elbv2", "CreateRule", elbv2.listener_rule, TF + "elbv2/listener_rule.go"),
    tokens.ROUTE53_RECORD: AwsApi("route53", "ChangeResourceRecordSets", routing.record, TF + "route53/record.go"),
    tokens.ROUTE53_ZONE: AwsApi("route53", "CreateHostedZone", routing.hosted_zone, TF + "route53/zone.go"),
    tokens.ROUTE53_HEALTH_CHECK: AwsApi(
        "route53", "CreateHealthCheck", routing.health_check, TF + "route53/health_check.go"
    ),
    tokens.GA_ACCELERATOR: AwsApi(
        "globalaccelerator", "CreateAccelerator", routing.accelerator, TF + "globalaccelerator/accelerator.go"
    ),
    tokens.GA_LISTENER: AwsApi(
        "globalaccelerator", "CreateListener", routing.ga_listener, TF + "globalaccelerator/listener.go"
    ),
    tokens.GA_ENDPOINT_GROUP: AwsApi(
        "globalaccelerator", "CreateEndpointGroup", routing.endpoint_group, TF + "globalaccelerator/endpoint_group.go"
    ),
    # Storage
    tokens.LUSTRE: AwsApi("fsx", "CreateFileSystem", storage.lustre_file_system, TF + "fsx/lustre_file_system.go"),
    tokens.FSX_DRA: AwsApi(
        "fsx",
        "CreateDataRepositoryAssociation",
        storage.data_repository_association,
        TF + "fsx/data_repository_association.go",
    ),
    tokens.EFS_FILE_SYSTEM: AwsApi("efs", "CreateFileSystem", storage.efs_file_system, TF + "efs/file_system.go"),
    tokens.EFS_MOUNT_TARGET: AwsApi("efs", "CreateMountTarget", storage.efs_mount_target, TF + "efs/mount_target.go"),
    tokens.EFS_BACKUP_POLICY: AwsApi("efs", "PutBackupPolicy", storage.efs_backup_policy, TF + "efs/backup_policy.go"),
    tokens.BUCKET: AwsApi("s3", "CreateBucket", storage.bucket, TF + "s3/bucket.go"),
    tokens.BUCKET_V2: AwsApi("s3", "CreateBucket", storage.bucket, TF + "s3/bucket.go"),
    tokens.BUCKET_VERSIONING: AwsApi(
        "s3", "PutBucketVersioning", storage.bucket_versioning, TF + "s3/bucket_versioning.go"
    ),
    tokens.BUCKET_VERSIONING_V2: AwsApi(
        "s3", "PutBucketVersioning", storage.bucket_versioning, TF + "s3/bucket_versioning.go"
    ),
    tokens.BUCKET_LIFECYCLE: AwsApi(
        "s3", "PutBucketLifecycleConfiguration", storage.bucket_lifecycle, TF + "s3/bucket_lifecycle_configuration.go"
    ),
    tokens.BUCKET_PUBLIC_ACCESS_BLOCK: AwsApi(
        "s3", "PutPublicAccessBlock", storage.public_access_block, TF + "s3/bucket_public_access_block.go"
    ),
    tokens.BUCKET_SSE: AwsApi(
        "s3", "PutBucketEncryption", storage.encryption, TF + "s3/bucket_server_side_encryption_configuration.go"
    ),
    tokens.BUCKET_OWNERSHIP_CONTROLS: AwsApi(
        "s3", "PutBucketOwnershipControls", storage.ownership_controls, TF + "s3/bucket_ownership_controls.go"
    ),
    tokens.BUCKET_OBJECT_LOCK: AwsApi(
        "s3", "PutObjectLockConfiguration", storage.object_lock, TF + "s3/bucket_object_lock_configuration.go"
    ),
    tokens.BUCKET_POLICY: AwsApi("s3", "PutBucketPolicy", storage.bucket_policy, TF + "s3/bucket_policy.go"),
    tokens.BUCKET_REPLICATION: AwsApi(
        "s3", "PutBucketReplication", storage.replication, TF + "s3/bucket_replication_configuration.go"
    ),
    # Identity, keys, secrets
    tokens.IAM_ROLE: AwsApi("iam", "CreateRole", identity.role, TF + "iam/role.go"),
    tokens.IAM_ROLE_POLICY: AwsApi("iam", "PutRolePolicy", identity.role_policy, TF + "iam/role_policy.go"),
    tokens.IAM_ROLE_POLICY_ATTACHMENT: AwsApi(
        "iam", "AttachRolePolicy", identity.role_policy_attachment, TF + "iam/role_policy_attachment.go"
    ),
    tokens.IAM_INSTANCE_PROFILE: AwsApi(
        "iam", "CreateInstanceProfile", identity.instance_profile, TF + "iam/instance_profile.go"
    ),
    tokens.KMS_KEY: AwsApi("kms", "CreateKey", identity.key, TF + "kms/key.go"),
    tokens.KMS_ALIAS: AwsApi("kms", "CreateAlias", identity.alias, TF + "kms/alias.go"),
    tokens.SECRETS_MANAGER_SECRET: AwsApi(
        "secretsmanager", "CreateSecret", identity.secret, TF + "secretsmanager/secret.go"
    ),
    tokens.SECRETS_MANAGER_SECRET_VERSION: AwsApi(
        "secretsmanager", "PutSecretValue", identity.secret_version, TF + "secretsmanager/secret_version.go"
    ),
    # EKS, quotas, WAF
    tokens.EKS_CLUSTER: AwsApi("eks", "CreateCluster", services.cluster, TF + "eks/cluster.go"),
    tokens.EKS_NODE_GROUP: AwsApi("eks", "CreateNodegroup", services.node_group, TF + "eks/node_group.go"),
    tokens.SERVICE_QUOTA: AwsApi(
        "service-quotas", "RequestServiceQuotaIncrease", services.service_quota, TF + "servicequotas/service_quota.go"
    ),
    tokens.LOG_GROUP: AwsApi("logs", "CreateLogGroup", services.log_group, TF + "logs/group.go"),
    tokens.LOG_RESOURCE_POLICY: AwsApi(
        "logs", "PutResourcePolicy", services.log_resource_policy, TF + "logs/resource_policy.go"
    ),
    tokens.LOG_DELIVERY_SOURCE: AwsApi(
        "logs", "PutDeliverySource", services.delivery_source, TF + "logs/delivery_source.go"
    ),
    tokens.LOG_DELIVERY_DESTINATION: AwsApi(
        "logs", "PutDeliveryDestination", services.delivery_destination, TF + "logs/delivery_destination.go"
    ),
    tokens.LOG_DELIVERY: AwsApi("logs", "CreateDelivery", services.delivery, TF + "logs/delivery.go"),
    tokens.SSM_PARAMETER: AwsApi("ssm", "PutParameter", services.ssm_parameter, TF + "ssm/parameter.go"),
    tokens.WAF_WEB_ACL: AwsApi("wafv2", "CreateWebACL", services.web_acl, TF + "wafv2/web_acl.go"),
    tokens.WAF_WEB_ACL_ASSOCIATION: AwsApi(
        "wafv2", "AssociateWebACL", services.web_acl_association, TF + "wafv2/web_acl_association.go"
    ),
}

CLOUDFORMATION_PREFIX = "aws-native:"
"""Every pulumi-aws-native type: its CloudFormation schema (`aws-native:pcs:Cluster` -> AWS::PCS::Cluster)."""

__all__ = ["AWS", "CLOUDFORMATION_PREFIX", "AwsApi"]
