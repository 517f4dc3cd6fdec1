"""The data flows each stack depends on, declared where the roles and buckets are named: what preflight's
access stage judges (gpuinfra.preflight.access) against the identity, bucket and key policies together.

Each flow cites the page that says the operation needs the action:
- MULTIPART: S3 UG "Multipart upload API and permissions": CreateMultipartUpload, UploadPart and
  CompleteMultipartUpload need s3:PutObject; "To perform a multipart upload with encryption using an AWS KMS
  key, the requester must have permission to the kms:Decrypt and kms:GenerateDataKey actions on the key."
- REPLICATION_KMS: S3 UG "Replicating objects created with server-side encryption (SSE-C, SSE-S3, SSE-KMS,
  DSSE-KMS)": the replication role needs kms:Decrypt on the source key and kms:Encrypt on the replica key;
  with S3 Bucket Keys "the AWS KMS key policy for the KMS key used to encrypt the object replica must include
  kms:Decrypt permissions for the calling principal".
- REPLICATION: S3 UG "Setting up permissions for live replication" (s3:GetObjectVersionForReplication on the
  source, s3:ReplicateObject on the destination; "Granting permissions when the source and destination buckets
  are owned by different AWS accounts": then the destination bucket policy must allow the role as well).
- SSE_KMS: S3 UG "Using server-side encryption with AWS KMS keys": reading an SSE-KMS object needs kms:Decrypt.
"""

from __future__ import annotations

from gpuinfra.graph.flows import Flow
from gpuinfra.load import Inputs
from gpuinfra.plan import AnyPlan, FinetunePlan, InferencePlan, RegistryPlan, TrainingPlan
from gpuinfra.plan.registry import promote_role
from gpuinfra.spec import DataprepSpec, FinetuneSpec, InferenceSpec, RegistrySpec, TrainingSpec

S3_UG = "https://docs.aws.amazon.com/AmazonS3/latest/userguide"
MULTIPART = f"{S3_UG}/mpuoverview.html#mpuAndPermissions"
REPLICATION_KMS = f"{S3_UG}/replication-config-for-kms-objects.html"
REPLICATION = f"{S3_UG}/setting-repl-config-perm-overview.html"
SSE_KMS = f"{S3_UG}/UsingKMSEncryption.html"
OBJECT_LOCK = f"{S3_UG}/object-lock-managing.html"
"""S3 UG "Object Lock considerations": PutObjectRetention sets a version's retention (s3:PutObjectRetention);
replicating from a bucket with Object Lock reads each version's retention and legal hold (s3:GetObjectRetention,
s3:GetObjectLegalHold)."""
CONDITIONAL_WRITES = f"{S3_UG}/conditional-writes-enforce.html"
"""S3 UG "Enforce conditional writes on Amazon S3 buckets": a bucket policy can require If-None-Match on PutObject and
CompleteMultipartUpload (s3:ObjectCreationOperation true), exempting CreateMultipartUpload and UploadPart."""
HEAD = "https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadObject.html"
"""S3 API reference, HeadObject: "To use HEAD, you must have the s3:GetObject permission"."""
SECRETS = "https://docs.aws.amazon.com/secretsmanager/latest/userguide/auth-and-access_iam-policies.html"
HOOKS = "https://docs.aws.amazon.com/autoscaling/ec2/userguide/completing-lifecycle-hooks.html"
HEALTH = "https://docs.aws.amazon.com/autoscaling/ec2/userguide/set-up-a-custom-health-check.html"
SPOT_NOTICE = "https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_DetachInstances.html"
"""EC2 Auto Scaling API, DetachInstances: the instance leaves the group (and its target groups); without decrementing
the desired capacity the group launches a replacement. Authorized on the group (autoscaling:DetachInstances)."""
METRICS = "https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/iam-cw-condition-keys-namespace.html"
PCS = "https://docs.aws.amazon.com/pcs/latest/userguide/security-instance-profiles.html"
EC2_AUTH = "https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonec2.html"
"""Service Authorization Reference, Amazon EC2: DescribeInstances takes no resource type ("*"); TerminateInstances
acts on the instance resource type, which supports the aws:ResourceTag/${TagKey} condition key."""
VENDED_TO_CWL = (
    "https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/AWS-logs-infrastructure-V2-CloudWatchLogs.html"
)
"""CloudWatch Logs UG, "Logs sent to CloudWatch Logs": the destination group's resource policy must let
delivery.logs.amazonaws.com CreateLogStream and PutLogEvents (aws:SourceAccount, aws:SourceArn conditions)."""
CW_AGENT = (
    "https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/start-CloudWatch-Agent-on-premise-SSM-onprem.html"
)
"""CloudWatch UG, "Start the CloudWatch agent using the command line": `-c ssm:<parameter>` makes the agent read its
configuration from Parameter Store (ssm:GetParameter on it)."""
PCS_STREAM = "AWSLogs/PCS/pcs_0123456789/"
"""The stream prefix PCS writes under (PCS UG, "Job completion logs in AWS PCS": AWSLogs/PCS/<cluster-id>/jobcomp.log;
"Scheduler logs in AWS PCS": the same prefix per daemon); the cluster id is an example: PCS assigns it."""
ECR_PULL = "https://docs.aws.amazon.com/AmazonECR/latest/userguide/security_iam_id-based-policy-examples.html"
"""ECR UG, identity-based policy examples ("access images in a repository"): a pull needs ecr:GetAuthorizationToken
(no resource: "*"), ecr:BatchGetImage and ecr:GetDownloadUrlForLayer on the repository."""
ECR_CACHE = "https://docs.aws.amazon.com/AmazonECR/latest/userguide/pull-through-cache-iam.html"
"""ECR UG, "IAM permissions required to sync an upstream registry": the first pull through a cache rule creates
the repository and imports the image, so the puller needs ecr:CreateRepository and ecr:BatchImportUpstreamImage."""
FSX_SLR = "https://docs.aws.amazon.com/fsx/latest/LustreGuide/using-service-linked-roles.html"
FSX_EXPORTER = "aws-service-role/s3.data-source.lustre.fsx.amazonaws.com/AWSServiceRoleForFSxS3Access_fs"
"""FSx for Lustre exports through this service-linked role (one per file system, suffixed with its id)."""
SAMPLE_OBJECT = "example/model.safetensors"
"""A representative object under a prefix: policies grant prefixes, requests name objects."""


