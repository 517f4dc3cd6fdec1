"""EKS for `scheduler: kubernetes` on AWS: the control plane (private, or public only to the spec's CIDRs), a
small system node group, GPU node groups (one per capacity type) on a launch template with every EFA interface,
in the placement group, and the trainer's IAM role bound to its ServiceAccount by EKS Pod Identity: pods get
no credentials from the nodes (IMDS hop limit 1, and the node role holds no data grants)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpuinfra.pulumi.components import iam
from gpuinfra.pulumi.components.base import SSM_CORE, child
from gpuinfra.pulumi.components.training.compute import ComputeArgs, TrainingCompute, node_policy
from gpuinfra.pulumi.components.training.kubernetes import device_toleration
from gpuinfra.pulumi.components.training.nodeadm import launch_template_user_data

TYPE = "gpuinfra:training:Eks"
WORKER_POLICIES = {
    "worker": "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "cni": "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    "ecr": "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
    "ssm": SSM_CORE,
}
CAPACITY_LABEL = "eks.amazonaws.com/capacityType"
GPU_AMI = "AL2023_x86_64_NVIDIA"
SYSTEM_AMI = "AL2023_x86_64_STANDARD"
ROOT_DEVICE = "/dev/xvda"
IMDS_HOP_LIMIT = 1
"""No pod needs the instance's credentials or metadata: the trainer uses Pod Identity; the node daemons that read
IMDS (VPC CNI, Pod Identity agent) run on the host network, one hop away; the FSx CSI controller is given its
region and its node plugin falls back to the Kubernetes API (aws-fsx-csi-driver PR #397)."""
POD_IDENTITY_PRINCIPAL = "pods.eks.amazonaws.com"
SUPPORT_TYPE = "EXTENDED"
"""The cluster's upgrade policy, set explicitly: EXTENDED keeps the control plane at its version past standard
support (billed at the extended rate, which the cost report shows) rather than STANDARD's forced upgrade at the end
of standard support, which may fall under a running job (botocore EKS model, UpgradePolicyRequest.supportType;
`gpuinfra validate` warns when standard support ends before the run does)."""
REPAIR_IN_PARALLEL = 1
"""Node auto repair replaces at most one GPU node at a time: every node of the group carries one gang-scheduled job,
which restarts from its checkpoint after each replacement anyway (botocore EKS model,
NodeRepairConfig.maxParallelNodesRepairedCount)."""
GPU_UPDATE_STRATEGY = "MINIMAL"
"""GPU node groups update terminate-first: the DEFAULT strategy launches up to twice the zone count of extra nodes
before it drains (EKS User Guide, "Understand each phase of node updates", scale-up phase), 2 more p5 for a
one-zone group, which a quota granted for the group's size refuses (expert-training review, finding 7). MINIMAL
"terminates the old instances before launching the new instances ... useful ... with hardware accelerators such as
GPUs" (EKS API Reference, NodegroupUpdateConfig.updateStrategy). Its first step is still a drain, which the
training PodDisruptionBudget refuses while a run holds the nodes: an update waits for the run, it never restarts it."""
MONITORING_AGENT = "eks-node-monitoring-agent"
"""The EKS add-on whose NodeConditions (AcceleratedHardwareReady, NetworkingReady, ...) node auto repair acts on
beyond kubelet readiness (EKS User Guide, "Enable node auto repair and investigate node health issues")."""
TOPOLOGY_LEVELS = (
    "topology.k8s.aws/network-node-layer-1",
    "topology.k8s.aws/network-node-layer-2",
    "topology.k8s.aws/network-node-layer-3",
)
"""EKS labels nodes with their place in the EC2 network hierarchy (EKS user guide, ml-workload-topology)."""


@dataclass(frozen=True)
class EksArgs:
    compute: ComputeArgs
    """The same placement, EFA, encryption and access decisions as the Slurm cluster's compute."""
    kubernetes_version: str
    control_plane_subnet_id: pulumi.Input[str]
    on_demand_nodes: int
    spot_nodes: int
    system_instance_type: str
    system_nodes: int
    deploy_role_arn: str
    gpu_labels: dict[str, str] = field(default_factory=dict)
    """Labels of every GPU node: the flavor's and the device plugins' node selection."""
    public_access_cidrs: Sequence[str] = ()
    """Empty: a private API endpoint only."""
    trainer: tuple[str, str] | None = None
    """(namespace, ServiceAccount) that gets the dataset, checkpoint and registry-upload grants."""
    pruner: tuple[str, str, str, str] | None = None
    """(namespace, ServiceAccount, bucket, prefix) of the checkpoint pruner CronJob (pruner.py): its own role, which
    may only list the checkpoint prefix and tag its objects."""
    node_release: str | None = None
    """The EKS-optimized AL2023 AMI release every node group pins (catalog eks.yaml); None: EKS's latest at creation."""
    instance_store_gb: int = 0
    """The GPU type's NVMe instance store (catalog): striped into RAID0 by nodeadm when there is any."""
    pod_grace_seconds: int | None = None
    """The training pods' terminationGracePeriodSeconds: the GPU nodes' graceful shutdown gives them that long."""
    device_resource: str = ""
    """The accelerators' extended resource (the plan's, from the catalog): the GPU nodes' taint key."""


def gpu_node_groups(on_demand: int, spot: int, capacity_type: str) -> list[tuple[str, str, int]]:
    """(suffix, EKS capacityType, size) for each GPU node group the capacity spec asks for (an On-Demand Capacity
    Reservation's group is on-demand, its launch template targets the reservation: compute.py)."""
    if capacity_type == "capacity_block":
        return [("block", "CAPACITY_BLOCK", on_demand)]
    groups = [("ondemand", "ON_DEMAND", on_demand)] if on_demand else []
    if spot:
        groups.append(("spot", "SPOT", spot))
    return groups


def monitoring_agent_config(device_resource: str) -> dict[str, Any]:
    """Add-on configuration: the agent's DCGM server also runs on the tainted GPU nodes (the agent itself tolerates
    every taint; the DCGM DaemonSet tolerates none by default). Keys: aws/eks-node-monitoring-agent
    charts/configuration.schema.json (dcgmAgent.tolerations); chart values.yaml (nodeAgent tolerations Exists)."""
    return {"dcgmAgent": {"tolerations": [device_toleration(device_resource)]}}


def pod_identity_role(name: str, description: str, o: pulumi.ResourceOptions) -> aws.iam.Role:
    """A role the EKS Pod Identity agent assumes for a ServiceAccount: it tags the session with the pod's
    identity, hence sts:TagSession beside sts:AssumeRole (EKS User Guide, pod-id-role)."""
    return aws.iam.Role(
        name,
        assume_role_policy=iam.document(
            {
                "Effect": "Allow",
                "Principal": {"Service": POD_IDENTITY_PRINCIPAL},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
            }
        ),
        description=description,
        opts=o,
    )


def kubeconfig(cluster: str, endpoint: str, ca_data: str, region: str, role_arn: str) -> str:
    """A kubeconfig that gets tokens with `aws eks get-token` as the deploy role."""
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": cluster,
            "clusters": [{"name": cluster, "cluster": {"server": endpoint, "certificate-authority-data": ca_data}}],
            "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": cluster}}],
            "users": [
                {
                    "name": cluster,
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": "aws",
                            "args": [
                                "eks",
                                "get-token",
                                "--cluster-name",
                                cluster,
                                "--region",
                                region,
                                "--role-arn",
                                role_arn,
                            ],
                        }
                    },
                }
            ],
        },
        sort_keys=True,
    )


