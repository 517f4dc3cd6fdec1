"""How old a price may be before a report warns: the limit is configurable (GPUINFRA_PRICE_MAX_AGE_DAYS, default 90
days), and "today" follows SOURCE_DATE_EPOCH when it is set (the reproducible-builds convention,
https://reproducible-builds.org/specs/source-date-epoch/), so the same input gives the same report."""

from __future__ import annotations

import datetime
import os

from gpuinfra.errors import InputError
from gpuinfra.store.keys import PRICE_MAX_AGE_ENV as MAX_AGE_ENV  # one name: the store keys its clock by it

DEFAULT_MAX_AGE_DAYS = 90
"""A quarter: AWS changes on-demand prices rarely, but new types, new Regions and spot shifts arrive monthly."""
RULE = "stale-prices"
HINT = f"run `gpuinfra catalog refresh` (docs/catalog.md), or set {MAX_AGE_ENV} to accept older prices"


def today() -> datetime.date:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        try:
            return datetime.datetime.fromtimestamp(int(epoch), datetime.UTC).date()
        except ValueError as exc:
            raise InputError.single(f"SOURCE_DATE_EPOCH={epoch!r} is not a number of seconds") from exc
    return datetime.datetime.now(datetime.UTC).date()


def max_age_days() -> int:
    value = os.environ.get(MAX_AGE_ENV)
    if value is None or value == "":
        return DEFAULT_MAX_AGE_DAYS
    if not value.isdigit():
        raise InputError.single(f"{MAX_AGE_ENV}={value!r} is not a whole number of days", hint="e.g. 90")
    return int(value)


def stale_message(
    oldest: datetime.date | None, now: datetime.date | None = None, limit: int | None = None
) -> str | None:
    """A warning when the oldest price a report used is older than the limit; None when within it or unknown."""
    if oldest is None:
        return None
    now = now or today()
    limit = max_age_days() if limit is None else limit
    age = (now - oldest).days
    if age <= limit:
        return None
    return f"the oldest price used is as of {oldest} ({age} days old, limit {limit} days: {MAX_AGE_ENV})"


__all__ = ["DEFAULT_MAX_AGE_DAYS", "HINT", "MAX_AGE_ENV", "RULE", "max_age_days", "stale_message", "today"]
