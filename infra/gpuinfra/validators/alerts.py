"""Alarms that reach someone: a fleet whose account names no `alerts` gets alarms nobody is paged by."""

from __future__ import annotations

from collections.abc import Iterator

from gpuinfra.spec import Account, InferenceSpec
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


__all__ = ["alarms_page_no_one"]