def promote_flows(stack: str, name: str, plan: RegistryPlan) -> list[Flow]:
    """The promote role (templates/registry/promote.sh.j2): list and read an upload (SSE-KMS), refuse a released
    version (HeadObject, ListBucket), write the release (multipart copy, SSE-KMS) and lock each version."""
    role = promote_role(name)
    bucket = f"arn:aws:s3:::{plan.bucket}"
    upload = f"{bucket}/{plan.upload_prefix}{SAMPLE_OBJECT}"
    release = f"{bucket}/{plan.model_prefix}{SAMPLE_OBJECT}"
    return [
        Flow(
            "promote: list the upload",
            stack,
            role,
            "s3:ListBucket",
            bucket,
            context={"s3:prefix": f"{plan.upload_prefix}{SAMPLE_OBJECT}"},
            source=SSE_KMS,
        ),
        Flow("promote: read the upload", stack, role, "s3:GetObject", upload, source=SSE_KMS),
        Flow("promote: decrypt the upload", stack, role, "kms:Decrypt", upload, key_of=True, source=SSE_KMS),
        Flow("promote: is the version released (HeadObject)", stack, role, "s3:GetObject", release, source=HEAD),
        # CreateMultipartUpload and UploadPart: no conditional header, exempt by s3:ObjectCreationOperation false.
        Flow(
            "promote: write the release (multipart)",
            stack,
            role,
            "s3:PutObject",
            release,
            context={"s3:ObjectCreationOperation": "false"},
            source=MULTIPART,
        ),
        Flow(
            "promote: create a release shard (If-None-Match)",
            stack,
            role,
            "s3:PutObject",
            release,
            context={"s3:if-none-match": "*", "s3:ObjectCreationOperation": "true"},
            source=CONDITIONAL_WRITES,
        ),
        Flow("promote: release data key", stack, role, "kms:GenerateDataKey", release, key_of=True, source=MULTIPART),
        Flow("promote: release multipart Decrypt", stack, role, "kms:Decrypt", release, key_of=True, source=MULTIPART),
        Flow("promote: lock the release", stack, role, "s3:PutObjectRetention", release, source=OBJECT_LOCK),
        Flow(
            "promote: create the release manifest (If-None-Match)",
            stack,
            role,
            "s3:PutObject",
            f"{bucket}/{plan.model_prefix}example/v1/manifest.json",
            context={"s3:if-none-match": "*", "s3:ObjectCreationOperation": "true"},
            source=CONDITIONAL_WRITES,
        ),
    ]


