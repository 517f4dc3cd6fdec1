"""Pulumi type tokens of the resources gpuinfra reads back from a graph: each spelled once, here.

Policies, preflight, cost and the report all name resources by these constants, so they cannot disagree about
what a type is called (a token is `pkg:module/name:Name`; see the provider schemas).
"""

ACCOUNT_PUBLIC_ACCESS_BLOCK = "aws:s3/accountPublicAccessBlock:AccountPublicAccessBlock"
ACM_CERTIFICATE = "aws:acm/certificate:Certificate"
ALB_LISTENER = "aws:alb/listener:Listener"
ALB_LOAD_BALANCER = "aws:alb/loadBalancer:LoadBalancer"
ALB_TARGET_GROUP = "aws:alb/targetGroup:TargetGroup"
ASG = "aws:autoscaling/group:Group"
ASG_LIFECYCLE_HOOK = "aws:autoscaling/lifecycleHook:LifecycleHook"
ASG_POLICY = "aws:autoscaling/policy:Policy"
ASG_SCHEDULE = "aws:autoscaling/schedule:Schedule"
AWS_PROVIDER = "pulumi:providers:aws"
AWS_NATIVE_PROVIDER = "pulumi:providers:aws-native"
BATCH_COMPUTE_ENVIRONMENT = "aws:batch/computeEnvironment:ComputeEnvironment"
BUCKET = "aws:s3/bucket:Bucket"
BUCKET_LIFECYCLE = "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"
BUCKET_LIFECYCLE_V2 = "aws:s3/bucketLifecycleConfigurationV2:BucketLifecycleConfigurationV2"
BUCKET_OBJECT_LOCK = "aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration"
BUCKET_OWNERSHIP_CONTROLS = "aws:s3/bucketOwnershipControls:BucketOwnershipControls"
BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy"
BUCKET_PUBLIC_ACCESS_BLOCK = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
BUCKET_REPLICATION = "aws:s3/bucketReplicationConfig:BucketReplicationConfig"
BUCKET_SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
BUCKET_SSE_V2 = "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2"
BUCKET_V2 = "aws:s3/bucketV2:BucketV2"
BUCKET_VERSIONING = "aws:s3/bucketVersioning:BucketVersioning"
BUCKET_VERSIONING_V2 = "aws:s3/bucketVersioningV2:BucketVersioningV2"
CLOUDFRONT_DISTRIBUTION = "aws:cloudfront/distribution:Distribution"
DEFAULT_SECURITY_GROUP = "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup"
EBS_VOLUME = "aws:ebs/volume:Volume"
EC2_FLEET = "aws:ec2/fleet:Fleet"
EIP = "aws:ec2/eip:Eip"
FLOW_LOG = "aws:ec2/flowLog:FlowLog"
EKS_CLUSTER = "aws:eks/cluster:Cluster"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
FSX_DRA = "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation"
GA_ACCELERATOR = "aws:globalaccelerator/accelerator:Accelerator"
GA_ENDPOINT_GROUP = "aws:globalaccelerator/endpointGroup:EndpointGroup"
GA_LISTENER = "aws:globalaccelerator/listener:Listener"
HELM_CHART = "kubernetes:helm.sh/v4:Chart"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
IAM_GROUP_POLICY = "aws:iam/groupPolicy:GroupPolicy"
IAM_GROUP_POLICY_ATTACHMENT = "aws:iam/groupPolicyAttachment:GroupPolicyAttachment"
IAM_INSTANCE_PROFILE = "aws:iam/instanceProfile:InstanceProfile"
IAM_POLICY = "aws:iam/policy:Policy"
IAM_POLICY_ATTACHMENT = "aws:iam/policyAttachment:PolicyAttachment"
IAM_ROLE = "aws:iam/role:Role"
IAM_ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
IAM_ROLE_POLICY_ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
IAM_USER_POLICY = "aws:iam/userPolicy:UserPolicy"
IAM_USER_POLICY_ATTACHMENT = "aws:iam/userPolicyAttachment:UserPolicyAttachment"
INSTANCE = "aws:ec2/instance:Instance"
INTERNET_GATEWAY = "aws:ec2/internetGateway:InternetGateway"
K8S_CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
K8S_CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup"
K8S_CRONJOB = "kubernetes:batch/v1:CronJob"
K8S_DEPLOYMENT = "kubernetes:apps/v1:Deployment"
K8S_NAMESPACE = "kubernetes:core/v1:Namespace"
K8S_NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
K8S_SERVICE = "kubernetes:core/v1:Service"
EFS_FILE_SYSTEM = "aws:efs/fileSystem:FileSystem"
EFS_MOUNT_TARGET = "aws:efs/mountTarget:MountTarget"
EFS_BACKUP_POLICY = "aws:efs/backupPolicy:BackupPolicy"
KARPENTER_NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
KMS_ALIAS = "aws:kms/alias:Alias"
KUEUE_CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
KMS_KEY = "aws:kms/key:Key"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"
LOG_DELIVERY = "aws:cloudwatch/logDelivery:LogDelivery"
LOG_DELIVERY_DESTINATION = "aws:cloudwatch/logDeliveryDestination:LogDeliveryDestination"
LOG_DELIVERY_SOURCE = "aws:cloudwatch/logDeliverySource:LogDeliverySource"
LOG_RESOURCE_POLICY = "aws:cloudwatch/logResourcePolicy:LogResourcePolicy"
LISTENER = "aws:lb/listener:Listener"
LISTENER_RULE = "aws:lb/listenerRule:ListenerRule"
LOAD_BALANCER = "aws:lb/loadBalancer:LoadBalancer"
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
METRIC_ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
NAT_GATEWAY = "aws:ec2/natGateway:NatGateway"
PCS_CLUSTER = "aws-native:pcs:Cluster"
PCS_NODE_GROUP = "aws-native:pcs:ComputeNodeGroup"
PCS_QUEUE = "aws-native:pcs:Queue"
PLACEMENT_GROUP = "aws:ec2/placementGroup:PlacementGroup"
ROUTE = "aws:ec2/route:Route"
SSM_PARAMETER = "aws:ssm/parameter:Parameter"
SNS_TOPIC = "aws:sns/topic:Topic"
SNS_SUBSCRIPTION = "aws:sns/topicSubscription:TopicSubscription"
SNS_TOPIC_POLICY = "aws:sns/topicPolicy:TopicPolicy"
SPOT_FLEET = "aws:ec2/spotFleetRequest:SpotFleetRequest"
ROUTE53_HEALTH_CHECK = "aws:route53/healthCheck:HealthCheck"
ROUTE53_RECORD = "aws:route53/record:Record"
ROUTE53_ZONE = "aws:route53/zone:Zone"
ROUTE_TABLE = "aws:ec2/routeTable:RouteTable"
ROUTE_TABLE_ASSOCIATION = "aws:ec2/routeTableAssociation:RouteTableAssociation"
ECR_REPOSITORY = "aws:ecr/repository:Repository"
SECRETS_MANAGER_SECRET = "aws:secretsmanager/secret:Secret"
SECRETS_MANAGER_SECRET_VERSION = "aws:secretsmanager/secretVersion:SecretVersion"
SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
SERVICE_QUOTA = "aws:servicequotas/serviceQuota:ServiceQuota"
SG_EGRESS_RULE = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
SG_INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
SG_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
SUBNET = "aws:ec2/subnet:Subnet"
TARGET_GROUP = "aws:lb/targetGroup:TargetGroup"
TGW_PEERING_ATTACHMENT = "aws:ec2transitgateway/peeringAttachment:PeeringAttachment"
TGW_VPC_ATTACHMENT = "aws:ec2transitgateway/vpcAttachment:VpcAttachment"
TGW_VPC_ATTACHMENT_ACCEPTER = "aws:ec2transitgateway/vpcAttachmentAccepter:VpcAttachmentAccepter"
VPC = "aws:ec2/vpc:Vpc"
VPC_CIDR_ASSOCIATION = "aws:ec2/vpcIpv4CidrBlockAssociation:VpcIpv4CidrBlockAssociation"
VPC_ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
VPC_PEERING = "aws:ec2/vpcPeeringConnection:VpcPeeringConnection"
VPC_PEERING_ACCEPTER = "aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter"
WAF_WEB_ACL = "aws:wafv2/webAcl:WebAcl"
WAF_WEB_ACL_ASSOCIATION = "aws:wafv2/webAclAssociation:WebAclAssociation"
WAF_LOGGING = "aws:wafv2/webAclLoggingConfiguration:WebAclLoggingConfiguration"

