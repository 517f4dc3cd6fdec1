"""A Google Cloud project as an organization entry: Google's unit of separation, quota and billing, as an AWS
account is AWS's. Its quotas are written in Google's own units and names: GPUs per family per region
(`NVIDIA_L4_GPUS`), a separate pool for Spot VMs (`PREEMPTIBLE_NVIDIA_L4_GPUS`) and one cap over every region
(`GPUS_ALL_REGIONS`, under `global`), as Compute Engine's regions.get and projects.get report them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from gpuinfra.spec.base import PURPOSE_OF_WORKLOAD, Money, Purpose, SpecModel

PROJECT_ID = r"[a-z][a-z0-9-]{4,28}[a-z0-9]"
"""A project ID (6 to 30 lower-case letters, digits and hyphens, starting with a letter, not ending with a hyphen):
one pattern for the spec's fields and images and the pack's reading of resource paths and service accounts."""
ProjectId = Annotated[str, StringConstraints(pattern=f"^{PROJECT_ID}$")]
REGION = r"[a-z]+-[a-z]+[0-9]{1,2}"
"""A Google Cloud region's name (us-central1, europe-west4): its zones and the regional quota scopes build on it."""

GcpRegion = Annotated[
    str,
    StringConstraints(pattern=f"^{REGION}$"),
    Field(description="Google Cloud region, e.g. us-central1, europe-west4."),
]
GcpZone = Annotated[
    str,
    StringConstraints(pattern=f"^{REGION}-[a-z]$"),
    Field(description="Google Cloud zone: the region and a letter, e.g. us-central1-a."),
]
QuotaScope = Annotated[
    str,
    StringConstraints(pattern=f"^(global|{REGION})$"),
    Field(description="A region (regional quotas) or `global` (project-wide quotas such as GPUS_ALL_REGIONS)."),
]
QuotaMetric = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Z][A-Z0-9_]{1,62}$"),
    Field(description="A Compute Engine quota metric as regions.get names it, e.g. NVIDIA_L4_GPUS."),
]
GcpLabels = dict[
    Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_-]{0,62}$")],
    Annotated[str, StringConstraints(pattern=r"^[a-z0-9_-]{0,63}$")],
]
"""Google resource labels: lower-case keys of 1 to 63 characters starting with a letter, values of up to 63 (every
Google workload spec's `labels`)."""
MAX_GPU_QUOTA = 1_000_000
"""Largest GPU quota value read: far above any grant, far below what overflows."""


class GcpProject(SpecModel):
    """A Google Cloud project gpuinfra deploys into (an `accounts` entry with `cloud: gcp`)."""

    cloud: Literal["gcp"]
    """Marks the entry as a Google Cloud project (entries without `cloud` are AWS accounts)."""
    id: ProjectId
    """The project ID (6 to 30 lower-case letters, digits and hyphens, starting with a letter): every provider and
    resource of the stack is pinned to it."""
    purpose: Purpose
    """What the project is for. Training and inference never share a project."""
    monthly_budget_usd: Annotated[Money, Field(ge=0)]
    """Monthly spend this project may reach: the budget policy compares its stacks' maximum to it, and the
    project's Cloud Billing budget alerts at it."""
    billing_account: Annotated[str, StringConstraints(pattern=r"^[0-9A-F]{6}-[0-9A-F]{6}-[0-9A-F]{6}$")]
    """The Cloud Billing account the project is billed to (XXXXXX-XXXXXX-XXXXXX): where its budget lives."""
    quotas: dict[QuotaScope, dict[QuotaMetric, Annotated[int, Field(ge=0, le=MAX_GPU_QUOTA)]]] = {}
    """Granted Compute Engine quotas, per region (or `global`) and metric, in the metric's unit (GPUs)."""
    request_quota_increases: bool = False
    """Emit cloudquota.SQuotaPreference resources asking Google for what the project's stacks need."""
    production: bool = False
    """Runs production workloads."""
    network_host_project: ProjectId | None = None
    """A Shared VPC host project whose networks this project's stacks attach to (None: the stack's own VPC): the
    host must be a project of the same purpose (separation-gcp-edges)."""

    def serves(self, workload: str) -> bool:
        """A project serves exactly its purpose, never two (the validator and the separation policies ask this)."""
        return self.purpose == PURPOSE_OF_WORKLOAD.get(workload, workload)


__all__ = [
    "MAX_GPU_QUOTA",
    "PROJECT_ID",
    "REGION",
    "GcpLabels",
    "GcpProject",
    "GcpRegion",
    "GcpZone",
    "ProjectId",
    "QuotaMetric",
    "QuotaScope",
]
