"""The registry plan: primary and replica buckets, and who may write and read."""

from __future__ import annotations

from typing import Literal

from gpuinfra.plan.memory import Plain
from gpuinfra.spec import Account, Organization, RegistrySpec

PROMOTE_ROLE_SUFFIX = "-promote"
"""The registry stack's promote role is `<stack name>-promote` (components/registry): the one role of the registry
that training accounts may assume (policy separation-cross-account-grants)."""


def promote_role(name: str) -> str:
    return f"{name}{PROMOTE_ROLE_SUFFIX}"


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
    promoters: list[str] = []
    """IAM principals that may assume the promote role (the organization's registry.promoters, else the training
    accounts' roots)."""
    upload_prefix: str = "uploads/"
    model_prefix: str = "models/"
    lock_days: int = 90
    """Object Lock retention (governance mode) of every released version."""


def plan_registry(spec: RegistrySpec, org: Organization) -> RegistryPlan:
    registry = org.registry
    assert registry is not None, "references are resolved before planning"
    # IAM grants name AWS accounts: another cloud's account entry has no IAM principal in this bucket
    accounts = sorted((name, a) for name, a in org.accounts.items() if isinstance(a, Account))
    training_roots = [f"arn:aws:iam::{a.id}:root" for _, a in accounts if a.purpose == "training"]
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
        promoters=sorted(registry.promoters) or training_roots,
        upload_prefix=registry.upload_prefix,
        model_prefix=registry.model_prefix,
        lock_days=spec.model_lock_days,
    )


__all__ = ["PROMOTE_ROLE_SUFFIX", "Grant", "RegistryPlan", "ReplicaBucket", "plan_registry", "promote_role"]
