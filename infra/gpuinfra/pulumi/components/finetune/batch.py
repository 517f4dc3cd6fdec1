"""AWS Batch for fine-tuning: GPU compute environments (spot, with an on-demand fallback) in private subnets, a
job queue that tries them in order, and a job definition whose container is pinned by digest and retried when EC2
takes its host back.

Arguments are those of the Batch API (botocore batch service-2.json: CreateComputeEnvironment, CreateJobQueue,
RegisterJobDefinition) as pulumi-aws 7 `aws.batch.*` takes them.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from typing import Any

import pulumi
import pulumi_aws as aws

from gpuinfra.plan import FinetunePlan
from gpuinfra.plan.lineage import MANIFEST_NAME
from gpuinfra.pulumi.components import iam
from gpuinfra.pulumi.components.base import child
from gpuinfra.pulumi.components.finetune.spot_notice import SCRIPT as spot_notice_script
from gpuinfra.pulumi.components.finetune.spot_notice import UNIT as SPOT_NOTICE_UNIT
from gpuinfra.pulumi.components.finetune.spot_notice import container_notice, spot_notice
from gpuinfra.pulumi.components.network import nat_egress, subnet, vpc
from gpuinfra.pulumi.components.training.bootstrap import (
    CHECKPOINT_NOW_FILE,
    CHECKPOINT_NOW_VAR,
    CHECKPOINT_ROOT_VAR,
    CHECKPOINT_SIGNAL,
    COMPLETE_MARKER,
)
from gpuinfra.pulumi.components.vpc_logs import FlowLogSettings
from gpuinfra.spec import FinetuneSpec
from gpuinfra.templating import renderer

TYPE = "gpuinfra:finetune:BatchQueue"
render = renderer("finetune")

ECS_GPU_IMAGE_TYPE = "ECS_AL2023_NVIDIA"
"""Batch's GPU AMI: the ECS-optimized Amazon Linux 2023 AMI with the NVIDIA driver and container toolkit, so the
job's `GPU` resource requirement works. botocore's Batch model, Ec2Configuration.imageType: ECS_AL2023_NVIDIA is
the "Default for all GPU instance families"; "Effective June 30, 2026, Batch will block creation of new Amazon ECS
compute environments using Batch-provided Amazon Linux 2 AMIs" (ECS_AL2_NVIDIA). It "doesn't support p3 and g3":
the catalog's fine-tuning types are newer. Changing it replaces an existing compute environment (pulumi-aws
ComputeEnvironment computeResources.ec2Configurations forces a new resource); the job queue follows it."""
SPOT_ALLOCATION = "SPOT_PRICE_CAPACITY_OPTIMIZED"
"""Batch API ComputeResource.allocationStrategy: pools least likely to be interrupted, then the lowest price; it
needs no spotIamFleetRole (only BEST_FIT does)."""
ON_DEMAND_ALLOCATION = "BEST_FIT_PROGRESSIVE"
HOST_RECLAIMED = "Host EC2*"
"""AWS Batch User Guide, "Automated job retries": a job whose instance was reclaimed (spot) or failed ends with a
status reason starting "Host EC2 (instance i-...) terminated."; retrying on it and exiting on anything else keeps a
failing script from burning attempts."""
RETRY_ATTEMPTS = 10
"""Batch allows 1 to 10 attempts (RetryStrategy.attempts); each reclaim costs at most one checkpoint interval."""
STOP_TIMEOUT = "110s"
"""Inside EC2's two-minute spot notice, with time left for the agent to drain."""
ROOT_DEVICE = "/dev/xvda"
"""The root device of Amazon Linux 2023 AMIs, ECS_AL2023_NVIDIA's base (Amazon Linux 2023 User Guide, "Amazon
Linux 2023 on Amazon EC2": AL2023 AMIs boot from /dev/xvda, as AL2 did)."""
ECS_INSTANCE_ROLE_POLICY = "arn:aws:iam::aws:policy/service-role/AmazonEC2ContainerServiceforEC2Role"


@dataclass(frozen=True)
class BatchArgs:
    spec: FinetuneSpec
    plan: FinetunePlan
    account_id: str
    checkpoint_uri: str
    """s3://bucket/prefix/ of this stack's checkpoint bucket."""
    kms_key_arn: pulumi.Input[str]
    registry: tuple[str, str, str, str, str] | None
    """(bucket, upload prefix, model prefix, account id, region) of the model registry."""
    manifest: dict[str, Any]
    """The lineage manifest's fixed fields (plan/lineage.py)."""
    cidr: str = "10.40.0.0/16"


