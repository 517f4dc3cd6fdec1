"""Alarms that reach someone: a fleet whose account names no `alerts` gets alarms nobody is paged by."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.spec import Account, InferenceSpec, Organization, RegistrySpec
from gpuinfra.validators.base import Failure, Level, rule


@rule(Level.WARNING)
def alarms_page_no_one(spec: InferenceSpec, account: Account | None) -> Iterator[Failure]:
    """The fleet's SLO and no-healthy-replica alarms notify the account's `alerts` (organization file); without
    them the alarms have no actions, and a failing region is seen only by whoever looks (review
    expert-inference-2 M1). `production: true` on the account makes `alerts` required."""
    if account is None or account.alerts is not None:
        return
    yield Failure(
        f"account {spec.account!r} names no alerts: the fleet's service-level alarms would page no one",
        ("account",),
        f"write `alerts: {{email: [oncall@example.com]}}` (or `webhook_url: https://...` under alerts) under "
        f"accounts.{spec.account} in the organization file, or `suppress: [alarms-page-no-one]`",
    )


@rule(Level.WARNING)
def registry_alarms_page_no_one(spec: RegistrySpec, org: Organization, account: Account | None) -> Iterator[Failure]:
    """The registry's replication alarms (an object that failed to replicate, or one past Replication Time
    Control's 15 minutes: a release that holds every canary of a replica region) notify the registry account's
    `alerts`; without them nobody learns why a region's rollout waits (review expert-inference-2 P5, M1)."""
    registry = org.registry
    if account is None or account.alerts is not None or registry is None:
        return
    if not set(registry.replica_regions) - {registry.region}:
        return  # no replica, no replication alarm
    yield Failure(
        f"account {spec.account!r} names no alerts: the replication alarms (failed or later than 15 minutes) "
        "would page no one while a replica region's canaries wait for a release",
        ("account",),
        f"write `alerts: {{email: [oncall@example.com]}}` (or `webhook_url: https://...` under alerts) under "
        f"accounts.{spec.account} in the organization file, or `suppress: [registry-alarms-page-no-one]`",
    )


__all__ = ["alarms_page_no_one", "registry_alarms_page_no_one"]
