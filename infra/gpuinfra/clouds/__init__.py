"""The cloud registry: what differs between the clouds a spec can target (`spec.target.cloud`), looked up by name
instead of branching on a cloud's name in every stage. A new cloud is one package `clouds/<name>/` (subpackages
named for the stage they belong to; its catalog data in clouds/<name>/catalog/data/) plus, outside it, only: one
entry here, its spec package in spec/target.py's SPEC_PACKAGES, its templates (templates/<name>/) and its data's
package-data line in pyproject.toml (tests/clouds/ checks that nothing else names it). The stages ask what the cloud
does, not which cloud it is.

Each entry names the cloud's parts by module path (`Parts`), imported only when a stage asks for one, so a stack
of one cloud never loads another cloud's provider SDK (pulumi-gcp stays unloaded for an AWS stack). Every cloud
names its planner, validators and program; a cloud with quotas (`account_quotas`) names its quota model
(`quotas`), and where it has them its quota codes (`quota_book`) and the pack's reading of a graph's holdings
(`quota_usage`); a cloud that owns resource types (`packages`, `types`) names its preflight, price book and replacement
table, found by a resource's type (`type_part`), and, where its services deliver logs as accounts of their own, whom
(`log_delivery`); `policies` adds a cloud's own rules to the pack's shared ones.

Today: AWS (EC2 quotas per account, region and quota code; one monthly bill per account; its parts in
gpuinfra.clouds.aws), on premises (no quotas or bill: a site's GPU allotment, judged by the quota-site-gpus
policy; it owns no resource type of its own: Kubernetes objects and Slurm on its own machines), and Google Cloud
(quotas per project, region and metric in GPUs; a monthly bill per project; its parts in gpuinfra.clouds.gcp).
AWS and on premises share the workloads' planner, validators and component trees (gpuinfra.plan.workloads,
gpuinfra.validators, gpuinfra.pulumi.components.workloads); AWS's own rules (PCS, EKS) register from its validators
part, after the shared ones."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuinfra.spec.target import Cloud as CloudName


@dataclass(frozen=True)
class Parts:
    """Where a cloud's stage parts live, as `module:attribute` paths."""

    planner: str
    """(spec, org, catalog) -> plan: sizes the workload (the cloud-neutral planner inside, its own catalog)."""
    validators: str
    """A module whose import registers the validator rules of the cloud's specs."""
    program: str
    """(inputs, plan) -> None: the component tree `pulumi up` builds."""
    quotas: str | None = None
    """(demands, catalog, account name, account id, grants per region and code) -> [QuotaNeed]: the cloud's quota
    model, what its quotas count at a stack's full size in the cloud's own units and codes (AWS: EC2 vCPUs per
    quota code, from InstanceDemands and the catalog; Google: GPUs per metric, from GpuDemands and its book).
    None: the cloud grants no quotas (on premises: a site's GPU allotment)."""
    preflight: str | None = None
    """A module with check(resource, graph) -> findings, judges(type) and optionally RULES (documented rules over
    the whole graph) and `table` (the module of its type table, which a type it does not judge is missing from;
    else the part itself): each generated request judged by the cloud's own API definitions. None: the cloud owns
    no resource type."""
    prices: str | None = None
    """(graph, catalog, usage) -> ((resource, base) -> ResourceCost): the cloud's price book for its own resource
    types. None: the cloud owns no resource type."""
    replacements: str | None = None
    """(type, property path, before, after, inputs) -> (effect, why) or None: which changes replace a resource of
    the cloud's types (the review's replace marks). None: the cloud owns no resource type."""
    policies: str | None = None
    """A module whose import registers the cloud's own policy rules with the pack (beside its shared rules)."""
    quota_book: str | None = None
    """() -> the cloud's quota codes per instance family and purchase (`code(family, purchase, scope)`,
    `unknown(family, purchase)`), each with its source: what its quota model counts against, and what `gpuinfra
    catalog <type>` shows for the instances it owns. None: the cloud keeps its quota metrics inside its own catalog
    (Google's book), or grants no quotas."""
    eks_versions: str | None = None
    """() -> the Kubernetes versions the cloud's managed Kubernetes supports and the node image release pinned per
    version, each cited: what the node groups and Karpenter's node class pin. None: the cloud runs no EKS."""
    log_delivery: str | None = None
    """() -> who the cloud's load balancers deliver access logs as, per region (`account(region)`: an account id, or
    None where a service principal delivers), cited: what an access-log bucket's policy grants, and the one
    cross-account grant the pack lets a log bucket carry (separation-cross-account-grants). None: the cloud registers
    none (Google's load balancers log to Cloud Logging in their own project: no bucket, no grant); the pack then lets
    no such grant through (it fails closed: an ordinary cross-account grant)."""
    quota_usage: str | None = None
    """(stack view, catalog) -> QuotaUsage: what a stack's resources of the cloud hold of its quotas at maximum size,
    read from the graph in the demands its quota model counts, and the increases the stack itself requests; the
    pack's shared quota-within-grant judges them (policy/rules/quotas.py). None: the rule has nothing of the
    cloud's to judge."""
    catalog_refresh: str | None = None
    """(recorded dir or None, out dir or None: the cloud's bundled files, account) -> what was read: `gpuinfra catalog
    refresh --cloud <name>`."""


