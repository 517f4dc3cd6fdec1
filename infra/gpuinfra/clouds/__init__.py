"""The cloud registry: what differs between the clouds a spec can target (`spec.target.cloud`), looked up by name
instead of branching on a cloud's name in every stage. A new cloud is one entry here (and its spec package in
spec/target.py's SPEC_PACKAGES, and its catalog data); the stages ask what the cloud does, not which cloud it is.

Each entry names the cloud's own parts by module path (`Parts`), imported only when a stage asks for one, so a
stack of one cloud never loads another cloud's provider SDK (pulumi-gcp stays unloaded for an AWS stack). A part
that is None is the built-in pipeline's (AWS and on premises share it today).

Today: AWS (EC2 quotas per account, region and quota code; one monthly bill per account), on premises (no quotas
or bill: a site's GPU allotment, judged by the quota-site-gpus policy), and Google Cloud (quotas per project,
region and metric in GPUs; a monthly bill per project; its parts in gpuinfra.clouds.gcp)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuinfra.spec.target import Cloud as CloudName


@dataclass(frozen=True)
class Parts:
    """Where a cloud's own stage parts live, as `module:attribute` paths (None: the built-in pipeline's)."""

    planner: str | Mapping[str, str] | None = None
    """(spec, org, catalog) -> plan: sizes the workload (the cloud-neutral planner inside, its own catalog); one
    path per workload (`training`, `inference`) when the cloud has several."""
    validators: str | None = None
    """A module whose import registers the cloud's validator rules."""
    program: str | Mapping[str, str] | None = None
    """(inputs, plan) -> None: the component tree `pulumi up` builds (one path per workload, as `planner`)."""
    preflight: str | None = None
    """A module with check(resource, graph) -> findings and judges(type): each generated request judged by the
    cloud's own API definitions."""
    prices: str | None = None
    """(resource, graph, base) -> ResourceCost: the cloud's price book for its own resource types."""
    policies: str | None = None
    """A module whose import registers the cloud's policy rules with the pack."""
    replacements: str | None = None
    """(type, property path) -> (effect, why) or None: which changes replace a resource of the cloud's types (the
    review's replace marks, beside catalog/data/replacements.yaml)."""


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
    parts: Parts = field(default_factory=Parts)
    accepted_unpriced: tuple[str, ...] = ()
    """Lines of the cloud's types with no citable price yet that the budget policy leaves out of a total by default
    (each a prefix of `<type>: <line>`, as its `accepted_unpriced` config takes them)."""
    packages: tuple[str, ...] = ()
    """The Pulumi packages of the cloud's own resource types (`gcp` of gcp:compute/...): stages that meet a
    resource, not a spec (cost, preflight, the review), find the cloud's part by the type's package."""

    def part(self, name: str, workload: str | None = None) -> Any:
        """The cloud's own part `name` (imported now), or None when the built-in pipeline serves it; a part given
        per workload is the one of `workload` (None when the cloud has none for it)."""
        path = getattr(self.parts, name)
        if isinstance(path, Mapping):
            path = path.get(workload or "")
        if path is None:
            return None
        module, _, attribute = path.partition(":")
        loaded = import_module(module)
        return getattr(loaded, attribute) if attribute else loaded


GCP_PARTS = Parts(
    planner={
        "inference": "gpuinfra.clouds.gcp.plan.fleet:plan_fleet",
        "training": "gpuinfra.clouds.gcp.plan.training:plan_gcp_training",
    },
    validators="gpuinfra.clouds.gcp.validators",
    program={
        "inference": "gpuinfra.clouds.gcp.pulumi.stack:build_fleet",
        "training": "gpuinfra.clouds.gcp.pulumi.training.stack:build_gcp_training",
    },
    preflight="gpuinfra.clouds.gcp.preflight.discovery",
    prices="gpuinfra.clouds.gcp.cost.book:price",
    policies="gpuinfra.clouds.gcp.policy",
    replacements="gpuinfra.clouds.gcp.review.replacements:effect",
)

CLOUDS: dict[str, Cloud] = {
    "aws": Cloud("aws", account_quotas=True, account_bill=True, sites=False, managed_slurm=True),
    "onprem": Cloud("onprem", account_quotas=False, account_bill=False, sites=True, managed_slurm=False),
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
        accepted_unpriced=("gcp:lustre/instance:Instance: Storage capacity",),  # no Managed Lustre price read yet
    ),
}


def cloud(name: str) -> Cloud:
    """The registry's entry for `name` (a spec's target cloud); a name without one is a programming error."""
    return CLOUDS[name]


def type_part(type_token: str, name: str) -> Any:
    """The part `name` of the cloud whose package a resource type belongs to (None: the built-in pipeline's).
    Provider resources (pulumi:providers:<package>) belong to their package's cloud too."""
    package = type_token.split(":")[2] if type_token.startswith("pulumi:providers:") else type_token.split(":")[0]
    owner = next((c for c in CLOUDS.values() if package in c.packages), None)
    return owner.part(name) if owner is not None else None


def cloud_of(spec: object) -> Cloud:
    """The entry of the cloud a workload spec targets (every workload spec has a `target`)."""
    return CLOUDS[spec.target.cloud]  # type: ignore[attr-defined]


__all__ = ["CLOUDS", "Cloud", "Parts", "cloud", "cloud_of", "type_part"]