# Tags and labels the program writes and later stages read back from the graph.
WORKLOAD_TAG = "workload"
"""The tag every AWS resource carries: training, inference or registry (the separation policies read it)."""
WORKLOAD_LABEL = "gpuinfra.io/workload"
"""The same on every Kubernetes object (label keys take no ':')."""
EXPECTED_CAPACITY_TAG = "gpuinfra:expected-capacity"
"""The planner's expected instance count on every Auto Scaling group, so cost can price a real `pulumi preview
--json` at the planned size (not propagated to instances)."""
ELASTIC_PARTITION_TAG = "gpuinfra:elastic-partition"
"""On a training stack's elastic node group (compute.elastic): the Slurm partition of its own it serves. Its spot
nodes run the jobs that are not the gang, so the gang's checkpoint rules do not judge them."""

__all__ = [
    "ACCOUNT_PUBLIC_ACCESS_BLOCK",
    "ACM_CERTIFICATE",
    "ALB_LISTENER",
    "ALB_LOAD_BALANCER",
    "ALB_TARGET_GROUP",
    "ASG",
    "ASG_LIFECYCLE_HOOK",
    "ASG_POLICY",
    "ASG_SCHEDULE",
    "AWS_NATIVE_PROVIDER",
    "AWS_PROVIDER",
    "BATCH_COMPUTE_ENVIRONMENT",
    "BUCKET",
    "BUCKET_LIFECYCLE",
    "BUCKET_LIFECYCLE_V2",
    "BUCKET_OBJECT_LOCK",
    "BUCKET_OWNERSHIP_CONTROLS",
    "BUCKET_POLICY",
    "BUCKET_PUBLIC_ACCESS_BLOCK",
    "BUCKET_REPLICATION",
    "BUCKET_SSE",
    "BUCKET_SSE_V2",
    "BUCKET_V2",
    "BUCKET_VERSIONING",
    "BUCKET_VERSIONING_V2",
    "CLOUDFRONT_DISTRIBUTION",
    "DEFAULT_SECURITY_GROUP",
    "EBS_VOLUME",
    "EC2_FLEET",
    "ECR_REPOSITORY",
    "EFS_BACKUP_POLICY",
    "EFS_FILE_SYSTEM",
    "EFS_MOUNT_TARGET",
    "EIP",
    "EKS_CLUSTER",
    "EKS_NODE_GROUP",
    "ELASTIC_PARTITION_TAG",
    "EXPECTED_CAPACITY_TAG",
    "FLOW_LOG",
    "FSX_DRA",
    "GA_ACCELERATOR",
    "GA_ENDPOINT_GROUP",
    "GA_LISTENER",
    "HELM_CHART",
    "HELM_RELEASE",
    "IAM_GROUP_POLICY",
    "IAM_GROUP_POLICY_ATTACHMENT",
    "IAM_INSTANCE_PROFILE",
    "IAM_POLICY",
    "IAM_POLICY_ATTACHMENT",
    "IAM_ROLE",
    "IAM_ROLE_POLICY",
    "IAM_ROLE_POLICY_ATTACHMENT",
    "IAM_USER_POLICY",
    "IAM_USER_POLICY_ATTACHMENT",
    "INSTANCE",
    "INTERNET_GATEWAY",
    "K8S_CONFIG_GROUP",
    "K8S_CONFIG_MAP",
    "K8S_CRONJOB",
    "K8S_DEPLOYMENT",
    "K8S_NAMESPACE",
    "K8S_NETWORK_POLICY",
    "K8S_SERVICE",
    "KARPENTER_NODE_POOL",
    "KMS_ALIAS",
    "KMS_KEY",
    "LAUNCH_TEMPLATE",
    "LISTENER",
    "LISTENER_RULE",
    "LOAD_BALANCER",
    "LOG_DELIVERY",
    "LOG_DELIVERY_DESTINATION",
    "LOG_DELIVERY_SOURCE",
    "LOG_GROUP",
    "LOG_RESOURCE_POLICY",
    "LUSTRE",
    "METRIC_ALARM",
    "NAT_GATEWAY",
    "PCS_CLUSTER",
    "PCS_NODE_GROUP",
    "PCS_QUEUE",
    "PLACEMENT_GROUP",
    "ROUTE",
    "ROUTE53_HEALTH_CHECK",
    "ROUTE53_RECORD",
    "ROUTE53_ZONE",
    "ROUTE_TABLE",
    "ROUTE_TABLE_ASSOCIATION",
    "SECRETS_MANAGER_SECRET",
    "SECRETS_MANAGER_SECRET_VERSION",
    "SECURITY_GROUP",
    "SERVICE_QUOTA",
    "SG_EGRESS_RULE",
    "SG_INGRESS_RULE",
    "SG_RULE",
    "SNS_SUBSCRIPTION",
    "SNS_TOPIC",
    "SNS_TOPIC_POLICY",
    "SPOT_FLEET",
    "SSM_PARAMETER",
    "SUBNET",
    "TARGET_GROUP",
    "TGW_PEERING_ATTACHMENT",
    "TGW_VPC_ATTACHMENT",
    "TGW_VPC_ATTACHMENT_ACCEPTER",
    "VPC",
    "VPC_CIDR_ASSOCIATION",
    "VPC_ENDPOINT",
    "VPC_PEERING",
    "VPC_PEERING_ACCEPTER",
    "WAF_LOGGING",
    "WAF_WEB_ACL",
    "WAF_WEB_ACL_ASSOCIATION",
    "WORKLOAD_LABEL",
    "WORKLOAD_TAG",
]