SHARED = Parts(
    planner="gpuinfra.plan.workloads:plan_workload",
    validators="gpuinfra.validators",
    program="gpuinfra.pulumi.components.workloads:build_workload",
    quota_usage=None,  # on premises: no quota to read from a graph; a site's GPU allotment, held by quota-site-gpus
)
"""The workloads AWS and on premises share: training, inference, registry, fine-tuning, data preparation."""


@dataclass(frozen=True)
class Cloud:
    name: CloudName
    account_quotas: bool
    """Quotas are granted per account and region: a stack's needs count with its account's other stacks."""
    account_bill: bool
    """The account is billed monthly: its stacks' maximum monthly costs count against its budget together."""
    sites: bool
    """Capacity is the organization's own: sites with racks, power, cooling and a GPU allotment."""
    managed_slurm: bool
    """A managed Slurm service runs the scheduler (AWS PCS): the plan sizes its cluster class and login node."""
    quota_unit: str = "vCPUs"
    """What the cloud's compute quotas count: EC2 counts vCPUs per instance class, Compute Engine GPUs per family."""
    spot_notice_seconds: int = 120
    """The most warning a reclaimed spot instance gets: EC2's two-minute interruption notice; Compute Engine's
    preemption notice is "best effort and up to 30 seconds" (cloud.google.com/compute/docs/instances/spot)."""
    parts: Parts = SHARED
    accepted_unpriced: tuple[str, ...] = ()
    """Lines of the cloud's types with no citable price yet that the budget policy leaves out of a total by default
    (each a prefix of `<type>: <line>`, as its `accepted_unpriced` config takes them)."""
    packages: tuple[str, ...] = ()
    """The Pulumi packages of the cloud's own resource types (`gcp` of gcp:compute/...): stages that meet a
    resource, not a spec (cost, preflight, the review), find the cloud's part by the type's package."""
    types: tuple[str, ...] = ()
    """Resource types of another package that are the cloud's own (Karpenter's NodePool launches EC2 instances
    through its EC2NodeClass: AWS bills them). Preflight judges such a Kubernetes object by its Kubernetes schema
    before asking the cloud."""

    def part(self, name: str) -> Any:
        """The cloud's part `name`, imported now (a part the cloud does not have is a programming error)."""
        path = getattr(self.parts, name)
        if path is None:
            raise LookupError(f"the {self.name} cloud has no {name} part")
        module, _, attribute = path.partition(":")
        loaded = import_module(module)
        return getattr(loaded, attribute) if attribute else loaded


