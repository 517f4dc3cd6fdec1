"""The registry plan: primary and replica buckets, and who may write and read."""

from __future__ import annotations

from typing import Literal

from gpuinfra.plan.memory import Plain
from gpuinfra.spec import Organization, RegistrySpec


class Grant(Plain):
    account: str
    account_id: str
    prefix: str


class ReplicaBucket(Plain):
    region: str
    bucket: str


class RegistryPlan(Plain):
    workload: Literal["registry"] = "registry"
    bucket: str
    region: str
    replicas: list[ReplicaBucket]
    writers: list[Grant]
    """Training accounts: write to the upload prefix."""
    readers: list[Grant]
    """Inference accounts: read the model prefix."""
    base_readers: list[Grant] = []
    """Training accounts: read the model prefix too, for a fine-tuning run's base model (plan/finetune.py)."""


def plan_registry(spec: RegistrySpec, org: Organization) -> RegistryPlan:
    registry = org.registry
    assert registry is not None, "references are resolved before planning"
    accounts = sorted(org.accounts.items())
    return RegistryPlan(
        bucket=registry.bucket,
        region=registry.region,
        replicas=[
            ReplicaBucket(region=r, bucket=registry.replica_bucket(r))
            for r in sorted(set(registry.replica_regions) - {registry.region})
        ],
        writers=[
            Grant(account=n, account_id=a.id, prefix=registry.upload_prefix)
            for n, a in accounts
            if a.purpose == "training"
        ],
        readers=[
            Grant(account=n, account_id=a.id, prefix=registry.model_prefix)
            for n, a in accounts
            if a.purpose == "inference"
        ],
        base_readers=[
            Grant(account=n, account_id=a.id, prefix=registry.model_prefix)
            for n, a in accounts
            if a.purpose == "training"
        ],
    )


__all__ = ["Grant", "RegistryPlan", "ReplicaBucket", "plan_registry"]