def registry_flows(stack: str, name: str, plan: RegistryPlan, model_prefix: str) -> list[Flow]:
    """S3 replication of released models to every replica region, as the replication role (with the source's
    Object Lock retention and legal holds), and the promote role's flows."""
    role = f"{name}-replication"
    source = f"arn:aws:s3:::{plan.bucket}/{model_prefix}{SAMPLE_OBJECT}"
    flows = promote_flows(stack, name, plan)
    for r in plan.replicas:
        replica = f"arn:aws:s3:::{r.bucket}/{model_prefix}{SAMPLE_OBJECT}"
        to = f"replicate to {r.region}"
        flows += [
            Flow(
                f"{to}: read the source version",
                stack,
                role,
                "s3:GetObjectVersionForReplication",
                source,
                source=REPLICATION,
            ),
            Flow(f"{to}: decrypt the source", stack, role, "kms:Decrypt", source, key_of=True, source=REPLICATION_KMS),
            Flow(
                f"{to}: read the source's retention", stack, role, "s3:GetObjectRetention", source, source=OBJECT_LOCK
            ),
            Flow(
                f"{to}: read the source's legal hold", stack, role, "s3:GetObjectLegalHold", source, source=OBJECT_LOCK
            ),
            Flow(f"{to}: write the replica", stack, role, "s3:ReplicateObject", replica, source=REPLICATION),
            Flow(
                f"{to}: encrypt the replica", stack, role, "kms:Encrypt", replica, key_of=True, source=REPLICATION_KMS
            ),
            Flow(
                f"{to}: Bucket Key replica needs Decrypt",
                stack,
                role,
                "kms:Decrypt",
                replica,
                key_of=True,
                source=REPLICATION_KMS,
            ),
        ]
    return flows


def training_role(spec: TrainingSpec) -> str:
    """The role training nodes (Slurm on AWS PCS) or trainer pods (EKS Pod Identity) act as."""
    return f"{spec.name}-eks-trainer-role" if spec.scheduler.type == "kubernetes" else f"{spec.name}-slurm-role"


def training_flows(inputs: Inputs, plan: TrainingPlan) -> list[Flow]:
    """Checkpoint writes, weight uploads to the registry (multipart, SSE-KMS), node registration with PCS."""
    from gpuinfra.pulumi.components.training.cluster import checkpoint_uri

    spec = inputs.spec
    assert isinstance(spec, TrainingSpec)
    if spec.provider == "onprem":
        return []
    stack, role = inputs.stack.name, training_role(spec)
    ckpt = checkpoint_uri(spec).removeprefix("s3://")
    ckpt_object = f"arn:aws:s3:::{ckpt.rstrip('/')}/step-000100/{SAMPLE_OBJECT}"
    flows = [
        Flow("write checkpoints (multipart)", stack, role, "s3:PutObject", ckpt_object, source=MULTIPART),
        Flow(
            "write checkpoints: data key",
            stack,
            role,
            "kms:GenerateDataKey",
            ckpt_object,
            key_of=True,
            source=MULTIPART,
        ),
        Flow(
            "write checkpoints: multipart Decrypt",
            stack,
            role,
            "kms:Decrypt",
            ckpt_object,
            key_of=True,
            source=MULTIPART,
        ),
    ]
    if spec.lustre is not None:
        exporter = f"arn:aws:iam::{inputs.account.id}:role/{FSX_EXPORTER}"
        flows += [
            Flow("FSx exports checkpoints to S3", stack, exporter, "s3:PutObject", ckpt_object, source=FSX_SLR),
            Flow(
                "FSx export: data key", stack, exporter, "kms:GenerateDataKey", ckpt_object, key_of=True, source=FSX_SLR
            ),
        ]
    registry = inputs.org.org.registry
    if registry is not None:
        upload = f"arn:aws:s3:::{registry.bucket}/{registry.upload_prefix}{SAMPLE_OBJECT}"
        flows += [
            Flow("upload weights to the registry (multipart)", stack, role, "s3:PutObject", upload, source=MULTIPART),
            Flow("abort a failed weight upload", stack, role, "s3:AbortMultipartUpload", upload, source=MULTIPART),
            Flow("upload weights: data key", stack, role, "kms:GenerateDataKey", upload, key_of=True, source=MULTIPART),
            Flow(
                "upload weights: multipart Decrypt", stack, role, "kms:Decrypt", upload, key_of=True, source=MULTIPART
            ),
        ]
    if spec.scheduler.type == "slurm":
        flows.append(
            Flow("register nodes with AWS PCS", stack, role, "pcs:RegisterComputeNodeGroupInstance", "*", source=PCS)
        )
        flows += _pcs_log_delivery(inputs) + _gpu_metrics(inputs, role) + _node_repair(inputs)
    return flows


