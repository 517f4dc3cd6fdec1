"""The model registry spec (``gpuinfra:registry``): the bucket that carries weights to inference."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from gpuinfra.spec.base import AccountName, Name, RuleId, SpecModel, Tags
from gpuinfra.spec.target import Target


class RegistrySpec(SpecModel):
    """The registry stack. Bucket, regions and prefixes come from the organization's registry entry."""

    @property
    def target(self) -> Target:
        """The registry's regions are the organization's (registry.regions), not the stack's."""
        return Target("aws", self.account)

    name: Name
    account: AccountName
    """Account (purpose: registry); must be the organization registry's account."""
    noncurrent_version_expiration_days: Annotated[int, Field(ge=1, le=3650)] = 90
    """How long overwritten or deleted weight versions are kept."""
    model_lock_days: Annotated[int, Field(ge=1, le=3650)] = 90
    """S3 Object Lock, governance mode: days every released model version (the model prefix) cannot be deleted or
    overwritten except by a principal with s3:BypassGovernanceRetention. Default 90, the default of
    noncurrent_version_expiration_days, so a replaced release is kept, and undeletable, for the same window in
    which lifecycle keeps old versions; longer keeps noncurrent versions (and their storage) that much longer."""
    kms_deletion_window_days: Annotated[int, Field(ge=7, le=30)] = 30
    """Days a deleted KMS key waits before AWS deletes it (7 to 30: KMS ScheduleKeyDeletion's PendingWindowInDays)."""
    tags: Tags = {}
    suppress: list[RuleId] = []
    """Rule ids of warnings to silence for this stack."""
    protect_data: bool = True
    """Pulumi `protect` and `retainOnDelete` on the model buckets and their KMS keys, so a replacement or deletion
    stops `pulumi up` instead of destroying weights. Set false only for scratch stacks."""


__all__ = ["RegistrySpec"]