class EksTrainingCluster(pulumi.ComponentResource):
    cluster: aws.eks.Cluster
    placement_group: aws.ec2.PlacementGroup
    kubernetes: k8s.Provider
    system_nodes: aws.eks.NodeGroup

    def __init__(
        self, name: str, args: EksArgs, provider: pulumi.ProviderResource, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        """Control plane, node role and identities, system nodes, GPU nodes with repair, then the provider."""
        assert args.device_resource, "the training plan names the accelerators' resource (catalog devices)"
        super().__init__(TYPE, name, None, opts)
        o = child(self, provider)
        self.cluster = self._control_plane(name, args, o)
        node_role, attachments = self._node_role(name, args, o)
        if args.trainer is not None:
            agent = self._pod_identity(name, args, args.trainer, o)
            if args.pruner is not None:
                self._pruner_identity(name, args.pruner, agent, o)
        after_roles = pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=attachments))
        system_nodes = self._system_nodes(name, args, node_role, after_roles, o)
        self.system_nodes = system_nodes
        self.placement_group = aws.ec2.PlacementGroup(f"{name}-pg", strategy="cluster", opts=o)
        self._gpu_nodes(name, args, node_role, after_roles, o)
        aws.eks.Addon(
            f"{name}-node-monitoring-agent",
            cluster_name=self.cluster.name,
            addon_name=MONITORING_AGENT,
            configuration_values=json.dumps(monitoring_agent_config(args.device_resource)),
            opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[system_nodes])),
        )
        self.kubernetes = self._kubernetes_provider(name, args, system_nodes)
        self.register_outputs({"cluster_name": self.cluster.name, "endpoint": self.cluster.endpoint})

    def _control_plane(self, name: str, args: EksArgs, o: pulumi.ResourceOptions) -> aws.eks.Cluster:
        c = args.compute
        cluster_role = aws.iam.Role(
            f"{name}-cluster-role",
            assume_role_policy=iam.assume_role("eks.amazonaws.com"),
            description=f"{c.cluster} EKS control plane",
            opts=o,
        )
        aws.iam.RolePolicyAttachment(
            f"{name}-cluster-policy",
            role=cluster_role.name,
            policy_arn="arn:aws:iam::aws:policy/AmazonEKSClusterPolicy",
            opts=o,
        )
        cluster = aws.eks.Cluster(
            f"{name}-cluster",
            name=c.cluster,
            role_arn=cluster_role.arn,
            version=args.kubernetes_version,
            vpc_config=aws.eks.ClusterVpcConfigArgs(
                subnet_ids=[c.subnet_id, args.control_plane_subnet_id],
                endpoint_private_access=True,
                endpoint_public_access=bool(args.public_access_cidrs),
                public_access_cidrs=list(args.public_access_cidrs) or None,
            ),
            access_config=aws.eks.ClusterAccessConfigArgs(
                authentication_mode="API", bootstrap_cluster_creator_admin_permissions=True
            ),
            encryption_config=aws.eks.ClusterEncryptionConfigArgs(
                resources=["secrets"], provider=aws.eks.ClusterEncryptionConfigProviderArgs(key_arn=c.kms_key_arn)
            ),
            enabled_cluster_log_types=["api", "audit", "authenticator"],
            upgrade_policy=aws.eks.ClusterUpgradePolicyArgs(support_type=SUPPORT_TYPE),
            opts=o,
        )
        # The namespace's NetworkPolicies (default deny plus what the job needs) are enforced only once the VPC CNI
        # runs its network policy agent: EKS User Guide, "Limit Pod traffic with Kubernetes network policies"
        # (the Amazon EKS add-on with configuration value enableNetworkPolicy "true"; OVERWRITE adopts the
        # self-managed CNI a new cluster starts with).
        aws.eks.Addon(
            f"{name}-vpc-cni",
            cluster_name=cluster.name,
            addon_name="vpc-cni",
            configuration_values=json.dumps({"enableNetworkPolicy": "true"}),
            resolve_conflicts_on_create="OVERWRITE",
            opts=o,
        )
        return cluster

    @staticmethod
    def _node_role(
        name: str, args: EksArgs, o: pulumi.ResourceOptions
    ) -> tuple[aws.iam.Role, list[aws.iam.RolePolicyAttachment]]:
        node_role = aws.iam.Role(
            f"{name}-node-role",
            assume_role_policy=iam.assume_role("ec2.amazonaws.com"),
            description=f"{args.compute.cluster} EKS nodes",
            opts=o,
        )
        attachments = [
            aws.iam.RolePolicyAttachment(f"{name}-node-{short}", role=node_role.name, policy_arn=arn, opts=o)
            for short, arn in WORKER_POLICIES.items()
        ]
        return node_role, attachments

    def _system_nodes(
        self,
        name: str,
        args: EksArgs,
        node_role: aws.iam.Role,
        after_roles: pulumi.ResourceOptions,
        o: pulumi.ResourceOptions,
    ) -> aws.eks.NodeGroup:
        c = args.compute
        system_lt = aws.ec2.LaunchTemplate(
            f"{name}-system-lt",
            update_default_version=True,
            metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
                http_endpoint="enabled", http_tokens="required", http_put_response_hop_limit=IMDS_HOP_LIMIT
            ),
            block_device_mappings=[_encrypted_root(100)],
            tag_specifications=[aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type="instance", tags=c.tags)],
            opts=o,
        )
        return aws.eks.NodeGroup(
            f"{name}-system",
            cluster_name=self.cluster.name,
            node_role_arn=node_role.arn,
            subnet_ids=[c.subnet_id],
            instance_types=[args.system_instance_type],
            ami_type=SYSTEM_AMI,
            release_version=args.node_release,
            capacity_type="ON_DEMAND",
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                desired_size=args.system_nodes, min_size=args.system_nodes, max_size=args.system_nodes
            ),
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(id=system_lt.id, version=_version(system_lt)),
            labels={"gpuinfra.io/pool": "system"},
            opts=after_roles,
        )

    def _gpu_nodes(
        self,
        name: str,
        args: EksArgs,
        node_role: aws.iam.Role,
        after_roles: pulumi.ResourceOptions,
        o: pulumi.ResourceOptions,
    ) -> None:
        """One launch template (every EFA interface, the placement group, the nodeadm NodeConfig) and a node
        group per capacity type, pinned to the AMI release, tainted for GPU pods, repaired one node at a time."""
        c = args.compute
        gpu_lt = aws.ec2.LaunchTemplate(
            f"{name}-gpu-lt",
            instance_type=c.instance_type,
            update_default_version=True,
            network_interfaces=[
                aws.ec2.LaunchTemplateNetworkInterfaceArgs(
                    **spec,
                    security_groups=[c.security_group_id, self.cluster.vpc_config.cluster_security_group_id],
                    delete_on_termination="true",
                )
                for spec in TrainingCompute.interface_specs(c.efa_interfaces)
            ],
            metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
                http_endpoint="enabled", http_tokens="required", http_put_response_hop_limit=IMDS_HOP_LIMIT
            ),
            block_device_mappings=[_encrypted_root(c.root_volume_gib)],
            placement=aws.ec2.LaunchTemplatePlacementArgs(group_name=self.placement_group.name),
            user_data=launch_template_user_data(args.instance_store_gb, args.pod_grace_seconds),
            tag_specifications=[
                aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=c.tags)
                for kind in ("instance", "volume", "network-interface")
            ],
            **TrainingCompute.market_options(c),
            opts=o,
        )
        for suffix, capacity, size in gpu_node_groups(args.on_demand_nodes, args.spot_nodes, c.capacity.type):
            aws.eks.NodeGroup(
                f"{name}-gpu-{suffix}",
                cluster_name=self.cluster.name,
                node_role_arn=node_role.arn,
                subnet_ids=[c.subnet_id],
                ami_type=GPU_AMI,
                release_version=args.node_release,
                capacity_type=capacity,
                scaling_config=aws.eks.NodeGroupScalingConfigArgs(desired_size=size, min_size=size, max_size=size),
                update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1, update_strategy=GPU_UPDATE_STRATEGY),
                launch_template=aws.eks.NodeGroupLaunchTemplateArgs(id=gpu_lt.id, version=_version(gpu_lt)),
                labels=dict(args.gpu_labels),
                taints=[aws.eks.NodeGroupTaintArgs(key=args.device_resource, value="true", effect="NO_SCHEDULE")],
                node_repair_config=aws.eks.NodeGroupNodeRepairConfigArgs(
                    enabled=True, max_parallel_nodes_repaired_count=REPAIR_IN_PARALLEL
                ),
                opts=after_roles,
            )

    def _kubernetes_provider(self, name: str, args: EksArgs, system_nodes: aws.eks.NodeGroup) -> k8s.Provider:
        config = pulumi.Output.all(
            self.cluster.name, self.cluster.endpoint, self.cluster.certificate_authority.data
        ).apply(lambda v: kubeconfig(v[0], v[1], v[2], args.compute.region, args.deploy_role_arn))
        # Everything on the cluster waits for the system nodes: a Helm release waits for its pods to be ready
        # (pulumi-kubernetes helm/v3 Release: "the provider waits until all resources are in a ready state"),
        # and they cannot schedule before a node group exists (expert-training review, finding 10).
        return k8s.Provider(
            f"{name}-k8s",
            kubeconfig=config.apply(pulumi.Output.secret),
            enable_server_side_apply=True,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[system_nodes]),
        )

    def _pod_identity(
        self, name: str, args: EksArgs, trainer: tuple[str, str], o: pulumi.ResourceOptions
    ) -> aws.eks.Addon:
        """The trainer's role: read the dataset, write checkpoints and the registry's upload prefix, use the
        cluster key; bound to its ServiceAccount through the Pod Identity agent (EKS user guide, pod-identities)."""
        c = args.compute
        agent = aws.eks.Addon(
            f"{name}-pod-identity-agent",
            cluster_name=self.cluster.name,
            addon_name="eks-pod-identity-agent",
            opts=o,
        )
        role = pod_identity_role(f"{name}-trainer-role", f"{c.cluster} training pods (EKS Pod Identity)", o)
        aws.iam.RolePolicy(
            f"{name}-trainer-access",
            role=role.id,
            policy=pulumi.Output.from_input(c.kms_key_arn).apply(lambda k: node_policy(c, k)),
            opts=o,
        )
        namespace, service_account = trainer
        aws.eks.PodIdentityAssociation(
            f"{name}-trainer-identity",
            cluster_name=self.cluster.name,
            namespace=namespace,
            service_account=service_account,
            role_arn=role.arn,
            opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[agent])),
        )
        return agent

    def _pruner_identity(
        self, name: str, pruner: tuple[str, str, str, str], agent: aws.eks.Addon, o: pulumi.ResourceOptions
    ) -> None:
        """The pruner's own role: list the checkpoint prefix and tag superseded objects, nothing else (it never
        reads, writes or deletes a checkpoint in S3: the bucket's lifecycle expires what it tags)."""
        namespace, service_account, bucket, prefix = pruner
        role = pod_identity_role(f"{name}-pruner-role", f"{name} checkpoint pruner (EKS Pod Identity)", o)
        aws.iam.RolePolicy(
            f"{name}-pruner-access",
            role=role.id,
            policy=iam.document(
                {
                    "Sid": "MarkSupersededCheckpoints",
                    "Effect": "Allow",
                    "Action": ["s3:PutObjectTagging"],
                    "Resource": [f"arn:aws:s3:::{bucket}/{prefix}*"],
                },
                {
                    "Sid": "ListCheckpoints",
                    "Effect": "Allow",
                    "Action": ["s3:ListBucket"],
                    "Resource": [f"arn:aws:s3:::{bucket}"],
                    "Condition": {"StringLike": {"s3:prefix": [f"{prefix}*"]}},
                },
            ),
            opts=o,
        )
        aws.eks.PodIdentityAssociation(
            f"{name}-pruner-identity",
            cluster_name=self.cluster.name,
            namespace=namespace,
            service_account=service_account,
            role_arn=role.arn,
            opts=pulumi.ResourceOptions.merge(o, pulumi.ResourceOptions(depends_on=[agent])),
        )


def _encrypted_root(size_gib: int) -> aws.ec2.LaunchTemplateBlockDeviceMappingArgs:
    """Encrypted with the account's AWS-managed EBS key: a customer key here would have to name the Auto Scaling
    service-linked role, which a fresh account does not have (storage.py, key_policy)."""
    return aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
        device_name=ROOT_DEVICE,
        ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
            volume_size=size_gib,
            volume_type="gp3",
            encrypted="true",
            delete_on_termination="true",
        ),
    )


def _version(template: aws.ec2.LaunchTemplate) -> pulumi.Output[Any]:
    return template.latest_version.apply(str)


__all__ = [
    "CAPACITY_LABEL",
    "IMDS_HOP_LIMIT",
    "TOPOLOGY_LEVELS",
    "TYPE",
    "EksArgs",
    "EksTrainingCluster",
    "gpu_node_groups",
    "kubeconfig",
    "monitoring_agent_config",
]