def _node_repair(inputs: Inputs) -> list[Flow]:
    """The login node's repair loop (training/node_repair.py): find the instance of a drained node, terminate it,
    publish the count of unavailable nodes. A compute instance of this stack is what it may terminate; the
    evaluator also holds it to nothing else (tests/components/test_node_repair_access.py)."""
    from gpuinfra.pulumi.components.base import STACK_TAG
    from gpuinfra.pulumi.components.training.gpu_metrics import NAMESPACE
    from gpuinfra.pulumi.components.training.node_repair import ROLE_TAG

    spec = inputs.spec
    assert isinstance(spec, TrainingSpec) and spec.region is not None
    stack, role = inputs.stack.name, f"{spec.name}-slurm-login-role"
    instance = f"arn:aws:ec2:{spec.region}:{inputs.account.id}:instance/i-0123456789abcdef0"
    tags = {f"aws:ResourceTag/{STACK_TAG}": stack, f"aws:ResourceTag/{ROLE_TAG}": "compute"}
    return [
        Flow("node repair: find a drained node's instance", stack, role, "ec2:DescribeInstances", "*", source=EC2_AUTH),
        Flow(
            "node repair: terminate it", stack, role, "ec2:TerminateInstances", instance, context=tags, source=EC2_AUTH
        ),
        Flow(
            "node repair: publish unavailable nodes",
            stack,
            role,
            "cloudwatch:PutMetricData",
            "*",
            context={"cloudwatch:namespace": NAMESPACE},
            source=METRICS,
        ),
    ]


def _gpu_metrics(inputs: Inputs, role: str) -> list[Flow]:
    """PCS GPU nodes read the CloudWatch agent's configuration and publish GPU metrics (training/gpu_metrics.py)."""
    from gpuinfra.pulumi.components.training.gpu_metrics import NAMESPACE, parameter_name

    spec = inputs.spec
    assert isinstance(spec, TrainingSpec) and spec.region is not None
    stack, account = inputs.stack.name, inputs.account.id
    parameter = f"arn:aws:ssm:{spec.region}:{account}:parameter/{parameter_name(spec.name)}"
    context = {"cloudwatch:namespace": NAMESPACE}
    return [
        Flow("read the CloudWatch agent's configuration", stack, role, "ssm:GetParameter", parameter, source=CW_AGENT),
        Flow("publish GPU metrics", stack, role, "cloudwatch:PutMetricData", "*", context=context, source=METRICS),
    ]


def _pcs_log_delivery(inputs: Inputs) -> list[Flow]:
    """CloudWatch Logs delivers the PCS cluster's scheduler and job completion logs into the stack's log group
    (components/training/pcs_logs.py), as the vended-log service on behalf of each delivery source."""
    from gpuinfra.graph.log_delivery import VENDED_LOG_SERVICE
    from gpuinfra.pulumi.components.training.pcs_logs import DELIVERY_ACTIONS, LOG_TYPES, delivery_name, group_arn

    spec = inputs.spec
    assert isinstance(spec, TrainingSpec) and spec.region is not None
    region, account = spec.region, inputs.account.id
    stream = f"{group_arn(region, account, spec.name)}:log-stream:{PCS_STREAM}"
    flows = []
    for suffix, log_type in LOG_TYPES.items():
        context = {
            "aws:SourceAccount": account,
            "aws:SourceArn": f"arn:aws:logs:{region}:{account}:delivery-source:{delivery_name(spec.name, suffix)}",
        }
        flows += [
            Flow(
                f"deliver {log_type} to the log group ({action})",
                inputs.stack.name,
                VENDED_LOG_SERVICE,
                action,
                f"{stream}{suffix}.log",
                context=context,
                source=VENDED_TO_CWL,
            )
            for action in DELIVERY_ACTIONS
        ]
    return flows


