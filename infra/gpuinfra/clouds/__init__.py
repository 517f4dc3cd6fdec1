"""The cloud registry: what differs between the clouds a spec can target (`spec.target.cloud`), looked up by name
instead of branching on a cloud's name in every stage. A new cloud is one entry here (and its catalog data); the
stages ask what the cloud does, not which cloud it is.

Today: AWS (EC2 quotas per account, region and quota code; one monthly bill per account) and on premises (no
quotas or bill: a site's GPU allotment, judged by the quota-site-gpus policy)."""

from __future__ import annotations

from dataclasses import dataclass

from gpuinfra.spec.target import Cloud as CloudName


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


CLOUDS: dict[str, Cloud] = {
    "aws": Cloud("aws", account_quotas=True, account_bill=True, sites=False, managed_slurm=True),
    "onprem": Cloud("onprem", account_quotas=False, account_bill=False, sites=True, managed_slurm=False),
}


def cloud(name: str) -> Cloud:
    """The registry's entry for `name` (a spec's target cloud); a name without one is a programming error."""
    return CLOUDS[name]


__all__ = ["CLOUDS", "Cloud", "cloud"]