def user_data(name: str) -> str:
    """The launch template's user data as MIME multi-part, the only form Batch merges with its own (AWS Batch User
    Guide, "Amazon EC2 launch template support")."""
    message = MIMEMultipart(boundary="==GPUINFRA==")
    script = render(
        "batch-user-data.sh.j2",
        queue=name,
        signal=CHECKPOINT_SIGNAL,
        stop_timeout=STOP_TIMEOUT,
        notice_script=spot_notice(name).rstrip("\n"),
        script=spot_notice_script,
        unit=SPOT_NOTICE_UNIT,
    )
    message.attach(MIMEText(script, "x-shellscript"))
    return message.as_string()


def job_environment(args: BatchArgs) -> dict[str, str]:
    """What the trainer reads: the data and its versions, the base, where adapters and checkpoints go, and the
    lineage fields its manifest records (docs/finetune.md)."""
    spec = args.spec
    env = {
        # The SDKs' region, which a container without IMDS (hop limit 1) could not look up.
        "AWS_REGION": spec.region,
        "AWS_DEFAULT_REGION": spec.region,
        CHECKPOINT_ROOT_VAR: args.checkpoint_uri,
        CHECKPOINT_NOW_VAR: CHECKPOINT_NOW_FILE,  # written by the host on a spot notice (spot_notice.py)
        "GPUINFRA_CHECKPOINT_INTERVAL_SECONDS": str(round(spec.checkpoint_minutes * 60)),
        "GPUINFRA_CHECKPOINT_SIGNAL": CHECKPOINT_SIGNAL,
        "GPUINFRA_CHECKPOINT_COMPLETE_MARKER": COMPLETE_MARKER,
        "GPUINFRA_DATASET_URI": spec.dataset.uri,
        "GPUINFRA_DATASET_VERSION": spec.dataset.version,
        "GPUINFRA_EVAL_URI": spec.eval_set.uri,
        "GPUINFRA_EVAL_VERSION": spec.eval_set.version,
        "GPUINFRA_BASE_MODEL": spec.base_model.name,
        "GPUINFRA_BASE_MODEL_VERSION": spec.base_model.version,
        "GPUINFRA_METHOD": spec.method,
        "GPUINFRA_LORA_RANK": str(spec.lora.rank),
        "GPUINFRA_LORA_ALPHA": f"{spec.lora.alpha:g}",
        "GPUINFRA_LORA_TARGET_MODULES": ",".join(spec.lora.target_modules),
        "GPUINFRA_IMAGE": spec.image,
        "GPUINFRA_SPEC_SHA256": args.manifest["spec_sha256"],
        "GPUINFRA_MANIFEST": json.dumps(args.manifest, sort_keys=True, separators=(",", ":")),
        "GPUINFRA_MANIFEST_NAME": MANIFEST_NAME,
    }
    if args.registry is not None:
        bucket, upload, model, _, _ = args.registry
        env["GPUINFRA_BASE_MODEL_URI"] = f"s3://{bucket}/{model}{spec.base_model.weights_prefix}"
        env["GPUINFRA_ADAPTER_URI"] = f"s3://{bucket}/{upload}{spec.adapter_prefix}"
    return env


def _split(uri: str) -> tuple[str, str]:
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    return bucket, prefix


def job_statements(args: BatchArgs, kms_key_arn: str) -> list[iam.Statement]:
    """The job role: read the dataset and the evaluation set, read the base and write adapters in the registry,
    write checkpoints in this stack's bucket under its key."""
    spec = args.spec
    statements: list[iam.Statement] = [
        *iam.s3_read("Dataset", *_split(spec.dataset.uri)),
        *iam.s3_read("EvalSet", *_split(spec.eval_set.uri)),
        *iam.s3_write("Checkpoints", *_split(args.checkpoint_uri)),
        iam.kms_use("StackKey", kms_key_arn),
    ]
    if args.registry is not None:
        bucket, upload, model, account, region = args.registry
        statements += [
            *iam.s3_read("BaseModel", bucket, f"{model}{spec.base_model.weights_prefix}"),
            *iam.s3_write("Adapters", bucket, f"{upload}{spec.adapter_prefix}", read_back=False),
            iam.kms_via_s3("RegistryKey", account, region, decrypt_only=False),
        ]
    return statements