AWS_PARTS = Parts(
    planner=SHARED.planner,
    validators="gpuinfra.clouds.aws.validators",
    program=SHARED.program,
    quotas="gpuinfra.clouds.aws.plan.quotas:quota_needs",
    quota_book="gpuinfra.clouds.aws.catalog:quota_book",
    eks_versions="gpuinfra.clouds.aws.catalog.eks:eks_versions",
    log_delivery="gpuinfra.clouds.aws.catalog.log_delivery:elb_log_accounts",
    quota_usage="gpuinfra.clouds.aws.policy.quotas:quota_usage",
    preflight="gpuinfra.clouds.aws.preflight",
    prices="gpuinfra.clouds.aws.cost.book:book",
    replacements="gpuinfra.clouds.aws.review.replacements:effect",
    catalog_refresh="gpuinfra.catalog.refresh.summary:run",
)
GCP_PARTS = Parts(
    planner="gpuinfra.clouds.gcp.plan.workloads:plan_workload",
    validators="gpuinfra.clouds.gcp.validators",
    program="gpuinfra.clouds.gcp.pulumi.workloads:build_workload",
    quotas="gpuinfra.clouds.gcp.plan.quotas:gpu_quota_needs",
    quota_usage=None,  # none: gcp-*-quota-short holds the plan to the grant, quota-gcp-*-bounded the graph to the plan
    preflight="gpuinfra.clouds.gcp.preflight.discovery",
    prices="gpuinfra.clouds.gcp.cost.book:book",
    policies="gpuinfra.clouds.gcp.policy",
    replacements="gpuinfra.clouds.gcp.review.replacements:marks",
    catalog_refresh="gpuinfra.clouds.gcp.catalog.refresh:run",
)

CLOUDS: dict[str, Cloud] = {
    "aws": Cloud(
        "aws",
        account_quotas=True,
        account_bill=True,
        sites=False,
        managed_slurm=True,
        packages=("aws", "aws-native"),
        types=("kubernetes:karpenter.sh/v1:NodePool",),
        parts=AWS_PARTS,
    ),
    "onprem": Cloud("onprem", account_quotas=False, account_bill=False, sites=True, managed_slurm=False, parts=SHARED),
    "gcp": Cloud(
        "gcp",
        account_quotas=True,
        account_bill=True,
        sites=False,
        managed_slurm=False,
        quota_unit="GPUs",
        packages=("gcp",),
        spot_notice_seconds=30,
        parts=GCP_PARTS,
        accepted_unpriced=(  # no dated Managed Lustre or Filestore price yet
            "gcp:lustre/instance:Instance: Storage capacity",
            "gcp:filestore/instance:Instance: Storage capacity",
            "gcp:hypercomputecluster/cluster:Cluster: Slurm controller",  # Google's own: no source prices it
        ),
    ),
}


def cloud(name: str) -> Cloud:
    """The registry's entry for `name` (a spec's target cloud); a name without one is a programming error."""
    return CLOUDS[name]


def owner_of(type_token: str) -> Cloud | None:
    """The cloud a resource type is the own of: by its package, or listed by name (`types`); None for a type no
    cloud owns (Kubernetes objects, Helm releases, random and tls resources). Provider resources
    (pulumi:providers:<package>) belong to their package's cloud too."""
    package = type_token.split(":")[2] if type_token.startswith("pulumi:providers:") else type_token.split(":")[0]
    return next((c for c in CLOUDS.values() if package in c.packages or type_token in c.types), None)


def type_part(type_token: str, name: str) -> Any:
    """The part `name` of the cloud that owns a resource type; None when no cloud owns the type (the stage judges
    it by what every cloud shares: Kubernetes' schema, free.yaml, an update in place)."""
    owner = owner_of(type_token)
    return owner.part(name) if owner is not None else None


def cloud_of(spec: object) -> Cloud:
    """The entry of the cloud a workload spec targets (every workload spec has a `target`)."""
    return CLOUDS[spec.target.cloud]  # type: ignore[attr-defined]


__all__ = ["CLOUDS", "SHARED", "Cloud", "Parts", "cloud", "cloud_of", "owner_of", "type_part"]
