"""Keep each cache folder under a size cap, least recently used entries first (as ccache and Bazel's disk cache do).

Every cache entry is written through `sealed.write_sealed` and keyed by content, so each edit of a stack, each new
code version and each fuzzed text adds entries and none is ever replaced: left alone, the folder only grows (a
developer's machine held 136,000 entries, 670 MB, after a few weeks). After a write, a folder not pruned for
`EVERY_SECONDS` is pruned: entries are dropped oldest-used first until the folder holds at most `TARGET` of its cap,
and temporary files a killed writer left (`.tmp-*`, older than an hour) are removed. A read touches its entry
(`touch`), so "oldest" is least recently used, whatever the file system's atime policy. Dropping an entry costs
only a rebuild: every reader treats a missing entry as a miss. Symbolic links and other non-regular files are
never followed or removed."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from stat import S_ISREG

CAP_ENV = "GPUINFRA_CACHE_MAX_MB"
DEFAULT_CAP_MB = 1024
"""Per cache folder (compiled definitions, previews): a 200-stack repository's previews and definitions take ~120 MB."""
TARGET = 0.8
"""Pruning goes below the cap by this much, so the next writes do not prune again at once."""
EVERY_SECONDS = 3600
"""At most one pruning walk per folder per hour: the stamp's age is one stat per write."""
STAMP = ".pruned"
TEMP_PREFIX = ".tmp-"
STALE_TEMP_SECONDS = 3600


def cap_bytes() -> int:
    """The cap per folder: GPUINFRA_CACHE_MAX_MB (a whole number of MB; 0 keeps nothing), else the default."""
    given = os.environ.get(CAP_ENV, "").strip()
    megabytes = int(given) if given.isdigit() else DEFAULT_CAP_MB
    return megabytes * 1024 * 1024


def touch(path: Path) -> None:
    """Mark an entry used now (its modification time is the recency pruning reads; the seal covers its content)."""
    with contextlib.suppress(OSError):
        os.utime(path, follow_symlinks=False)  # never the target of a link planted in its place


def after_write(folder: Path, now: float | None = None) -> None:
    """Prune `folder` when its last pruning is older than EVERY_SECONDS (or never happened)."""
    now = time.time() if now is None else now
    stamp = folder / STAMP
    try:
        if now - stamp.lstat().st_mtime < EVERY_SECONDS:
            return
    except FileNotFoundError:
        pass
    except OSError:
        return
    try:
        stamp.touch()
        os.utime(stamp, (now, now))
    except OSError:
        return
    prune(folder, cap_bytes(), now)


def prune(folder: Path, cap: int, now: float) -> int:
    """Drop `folder`'s least recently used entries until it holds at most TARGET * cap bytes (only when it holds
    more than `cap`), and stale temporary files; the number of files removed."""
    entries, removed = [], 0
    try:
        listing = list(os.scandir(folder))
    except OSError:
        return 0
    for item in listing:
        try:
            info = item.stat(follow_symlinks=False)
        except OSError:
            continue
        if not S_ISREG(info.st_mode) or item.name == STAMP:
            continue
        if item.name.startswith(TEMP_PREFIX):
            if now - info.st_mtime > STALE_TEMP_SECONDS:
                removed += _unlink(item.path)
            continue
        entries.append((info.st_mtime, info.st_size, item.path))
    total = sum(size for _, size, _ in entries)
    if total <= cap:
        return removed
    for _, size, path in sorted(entries):
        if total <= cap * TARGET:
            break
        removed += _unlink(path)
        total -= size
    return removed


def _unlink(path: str) -> int:
    try:
        os.unlink(path)
    except OSError:  # another process pruned it first, or it cannot be removed: either way, not ours to fix
        return 0
    return 1


__all__ = ["CAP_ENV", "after_write", "cap_bytes", "prune", "touch"]
