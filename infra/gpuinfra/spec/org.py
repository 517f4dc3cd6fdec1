"""The organization file (``stacks/org.yaml``): accounts, their quotas and budgets, the registry."""

from __future__ import annotations

import ipaddress
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field, StringConstraints, model_validator

from gpuinfra.spec.base import (
    PURPOSE_OF_WORKLOAD,
    AccountName,
    BucketName,
    Invalid,
    K8sName,
    Money,
    Purpose,
    Region,
    SpecModel,
    Tags,
)
from gpuinfra.spec.target import cloud_accounts
from gpuinfra.spec.words import relative_key

QuotaCode = Annotated[
    str,
    StringConstraints(pattern=r"^L-[0-9A-F]{8}$"),
    Field(description="Service Quotas code, e.g. L-417A185B (Running On-Demand P instances)."),
]


MAX_QUOTA = 100_000_000
"""Largest quota value read (vCPUs): four orders of magnitude above any EC2 grant, far below what overflows."""


RegistryPrefix = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9/_-]*/$"), AfterValidator(relative_key)]
"""The registry bucket's upload and model prefixes: lower-case folder names ending with '/', no empty segment."""


class Alerts(SpecModel):
    """Where an account's alarms go: an SNS topic per stack, subscribed by these (Amazon SNS Developer Guide,
    "Subscribing to a topic": protocols email and https). Every address must confirm its subscription once."""

    email: list[Annotated[str, StringConstraints(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$", max_length=254)]] = []
    """Addresses that receive each alarm."""
    webhook_url: Annotated[str, StringConstraints(pattern=r"^https://[^\s]+$", max_length=2048)] | None = None
    """An HTTPS endpoint (a chat webhook) that receives each alarm as an SNS notification."""

    @model_validator(mode="after")
    def _somewhere(self) -> Alerts:
        if not self.email and self.webhook_url is None:
            raise Invalid("alerts names no one", ("email",), "give at least one email address or a webhook_url")
        return self


class Account(SpecModel):
    """An AWS account gpuinfra deploys into, by assuming `role_arn`."""

    id: Annotated[str, StringConstraints(pattern=r"^[0-9]{12}$")]
    """The 12-digit AWS account id; providers pin it with allowed_account_ids."""
    role_arn: Annotated[str, StringConstraints(pattern=r"^arn:aws:iam::[0-9]{12}:role/[A-Za-z0-9_+=,.@/-]+$")]
    """IAM role the deployment assumes in this account."""
    purpose: Purpose
    """What the account is for. Training and inference never share an account."""
    monthly_budget_usd: Annotated[Money, Field(ge=0)]
    """Monthly spend this account may reach; the budget policy compares each stack's estimate to it."""
    quotas: dict[Region, dict[QuotaCode, Annotated[int, Field(ge=0, le=MAX_QUOTA)]]] = {}
    """Granted EC2 quotas in vCPUs, per region and quota code."""
    allow_accelerators: bool = False
    """A dataprep account may launch GPU instances (a GPU dedup stage); training and inference accounts always may."""
    request_quota_increases: bool = False
    """Emit aws.servicequotas.ServiceQuota resources asking for what the stacks need."""
    production: bool = False
    """Runs production workloads: its stacks' alarms must reach someone, so `alerts` is required."""
    alerts: Alerts | None = None
    """Where the alarms of this account's stacks go (required for a production account)."""

    def serves(self, workload: str) -> bool:
        """An account serves exactly its purpose, never two (the validator and the separation policies ask this)."""
        return self.purpose == PURPOSE_OF_WORKLOAD.get(workload, workload)

    @model_validator(mode="after")
    def _role_in_account(self) -> Account:
        role_account = self.role_arn.split(":")[4]
        if role_account != self.id:
            raise Invalid(
                f"role_arn is in account {role_account} but id is {self.id}; "
                "the deployment role must live in the account it deploys to",
                ("role_arn",),
                f"use a role of account {self.id}, or correct id",
            )
        if self.production and self.alerts is None:
            raise Invalid(
                "a production account without alerts: its alarms would reach no one",
                ("alerts",),
                "add alerts: {email: [oncall@example.com]} (or webhook_url: https://...), or set production: false",
            )
        return self


if TYPE_CHECKING:
    AnyAccount = Account  # every cloud's entry has the attributes the stages read (id, purpose, budget, quotas)
else:
    AnyAccount = cloud_accounts(Account)
    """An AWS account, or the organization entry of another cloud (the spec's cloud registry, spec/target.py)."""


class Registry(SpecModel):
    """Where trained weights go and where inference regions read them from."""

    account: AccountName
    """Account (purpose: registry) that owns the weights bucket."""
    bucket: BucketName
    """Name of the primary weights bucket; replicas are named `<bucket>-<region>`."""
    region: Region
    """Home region of the primary bucket."""
    replica_regions: list[Region] = []
    """Regions that receive a replica, so cold starts read weights locally."""
    upload_prefix: RegistryPrefix = "uploads/"
    """Prefix training accounts may write to."""
    model_prefix: RegistryPrefix = "models/"
    """Prefix of released models; inference accounts may read it and it is what replicates."""
    promoters: list[
        Annotated[str, StringConstraints(pattern=r"^arn:aws:iam::[0-9]{12}:(root|role/[A-Za-z0-9_+=,.@/-]+)$")]
    ] = []
    """Who may assume the registry's promote role, which copies a verified upload to the model prefix (IAM role
    ARNs, or an account's root to leave the choice to that account's IAM); default: the training accounts."""

    def replica_bucket(self, region: str) -> str:
        """The bucket an inference region reads: the primary in its home region, else the replica."""
        return self.bucket if region == self.region else f"{self.bucket}-{region}"


class Ownership(SpecModel):
    """What owning the site's nodes costs, to compare with renting the same cluster on AWS."""

    capex_per_node_usd: Annotated[Money, Field(gt=0)]
    """Purchase price of one node with its share of network and storage (your quote)."""
    life_years: Annotated[float, Field(gt=0, le=15)]
    """Straight-line amortization period of the capital cost."""
    power_usd_per_kwh: Annotated[Money, Field(ge=0)]
    """Electricity price at the site, applied to facility kW (IT x PUE)."""
    colocation_usd_per_kw_month: Annotated[Money, Field(ge=0)] = Decimal(0)
    """Colocation space-and-power fee per contracted IT kW a month; 0 in one's own building."""
    support_usd_per_node_year: Annotated[Money, Field(ge=0)] = Decimal(0)
    """Hardware and software support contracts per node a year."""
    power_draw_fraction: Annotated[float, Field(gt=0, le=1)] = 1.0
    """Average draw as a share of nameplate power; 1.0 (nameplate) unless measured."""
    aws_equivalent: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.-]*$")] | None = None
    """The EC2 type that is the same node on AWS (p5.48xlarge for a DGX H100), to price the rented cluster."""
    aws_region: Region = "us-east-1"
    """Region the rented comparison is priced in."""


ReleaseVersion = Annotated[str, StringConstraints(pattern=r"^v?[0-9]+\.[0-9]+\.[0-9]+$")]
"""A component's release as its project tags it: 0.19.2 or v1.5.2."""


def release_tuple(version: str) -> tuple[int, ...]:
    """A release as numbers, for comparison (v1.5.2 -> (1, 5, 2))."""
    return tuple(int(part) for part in version.removeprefix("v").split("."))


class KueueOnSite(SpecModel):
    """The site's Kueue: one cluster-wide controller and Configuration, shared by every team's queues."""

    version: ReleaseVersion
    """The release the site runs (at least 0.19: the stacks create kueue.x-k8s.io/v1beta2 objects)."""
    frameworks: list[Annotated[str, StringConstraints(max_length=100)]]
    """Its Configuration's integrations.frameworks (a JobSet is admitted only with jobset.x-k8s.io/jobset)."""


class SiteComponent(SpecModel):
    """A cluster-wide component the site installs once (JobSet, the DCGM exporter)."""

    version: ReleaseVersion
    """The release the site runs (JobSet: at least 0.12; the DCGM exporter: its chart's version, e.g. 4.8.2)."""


class RdmaPluginOnSite(SpecModel):
    """The site's k8s-rdma-shared-dev-plugin: which HCAs it hands out is the site's configuration."""

    version: ReleaseVersion
    """The release the site runs (at least v1.5.2)."""
    resource: Annotated[str, StringConstraints(pattern=r"^[a-z0-9.-]+/[a-z0-9_.-]+$")] = "rdma/ib"
    """The extended resource it advertises the compute rails as (resourcePrefix/resourceName)."""


class SiteComponents(SpecModel):
    """Cluster-wide components the site installs once for every team (its own Helm releases): training stacks
    check they are declared at versions the stack's objects need, and never install them."""

    kueue: KueueOnSite
    """Kueue: its release and the integrations its Configuration enables."""
    jobset: SiteComponent
    """The JobSet controller."""
    rdma_shared_device_plugin: RdmaPluginOnSite | None = None
    """Required for InfiniBand clusters: the RDMA device plugin on the GPU nodes."""
    dcgm_exporter: SiteComponent | None = None
    """Required: NVIDIA's DCGM exporter on the GPU nodes (its own chart, or the GPU Operator's dcgmExporter), the
    Prometheus metrics of every GPU (utilization, memory, power, XID errors, NVLink) a run is watched by."""
    node_problem_conditions: list[Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9]{0,62}$")]] = []
    """Node condition types the site's node-problem-detector plugins set True on an unhealthy GPU node (DCGM health
    watches, NHC): the stacks' GPU remediation cordons such a node (training/remediator.py)."""


class NodeAllocatable(SpecModel):
    """What the kubelet of the site's smallest GPU node offers pods: its `status.allocatable` (capacity less the
    site's kube-reserved, system-reserved and eviction threshold), e.g. from
    `kubectl get node <gpu node> -o jsonpath='{.status.allocatable}'`."""

    cpu_millicores: Annotated[int, Field(gt=0)]
    """allocatable cpu in millicores (224 -> 224000, 223500m -> 223500)."""
    memory_mib: Annotated[int, Field(gt=0)]
    """allocatable memory in MiB (Ki / 1024)."""


class OnPremSite(SpecModel):
    """A site with its own GPU racks, reached through a Kubernetes cluster."""

    gpu_allotment: Annotated[int, Field(ge=0, le=10_000_000)]
    """GPUs the organization grants this site's training queues in total."""
    ownership: Ownership | None = None
    """Capital and running costs of the site's nodes, for owning-versus-renting."""
    components: SiteComponents | None = None
    """Kueue, JobSet and device plugins the site runs (docs/training.md, "Site prerequisites")."""
    node_allocatable: NodeAllocatable | None = None
    """The GPU nodes' allocatable resources: training pods are sized from it; without it, from the EKS AMI's
    kubelet formula (a site whose kubelet reserves more leaves the pods unschedulable)."""


def _ipv4_network(cidr: str) -> str:
    try:
        ipaddress.IPv4Network(cidr)
    except ValueError:
        raise ValueError(f"{cidr} is not an IPv4 network (a.b.c.d/n with the host bits zero)") from None
    return cidr


SubnetCidr = Annotated[str, StringConstraints(max_length=18), AfterValidator(_ipv4_network)]


class LoadBalancerControllerOnCluster(SpecModel):
    """The cluster's AWS Load Balancer Controller, which turns the fleet's Service into an NLB."""

    version: ReleaseVersion
    """The release the cluster runs (at least v2.3.0: the first to document the `aws-load-balancer-attributes`
    annotation the access logs use)."""
    subnet_cidrs: Annotated[list[SubnetCidr], Field(min_length=1)]
    """The subnets the controller places NLBs in (tagged kubernetes.io/role/internal-elb or /elb): with ip
    targets the NLB does not preserve client IPs, so pods see traffic and health checks from these addresses and
    the NetworkPolicy admits only them."""


class PrometheusOperatorOnCluster(SpecModel):
    """The cluster's Prometheus Operator (kube-prometheus-stack) that scrapes the fleet's PodMonitor."""

    version: ReleaseVersion
    """The operator's release (at least v0.93.0, whose PodMonitor CRD the stack's object is checked against)."""
    release: K8sName
    """The label value its Prometheus selects PodMonitors by (podMonitorSelector `release: <this>`)."""
    namespace: K8sName = "monitoring"
    """Where Prometheus runs: the NetworkPolicy admits its scrapes from this namespace."""


class WorkloadIdentity(SpecModel):
    """How pods of the cluster assume IAM roles: the fleet's role must trust this."""

    kind: Literal["irsa", "pod_identity"]
    """irsa: the role trusts the cluster's OIDC provider for system:serviceaccount:<namespace>:<fleet>;
    pod_identity: the role trusts pods.eks.amazonaws.com and an EKS Pod Identity association names it."""
    oidc_provider_arn: (
        Annotated[str, StringConstraints(pattern=r"^arn:aws:iam::[0-9]{12}:oidc-provider/[!-~]+$")] | None
    ) = None
    """irsa: the cluster's IAM OIDC provider (an IAM role can trust only a provider of its own account)."""
    eks_cluster_name: Annotated[str, StringConstraints(pattern=r"^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$")] | None = None
    """pod_identity: the EKS cluster's name, which the stack's Pod Identity association names."""


class KarpenterOnCluster(SpecModel):
    """The cluster's Karpenter, which launches GPU nodes for pods the existing nodes cannot hold."""

    version: ReleaseVersion
    """The release the cluster runs (at least 1.14.1: the karpenter.sh/v1 NodePool and karpenter.k8s.aws/v1
    EC2NodeClass CRDs the stack's objects are checked against)."""
    node_role: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_+=,.@-]{1,64}$")]
    """The IAM role name of the nodes Karpenter launches (its EC2NodeClass `role`)."""
    discovery_tag: K8sName
    """The value of the `karpenter.sh/discovery` tag on the cluster's node subnets and security groups."""


class ServingClusterComponents(SpecModel):
    """Cluster-wide components an inference cluster runs for every fleet (the cluster's own installs, like an
    on-premises site's components): serving stacks check they are declared at versions the stack's objects need,
    and never install them (docs/inference.md, "Cluster prerequisites")."""

    aws_load_balancer_controller: LoadBalancerControllerOnCluster
    prometheus_operator: PrometheusOperatorOnCluster
    keda: SiteComponent | None = None
    """Required by fleets with autoscaler keda (at least 2.17.2: the keda.sh/v1alpha1 ScaledObject CRD checked)."""
    gpu_feature_discovery: SiteComponent | None = None
    """The NVIDIA device plugin chart with gfd.enabled (at least 0.17.4): labels nodes nvidia.com/gpu.product."""
    karpenter: KarpenterOnCluster | None = None
    """Node autoscaling: without it, pods beyond the existing GPU nodes stay Pending."""
    workload_identity: WorkloadIdentity | None = None
    """Required when a fleet names a service_account_role_arn."""
    secrets: list[Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]+/[a-z0-9.-]+$")]] = []
    """Secrets the cluster provides, as namespace/name (e.g. synced from Secrets Manager): a fleet's API-key
    Secret must be one."""


class KubernetesCluster(SpecModel):
    """A Kubernetes cluster stacks may deploy into, registered with what it is for: a stack reaches it only
    through the kubeconfig key named here, and only a stack of its purpose may."""

    purpose: Literal["training", "inference", "dataprep"]
    """What the cluster is for: only stacks of this purpose may reach it (the separation policies)."""
    kubeconfig_key: Annotated[str, StringConstraints(pattern=r"^[a-z][a-zA-Z0-9:_-]*$")]
    """The Pulumi config key that holds this cluster's kubeconfig (a secret) in the stacks that use it."""
    account: AccountName | None = None
    """The AWS account the cluster runs in (EKS); None on premises."""
    server: Annotated[str, StringConstraints(pattern=r"^https://[!-~]+$")] | None = None
    """The API server's URL: a kubeconfig the policy pack can read must point here."""
    ca_sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-fA-F]{2}(:?[0-9a-fA-F]{2}){31}$")] | None = None
    """SHA-256 fingerprint of the cluster's CA certificate (`openssl x509 -noout -fingerprint -sha256` of the
    kubeconfig's certificate-authority-data): identifies the cluster whatever URL a kubeconfig reaches it by."""
    components: ServingClusterComponents | None = None
    """Inference clusters: the controllers, operators and Secrets the serving stacks rely on."""