def inference_flows(inputs: Inputs, plan: InferencePlan) -> list[Flow]:
    """Per region: read the weights (and their key), read the API key, complete lifecycle hooks, publish the
    scaling and latency metrics, mark an instance with a failed GPU Unhealthy (NVIDIA fleets). Kubernetes fleets
    run no AWS role of their own here: nothing to declare."""
    spec = inputs.spec
    assert isinstance(spec, InferenceSpec)
    if spec.platform == "kubernetes" or inputs.org.org.registry is None:
        return []
    flows = []
    for rp in plan.regions:
        role = f"{spec.name}-{rp.region}-replicas-role"
        flows += _weights_and_metrics(inputs, rp.region, role)
        flows += _group_calls(inputs, spec, rp.region, role)
        flows += _image_pull(inputs, rp.region, role)
        flows += _api_key(inputs, spec, rp.region, role)
    return flows


def _weights_and_metrics(inputs: Inputs, region: str, role: str) -> list[Flow]:
    """Read, list and decrypt the region's replica of the weights; publish the scaling metric."""
    from gpuinfra.pulumi.components.inference.bootstrap import METRIC_NAMESPACE

    registry = inputs.org.org.registry
    assert registry is not None
    stack, at = inputs.stack.name, f"{region}:"
    bucket = registry.replica_bucket(region)
    weights = f"arn:aws:s3:::{bucket}/{registry.model_prefix}{SAMPLE_OBJECT}"
    return [
        Flow(f"{at} read weights", stack, role, "s3:GetObject", weights, source=SSE_KMS),
        Flow(
            f"{at} list weights",
            stack,
            role,
            "s3:ListBucket",
            f"arn:aws:s3:::{bucket}",
            context={"s3:prefix": f"{registry.model_prefix}{SAMPLE_OBJECT}"},
            source=SSE_KMS,
        ),
        Flow(f"{at} decrypt weights", stack, role, "kms:Decrypt", weights, key_of=True, source=SSE_KMS),
        Flow(
            f"{at} publish the scaling metric",
            stack,
            role,
            "cloudwatch:PutMetricData",
            "*",
            context={"cloudwatch:namespace": METRIC_NAMESPACE},
            source=METRICS,
        ),
    ]


def _group_calls(inputs: Inputs, spec: InferenceSpec, region: str, role: str) -> list[Flow]:
    """What an instance asks of its own Auto Scaling group: complete lifecycle hooks, detach itself on a spot
    notice, mark itself Unhealthy on a failed GPU. The overflow group launches from the same template, so its
    instances make the same calls."""
    from gpuinfra.pulumi.components.inference.replicas import group_names, overflow_name

    stack, account, at = inputs.stack.name, inputs.account.id, f"{region}:"
    flows = []
    for group in (*group_names(spec.name, region), overflow_name(spec.name, region)):
        arn = f"arn:aws:autoscaling:{region}:{account}:autoScalingGroup:0-0:autoScalingGroupName/{group}"
        calls = [
            (f"complete lifecycle hooks of {group}", "autoscaling:CompleteLifecycleAction", HOOKS),
            (
                f"detach an instance of {group} on its spot interruption notice",
                "autoscaling:DetachInstances",
                SPOT_NOTICE,
            ),
        ]
        if spec.server_kind == "cuda":
            calls.append(
                (f"mark an instance of {group} with a failed GPU Unhealthy", "autoscaling:SetInstanceHealth", HEALTH)
            )
        flows += [Flow(f"{at} {what}", stack, role, action, arn, source=source) for what, action, source in calls]
    return flows


def _api_key(inputs: Inputs, spec: InferenceSpec, region: str, role: str) -> list[Flow]:
    """Read the region's API key secret, where the fleet authenticates by key."""
    from gpuinfra.pulumi.components.inference.region import api_key_secret

    if spec.access.auth != "api_key":
        return []
    account = inputs.account.id
    secret = f"arn:aws:secretsmanager:{region}:{account}:secret:{api_key_secret(spec.name, region)}-AbCdEf"
    return [
        Flow(
            f"{region}: read the API key",
            inputs.stack.name,
            role,
            "secretsmanager:GetSecretValue",
            secret,
            source=SECRETS,
        )
    ]