def container_properties(args: BatchArgs, job_role_arn: str) -> str:
    """RegisterJobDefinition containerProperties: the digest-pinned image, every GPU of the instance (resource
    requirement type GPU), its vCPUs and the memory Batch can place (plan/finetune.py)."""
    plan = args.plan
    env = job_environment(args)
    return json.dumps(
        {
            "image": args.spec.image,
            "jobRoleArn": job_role_arn,
            "resourceRequirements": [
                {"type": "GPU", "value": str(plan.gpus)},
                {"type": "VCPU", "value": str(plan.vcpus)},
                {"type": "MEMORY", "value": str(plan.memory_mib)},
            ],
            "environment": [{"name": k, "value": v} for k, v in sorted(env.items())],
            **container_notice(),
        },
        sort_keys=True,
    )


class BatchQueue(pulumi.ComponentResource):
    job_queue: aws.batch.JobQueue
    job_definition: aws.batch.JobDefinition
    compute_environments: list[aws.batch.ComputeEnvironment]

    def __init__(
        self,
        name: str,
        args: BatchArgs,
        provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        o = child(self, provider)
        instance_type = args.plan.instance_type
        assert instance_type is not None, "error findings stop a plan without an instance before this"
        subnets, group = self._network(name, args, o)
        instance_profile = self._instance_profile(name, o)
        template = self._launch_template(name, args, o)
        self.compute_environments = [
            self._compute_environment(
                f"{name}-{market}",
                args,
                (instance_type, kind, allocation),
                (subnets, group),
                instance_profile,
                template,
                o,
            )
            for market, kind, allocation in self._markets(args.spec)
        ]
        self.job_queue = aws.batch.JobQueue(
            f"{name}-queue",
            priority=1,
            state="ENABLED",
            compute_environment_orders=[
                aws.batch.JobQueueComputeEnvironmentOrderArgs(order=i + 1, compute_environment=ce.arn)
                for i, ce in enumerate(self.compute_environments)
            ],
            opts=o,
        )
        self.job_definition = self._job_definition(name, args, self._job_role(name, args, o), o)
        self.register_outputs({"job_queue": self.job_queue.arn, "job_definition": self.job_definition.arn})

    @staticmethod
    def _markets(spec: FinetuneSpec) -> list[tuple[str, str, str]]:
        """(name, Batch compute resource type, allocation strategy) of each compute environment, in the order the
        queue tries them: spot first when asked for, then on demand as the type or the fallback."""
        markets = [("spot", "SPOT", SPOT_ALLOCATION)] if spec.capacity.type == "spot" else []
        if spec.capacity.type == "on_demand" or spec.capacity.on_demand_fallback:
            markets.append(("on-demand", "EC2", ON_DEMAND_ALLOCATION))
        return markets

    @staticmethod
    def _launch_template(name: str, args: BatchArgs, o: pulumi.ResourceOptions) -> aws.ec2.LaunchTemplate:
        """An encrypted gp3 root volume, the checkpoint-on-notice user data, and IMDS out of the jobs' reach."""
        return aws.ec2.LaunchTemplate(
            f"{name}-lt",
            block_device_mappings=[
                aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                    device_name=ROOT_DEVICE,
                    ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                        encrypted="true",
                        volume_size=args.spec.root_volume_gib,
                        volume_type="gp3",
                        delete_on_termination="true",
                    ),
                )
            ],
            user_data=base64.b64encode(user_data(name).encode()).decode(),
            # Hop limit 1: a job's container (bridge network, one more hop) gets no IMDS answer, so never the
            # instance role; its own role comes from the ECS agent's credential endpoint, and the ECS agent runs in
            # the host's network (Amazon ECS Developer Guide, "Amazon EC2 container instance security
            # considerations": hop limit 1 blocks IMDS for bridge-mode tasks; EC2 User Guide, IMDS options).
            metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
                http_endpoint="enabled", http_tokens="required", http_put_response_hop_limit=1
            ),
            opts=o,
        )

    @staticmethod
    def _compute_environment(
        name: str,
        args: BatchArgs,
        market: tuple[str, str, str],
        network: tuple[list[aws.ec2.Subnet], aws.ec2.SecurityGroup],
        instance_profile: aws.iam.InstanceProfile,
        template: aws.ec2.LaunchTemplate,
        o: pulumi.ResourceOptions,
    ) -> aws.batch.ComputeEnvironment:
        """A managed environment of the plan's instance type, scaling from zero to the spec's vCPU ceiling; `market`
        is (instance type, Batch compute resource type, allocation strategy)."""
        instance_type, kind, allocation = market
        subnets, group = network
        return aws.batch.ComputeEnvironment(
            name,
            type="MANAGED",
            compute_resources=aws.batch.ComputeEnvironmentComputeResourcesArgs(
                type=kind,
                allocation_strategy=allocation,
                instance_types=[instance_type],
                min_vcpus=0,
                max_vcpus=args.spec.max_vcpus or args.plan.vcpus,
                subnets=[s.id for s in subnets],
                security_group_ids=[group.id],
                instance_role=instance_profile.arn,
                ec2_configurations=[
                    aws.batch.ComputeEnvironmentComputeResourcesEc2ConfigurationArgs(image_type=ECS_GPU_IMAGE_TYPE)
                ],
                launch_template=aws.batch.ComputeEnvironmentComputeResourcesLaunchTemplateArgs(
                    launch_template_id=template.id, version=template.latest_version.apply(str)
                ),
            ),
            opts=o,
        )

    @staticmethod
    def _job_role(name: str, args: BatchArgs, o: pulumi.ResourceOptions) -> aws.iam.Role:
        """The role the job's container runs under (job_statements), separate from the instance's."""
        job_role = aws.iam.Role(f"{name}-job", assume_role_policy=iam.assume_role("ecs-tasks.amazonaws.com"), opts=o)
        aws.iam.RolePolicy(
            f"{name}-job",
            role=job_role.id,
            policy=pulumi.Output.from_input(args.kms_key_arn).apply(
                lambda arn: iam.document(*job_statements(args, arn))
            ),
            opts=o,
        )
        return job_role

    @staticmethod
    def _job_definition(
        name: str, args: BatchArgs, job_role: aws.iam.Role, o: pulumi.ResourceOptions
    ) -> aws.batch.JobDefinition:
        """The container, retried when EC2 takes its host back and not on the script's own failures."""
        return aws.batch.JobDefinition(
            f"{name}-job",
            type="container",
            platform_capabilities=["EC2"],
            propagate_tags=True,
            container_properties=job_role.arn.apply(lambda arn: container_properties(args, arn)),
            retry_strategy=aws.batch.JobDefinitionRetryStrategyArgs(
                attempts=RETRY_ATTEMPTS,
                evaluate_on_exits=[
                    aws.batch.JobDefinitionRetryStrategyEvaluateOnExitArgs(
                        action="RETRY", on_status_reason=HOST_RECLAIMED
                    ),
                    aws.batch.JobDefinitionRetryStrategyEvaluateOnExitArgs(action="EXIT", on_reason="*"),
                ],
            ),
            opts=o,
        )

    @staticmethod
    def _network(
        name: str, args: BatchArgs, o: pulumi.ResourceOptions
    ) -> tuple[list[aws.ec2.Subnet], aws.ec2.SecurityGroup]:
        """Private subnets, one a zone, egress through one NAT and S3 through the gateway endpoint; no ingress."""
        network = vpc(name, args.cidr, args.account_id, o, FlowLogSettings.of(args.spec))
        prefix = args.cidr.split(".")[:2]
        private = [
            subnet(f"{name}-private-{zone}", network, f"{prefix[0]}.{prefix[1]}.{16 * i}.0/20", zone, o)
            for i, zone in enumerate(args.spec.availability_zones)
        ]
        public = subnet(
            f"{name}-public", network, f"{prefix[0]}.{prefix[1]}.255.0/24", args.spec.availability_zones[0], o
        )
        nat_egress(
            name,
            network,
            args.spec.region,
            [("public", public)],
            [(f"private-{i}", s) for i, s in enumerate(private)],
            o,
        )
        group = aws.ec2.SecurityGroup(
            f"{name}-jobs",
            vpc_id=network.id,
            description="Batch fine-tuning jobs: no ingress; egress through NAT and the S3 endpoint",
            egress=[aws.ec2.SecurityGroupEgressArgs(protocol="-1", from_port=0, to_port=0, cidr_blocks=["0.0.0.0/0"])],
            opts=o,
        )
        return private, group

    @staticmethod
    def _instance_profile(name: str, o: pulumi.ResourceOptions) -> aws.iam.InstanceProfile:
        """The ECS container instance role Batch instances run under (AWS Batch User Guide, "Amazon ECS instance
        role"); the job's own grants are on the job role, not here."""
        role = aws.iam.Role(f"{name}-instance", assume_role_policy=iam.assume_role("ec2.amazonaws.com"), opts=o)
        aws.iam.RolePolicyAttachment(
            f"{name}-instance-ecs", role=role.name, policy_arn=ECS_INSTANCE_ROLE_POLICY, opts=o
        )
        return aws.iam.InstanceProfile(f"{name}-instance", role=role.name, opts=o)


__all__ = ["BatchArgs", "BatchQueue", "container_properties", "job_environment", "job_statements", "user_data"]
