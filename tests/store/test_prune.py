"""Every cache folder stays under its cap, least recently used entries dropped first (gpuinfra.store.prune): the
folders are keyed by content, so without pruning they only grow."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from gpuinfra.store import prune, sealed

MB = 1024 * 1024


@pytest.fixture(autouse=True)
def reviewer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sealed.KEY_ENV, "the reviewer's secret")
    sealed.secret.cache_clear()
    yield
    sealed.secret.cache_clear()


def entry(folder: Path, name: str, size: int, age_s: float, now: float) -> Path:
    path = folder / name
    sealed.write_sealed(path, "test", name, b"x" * size)
    os.utime(path, (now - age_s, now - age_s))
    return path


def test_the_oldest_entries_go_first_until_the_folder_is_under_its_target(tmp_path: Path) -> None:
    now = time.time()
    paths = [entry(tmp_path, f"e{i}", MB, age_s=1000 - i, now=now) for i in range(10)]  # e0 the oldest
    removed = prune.prune(tmp_path, cap=8 * MB, now=now)
    # 10 MB of entries (each a little over 1 MB with its seal) over an 8 MB cap: down to at most 6.4 MB, so
    # the four oldest go (six entries are 6 MB plus six seals, under 6.4 MB; seven would not be).
    assert removed == 4
    assert [p.exists() for p in paths] == [False] * 4 + [True] * 6


def test_under_the_cap_nothing_goes(tmp_path: Path) -> None:
    now = time.time()
    paths = [entry(tmp_path, f"e{i}", MB, age_s=10**6, now=now) for i in range(3)]
    assert prune.prune(tmp_path, cap=4 * MB, now=now) == 0
    assert all(p.exists() for p in paths)


def test_a_read_makes_an_entry_recent(tmp_path: Path) -> None:
    now = time.time()
    old = entry(tmp_path, "old", MB, age_s=10_000, now=now)
    newer = entry(tmp_path, "newer", MB, age_s=100, now=now)
    assert sealed.read_sealed(old, "test", "old", 2 * MB) == b"x" * MB  # used now
    prune.prune(tmp_path, cap=int(1.5 * MB), now=time.time())
    assert old.exists()
    assert not newer.exists()


def test_a_forged_entry_is_not_made_recent(tmp_path: Path) -> None:
    now = time.time()
    forged = tmp_path / "forged"
    forged.write_bytes(b"not a seal\n" + b"x" * 10)
    os.utime(forged, (now - 10_000, now - 10_000))
    assert sealed.read_sealed(forged, "test", "forged", MB) is None
    assert forged.stat().st_mtime == pytest.approx(now - 10_000)


def test_a_write_prunes_at_most_once_an_interval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(prune.CAP_ENV, "3")  # 3 MB
    now = time.time()
    (tmp_path / prune.STAMP).touch()  # pruned just now
    paths = [entry(tmp_path, f"e{i}", MB, age_s=500 - i, now=now) for i in range(4)]
    assert all(p.exists() for p in paths)  # over the cap, but within the hour: no walk yet
    os.utime(tmp_path / prune.STAMP, (now - prune.EVERY_SECONDS - 1,) * 2)
    entry(tmp_path, "last", 0, age_s=0, now=now)  # this write walks: down to 2.4 MB, the two oldest go
    assert [p.exists() for p in paths] == [False, False, True, True]
    assert time.time() - (tmp_path / prune.STAMP).stat().st_mtime < 60  # and the stamp is fresh again


def test_stale_temporary_files_go_and_fresh_ones_stay(tmp_path: Path) -> None:
    now = time.time()
    stale, fresh = tmp_path / ".tmp-stale", tmp_path / ".tmp-fresh"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"being written")
    os.utime(stale, (now - prune.STALE_TEMP_SECONDS - 1,) * 2)
    assert prune.prune(tmp_path, cap=10 * MB, now=now) == 1
    assert not stale.exists() and fresh.exists()


def test_links_and_folders_are_never_followed_or_removed(tmp_path: Path) -> None:
    now = time.time()
    outside = tmp_path / "outside"
    outside.write_bytes(b"y" * (2 * MB))
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "link").symlink_to(outside)
    (cache / "folder").mkdir()
    entry(cache, "e", MB, age_s=100, now=now)
    prune.prune(cache, cap=MB // 2, now=now)
    assert outside.exists() and (cache / "link").is_symlink() and (cache / "folder").is_dir()
    assert not (cache / "e").exists()


def test_the_cap_reads_whole_megabytes_and_ignores_anything_else(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(prune.CAP_ENV, "256")
    assert prune.cap_bytes() == 256 * MB
    monkeypatch.setenv(prune.CAP_ENV, "-5")
    assert prune.cap_bytes() == prune.DEFAULT_CAP_MB * MB
    monkeypatch.setenv(prune.CAP_ENV, "lots")
    assert prune.cap_bytes() == prune.DEFAULT_CAP_MB * MB