class Organization(SpecModel):
    """The organization file: accounts with their purpose, quotas and budget."""

    model_config = ConfigDict(defer_build=True)  # built at first use: its accounts' union (spec/target.py) then
    # holds every cloud's account model whichever module was imported first

    name: Annotated[str, StringConstraints(max_length=32, pattern=r"^[a-z][a-z0-9-]*$")]
    """Short organization name, used as a prefix and in tags."""
    accounts: Annotated[dict[AccountName, AnyAccount], Field(min_length=1)]
    """Every account gpuinfra may deploy into, by name: id, role, purpose, budget, quotas. An entry naming
    `cloud:` is that cloud's (its model named by spec/target.py); without it, an AWS account."""
    registry: Registry | None = None
    default_tags: Tags = {}
    """Tags every provider applies to every resource, besides gpuinfra's own."""
    onprem_sites: dict[AccountName, OnPremSite] = {}
    """On-premises sites, by name; training specs with provider: onprem name one."""
    clusters: dict[AccountName, KubernetesCluster] = {}
    """Kubernetes clusters, by name, with their purpose: a stack may use only its own purpose's."""

    @model_validator(mode="after")
    def _distinct_ids(self) -> Organization:
        seen: dict[str, str] = {}
        for name, account in self.accounts.items():
            if account.id in seen:
                raise Invalid(
                    f"accounts {seen[account.id]!r} and {name!r} share id {account.id}",
                    ("accounts", name, "id"),
                    "each purpose needs its own account: give each its own id",
                )
            seen[account.id] = name
        if self.registry is not None:
            owner = self.accounts.get(self.registry.account)
            if owner is None:
                raise Invalid(
                    f"the registry's account {self.registry.account!r} is not one of the accounts "
                    f"({', '.join(sorted(self.accounts))})",
                    ("registry", "account"),
                    "add the account under accounts, or name one of them",
                )
            if owner.purpose != "registry":
                raise Invalid(
                    f"the registry's account {self.registry.account!r} has purpose {owner.purpose!r}",
                    ("registry", "account"),
                    "the weights bucket lives in an account of purpose registry: name one",
                )
        for name, cluster in self.clusters.items():
            home = self.accounts.get(cluster.account) if cluster.account else None
            if cluster.account and (home is None or not home.serves(cluster.purpose)):
                raise Invalid(
                    f"cluster {name!r} ({cluster.purpose}) runs in account {cluster.account!r}, which is not "
                    f"{'listed' if home is None else 'an account of that purpose'}",
                    ("clusters", name, "account"),
                    "a cluster runs in an account of its own purpose",
                )
        return self


__all__ = [
    "PURPOSE_OF_WORKLOAD",
    "Account",
    "Alerts",
    "KarpenterOnCluster",
    "KubernetesCluster",
    "KueueOnSite",
    "LoadBalancerControllerOnCluster",
    "NodeAllocatable",
    "OnPremSite",
    "Organization",
    "Ownership",
    "PrometheusOperatorOnCluster",
    "Purpose",
    "QuotaCode",
    "RdmaPluginOnSite",
    "Registry",
    "ServingClusterComponents",
    "SiteComponent",
    "SiteComponents",
    "WorkloadIdentity",
    "release_tuple",
]
