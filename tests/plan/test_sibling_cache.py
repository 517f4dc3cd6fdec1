"""The account's other stacks, planned, kept on disk by content (plan/account.py `_planned`): a fresh process
reads back the very needs and problems a plan gives, a tampered entry is ignored, and a change to a sibling's
file misses."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from gpuinfra.plan import account
from gpuinfra.plan.account import file_stamp
from helpers import STACKS

P5_VCPUS = 192  # p5.48xlarge (AWS EC2 accelerated computing instance types page)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GPUINFRA_CACHE_DIR", str(tmp_path / "cache"))
    account._planned.cache_clear()
    return tmp_path / "cache" / "compiled"


def planned(path: Path, org: Path) -> account.Sibling:
    account._planned.cache_clear()  # each call stands for a fresh process
    return account._planned(path, *file_stamp(path), org, *file_stamp(org), "")


def test_a_stored_plan_is_the_plan(cache: Path, tmp_path: Path) -> None:
    org = tmp_path / "org.yaml"
    shutil.copy(STACKS / "org.yaml", org)
    path = tmp_path / "Pulumi.llm-train-eks.yaml"
    shutil.copy(STACKS / path.name, path)
    built = account._plan_sibling(path, org)
    assert ("us-east-1", "L-417A185B", 4 * P5_VCPUS) in built.needs  # on_demand_base 4 of 16 (hand count)
    assert planned(path, org) == built
    stored = sorted(cache.glob("*.marshal"))
    assert stored
    assert planned(path, org) == built  # read back: tuples and ints exactly
    for entry in stored:
        entry.write_bytes(entry.read_bytes()[:-3] + b"\x00\x00\x00")  # the content edited, its seal kept
    assert planned(path, org) == built


def test_a_changed_sibling_misses(cache: Path, tmp_path: Path) -> None:
    org = tmp_path / "org.yaml"
    shutil.copy(STACKS / "org.yaml", org)
    path = tmp_path / "Pulumi.llm-train-eks.yaml"
    shutil.copy(STACKS / path.name, path)
    before = planned(path, org)
    path.write_text(path.read_text() + "\nbroken: [\n")
    after = planned(path, org)
    assert after != before and after.problem is not None and "cannot be read" in after.problem
