"""Staleness: every report states the oldest price date it used, and a price older than the limit (default 90 days,
GPUINFRA_PRICE_MAX_AGE_DAYS) is a warning in preview and a note in the PR comment. "Today" is SOURCE_DATE_EPOCH
(tests/conftest.py fixes it at 2026-12-01)."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys

import pytest
from gpuinfra.catalog import staleness
from gpuinfra.errors import InputError
from helpers import ROOT

DAY = datetime.date(2026, 12, 1)


def test_the_limit_is_90_days_counted_from_today() -> None:
    assert staleness.DEFAULT_MAX_AGE_DAYS == 90
    assert staleness.stale_message(datetime.date(2026, 9, 2), DAY, 90) is None  # 90 days: within
    message = staleness.stale_message(datetime.date(2026, 9, 1), DAY, 90)  # 91 days: older
    assert (
        message == "the oldest price used is as of 2026-09-01 (91 days old, limit 90 days: GPUINFRA_PRICE_MAX_AGE_DAYS)"
    )
    assert staleness.stale_message(None, DAY, 90) is None  # nothing priced: nothing to say


def test_today_and_the_limit_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796083200")
    assert staleness.today() == DAY
    monkeypatch.setenv(staleness.MAX_AGE_ENV, "400")
    assert staleness.max_age_days() == 400
    assert staleness.stale_message(datetime.date(2026, 9, 1)) is None
    monkeypatch.setenv(staleness.MAX_AGE_ENV, "ninety")
    with pytest.raises(InputError, match="not a whole number of days"):
        staleness.max_age_days()


def preview_json(stack: str, **env: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    done = subprocess.run(
        [sys.executable, "-c", "from gpuinfra.cli import run; run()", "preview", stack, "--format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env},
    )
    return done.returncode, json.loads(done.stdout)


def test_preview_warns_about_the_examples_old_prices_and_states_the_oldest_date() -> None:
    code, report = preview_json("chat-serve")
    assert code == 0  # a warning, not an error
    (stack,) = report["stacks"]
    oldest = datetime.date.fromisoformat(stack["cost"]["prices_as_of"])
    stale = [f for f in stack["findings"] if f["rule"] == "stale-prices"]
    assert len(stale) == 1 and stale[0]["level"] == "warning"
    assert f"as of {oldest} ({(DAY - oldest).days} days old, limit 90 days" in stale[0]["message"]
    assert report["cost"]["prices_as_of"] == str(oldest)  # the total states it too
    code, report = preview_json("chat-serve", GPUINFRA_PRICE_MAX_AGE_DAYS=str((DAY - oldest).days))
    assert code == 0 and not [f for f in report["stacks"][0]["findings"] if f["rule"] == "stale-prices"]