def _image_pull(inputs: Inputs, region: str, role: str) -> list[Flow]:
    """The server image from the region's ECR: the fleet's mirror, or a pull-through cache, whose first pull also
    creates the repository and imports the image (components/inference/images.py)."""
    from gpuinfra.pulumi.components.inference.images import fleet_image, repository_name

    spec = inputs.spec
    assert isinstance(spec, InferenceSpec)
    cached = fleet_image(inputs.account.id, region, spec.name, spec.server_image, spec.image_source)
    if cached is None:
        return []
    repo = f"arn:aws:ecr:{region}:{inputs.account.id}:repository/{cached.image.split('/', 1)[1]}"
    if spec.image_source == "ecr_pull_through":
        repo = (
            f"arn:aws:ecr:{region}:{inputs.account.id}:repository/{cached.prefix}/{repository_name(spec.server_image)}"
        )
    stack, at = inputs.stack.name, f"{region}:"
    pulls = [
        Flow(f"{at} log in to ECR", stack, role, "ecr:GetAuthorizationToken", "*", source=ECR_PULL),
        Flow(f"{at} pull the server image", stack, role, "ecr:BatchGetImage", repo, source=ECR_PULL),
        Flow(f"{at} pull the image's layers", stack, role, "ecr:GetDownloadUrlForLayer", repo, source=ECR_PULL),
    ]
    if spec.image_source != "ecr_pull_through":
        return pulls
    return [
        *pulls,
        Flow(
            f"{at} first pull creates the cached repository",
            stack,
            role,
            "ecr:CreateRepository",
            repo,
            source=ECR_CACHE,
        ),
        Flow(
            f"{at} first pull imports the upstream image",
            stack,
            role,
            "ecr:BatchImportUpstreamImage",
            repo,
            source=ECR_CACHE,
        ),
    ]


def finetune_flows(inputs: Inputs) -> list[Flow]:
    """The job reads its base model from the registry (SSE-KMS) and writes its adapter to the upload prefix
    (multipart, SSE-KMS), as the job role (components/finetune/batch.py)."""
    spec = inputs.spec
    assert isinstance(spec, FinetuneSpec)
    registry = inputs.org.org.registry
    if registry is None:
        return []
    stack, role = inputs.stack.name, f"{spec.name}-job"
    base = f"arn:aws:s3:::{registry.bucket}/{registry.model_prefix}{spec.base_model.weights_prefix}{SAMPLE_OBJECT}"
    adapter = f"arn:aws:s3:::{registry.bucket}/{registry.upload_prefix}{spec.adapter_prefix}{SAMPLE_OBJECT}"
    return [
        Flow("read the base model", stack, role, "s3:GetObject", base, source=SSE_KMS),
        Flow("decrypt the base model", stack, role, "kms:Decrypt", base, key_of=True, source=SSE_KMS),
        Flow("write the adapter (multipart)", stack, role, "s3:PutObject", adapter, source=MULTIPART),
        Flow("write the adapter: data key", stack, role, "kms:GenerateDataKey", adapter, key_of=True, source=MULTIPART),
        Flow("write the adapter: Decrypt", stack, role, "kms:Decrypt", adapter, key_of=True, source=MULTIPART),
    ]


def declared_flows(inputs: Inputs, plan: AnyPlan) -> list[Flow]:
    """The flows the stack depends on (an empty list for a workload that declares none)."""
    spec = inputs.spec
    if isinstance(spec, TrainingSpec) and isinstance(plan, TrainingPlan):
        return training_flows(inputs, plan)
    if isinstance(spec, InferenceSpec) and isinstance(plan, InferencePlan):
        return inference_flows(inputs, plan)
    if isinstance(spec, FinetuneSpec) and isinstance(plan, FinetunePlan):
        return finetune_flows(inputs)
    if isinstance(spec, DataprepSpec):
        from gpuinfra.pulumi.components.dataprep.flows import dataprep_flows

        return dataprep_flows(inputs.stack.name, spec)
    if isinstance(spec, RegistrySpec) and isinstance(plan, RegistryPlan):
        registry = inputs.org.org.registry
        return registry_flows(inputs.stack.name, spec.name, plan, registry.model_prefix) if registry else []
    return []


__all__ = ["FSX_EXPORTER", "declared_flows", "inference_flows", "promote_flows", "registry_flows", "training_flows"]
