"""The Slurm engine's capacity: a VPC with one private subnet (NAT for the tokenizer's and the language model's
downloads, the S3 gateway endpoint for the corpus and the buckets), the workers' instance identity, and an AWS PCS
cluster made by the training workload's PcsCluster: a spot group of CPU workers, an on-demand group of one
memory-sized node for the single MinHash cluster task, and the login node that submits the pipeline. No GPU type
enters here (the spec's GPU stage needs the Ray engine: validators/dataprep.py)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpuinfra.plan import DataprepPlan
from gpuinfra.pulumi.components.network import nat_egress, subnet, vpc
from gpuinfra.pulumi.components.profiles import instance_identity
from gpuinfra.pulumi.components.training.bootstrap import mime_user_data
from gpuinfra.pulumi.components.training.pcs import PROFILE_PATH, GroupArgs, PcsArgs, PcsCluster
from gpuinfra.pulumi.components.training.slurm_pcs import root_device_name, ssm_image
from gpuinfra.spec.dataprep import DataprepSpec
from gpuinfra.templating import renderer

TYPE = "gpuinfra:dataprep:Slurm"
PARTITION = "dataprep"
CIDR = "10.90.0.0/16"
PRIVATE_CIDR, PUBLIC_CIDR = "10.90.0.0/18", "10.90.64.0/24"
ROOT_VOLUME_GIB = 200
"""The tokenizer's local shuffle space and Slurm's output files (DocumentTokenizer local_working_dir)."""
render = renderer("dataprep")


@dataclass(frozen=True)
class SlurmArgs:
    spec: DataprepSpec
    plan: DataprepPlan
    pipeline: str
    policy: pulumi.Input[str]
    tags: dict[str, str]
    login_type: str


def user_data(args: SlurmArgs, role: str, instance_type: str) -> str:
    return mime_user_data(
        render(
            "node-cloud-config.yaml.j2",
            cluster=args.spec.name,
            role=role,
            instance_type=instance_type,
            pipeline=args.pipeline,
        )
    )


def groups(args: SlurmArgs) -> list[GroupArgs]:
    """Spot (or on-demand) workers at the planned count; one on-demand node for the cluster step."""
    plan, spec = args.plan, args.spec
    kind = "SPOT" if plan.spot else "ONDEMAND"
    out = [
        GroupArgs(
            suffix="workers",
            purchase_option=kind,
            instance_type=plan.instance_type,
            count=plan.nodes,
            memory_gib=plan.memory_gib_per_node,
            user_data=user_data(args, "worker", plan.instance_type),
            placement=False,
        )
    ]
    cluster = plan.cluster.instance_type
    if spec.stages.dedup is not None and cluster is not None:
        out.append(
            GroupArgs(
                suffix="cluster",
                purchase_option="ONDEMAND",
                instance_type=cluster,
                count=1,
                memory_gib=max(1, int(plan.cluster.memory_gb * 1e9 / 2**30)),
                user_data=user_data(args, "cluster", cluster),
                placement=False,
            )
        )
    return out


def image(image_id: str, o: pulumi.ResourceOptions) -> pulumi.Input[str]:
    """The AMI id as given, or the pinned version of an SSM parameter, read at preview."""
    ssm = ssm_image(image_id)
    if ssm is None:
        return image_id
    found = aws.ssm.get_parameter_output(
        name=f"{ssm[0]}:{ssm[1]}", opts=pulumi.InvokeOutputOptions(provider=o.provider, parent=o.parent)
    )
    return found.value


def dataprep_pcs(
    name: str, args: SlurmArgs, provider: pulumi.ProviderResource, native: pulumi.ProviderResource
) -> PcsCluster:
    spec = args.spec
    assert spec.image_id is not None  # the spec refuses the Slurm engine without one
    o = pulumi.ResourceOptions(provider=provider)
    zone = spec.availability_zone or f"{spec.region}a"
    network = vpc(name, CIDR, None, o)
    private = subnet(f"{name}-private", network, PRIVATE_CIDR, zone, o)
    public = subnet(f"{name}-public", network, PUBLIC_CIDR, zone, o)
    nat_egress(name, network, spec.region, [("public", public)], [("private", private)], o)
    nodes = aws.ec2.SecurityGroup(
        f"{name}-nodes",
        vpc_id=network.id,
        description="dataprep nodes: among themselves only (the PCS group carries Slurm and egress)",
        ingress=[aws.ec2.SecurityGroupIngressArgs(protocol="-1", from_port=0, to_port=0, self=True)],
        egress=[aws.ec2.SecurityGroupEgressArgs(protocol="-1", from_port=0, to_port=0, self=True)],
        opts=o,
    )
    identity = instance_identity(name, f"{spec.name} dataprep nodes", args.policy, o, path=PROFILE_PATH)
    ami = image(spec.image_id, o)
    login = GroupArgs(
        suffix="login",
        purchase_option="ONDEMAND",
        instance_type=args.login_type,
        count=1,
        memory_gib=16,
        user_data=user_data(args, "login", args.login_type),
        placement=False,
        role="login",
    )
    return PcsCluster(
        f"{name}-pcs",
        PcsArgs(
            cluster=spec.name,
            slurm_version=spec.slurm_version,
            size="SMALL",
            partition=PARTITION,
            subnet_id=private.id,
            vpc_id=network.id,
            security_group_id=nodes.id,
            ami_id=ami,
            root_device_name=root_device_name(ami, o),
            instance_profile_arn=identity.profile.arn,
            placement_group="",
            root_volume_gib=ROOT_VOLUME_GIB,
            compute=groups(args),
            login=login,
            tags=args.tags,
            zone=zone,
        ),
        provider,
        native,
    )


__all__ = ["PARTITION", "SlurmArgs", "dataprep_pcs", "groups", "user_data"]
