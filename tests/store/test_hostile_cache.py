"""Issue 47: hostile files in the cache (`preview --cache-dir` and the compiled-definitions cache): a FIFO, a link to
/dev/zero, a sparse 6 GiB file and an unreadable folder where entries belong. Reads are bounded and never block
(gpuinfra.store.sealed.read_sealed: O_NONBLOCK, O_NOFOLLOW, regular files under a size cap), so the run ends within
seconds, exit 0, with the same report as a run without a cache: a hostile entry is a miss, never a verdict. The
unreadable folder cases run under root too (as here and in CI), as root without the capabilities that bypass file
modes (helpers.without_dac)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from helpers import STACKS, without_dac

STACK = str(STACKS / "Pulumi.llm-train.yaml")
SIX_GIB = 6 * 1024**3
SECONDS = 240
"""Generous for a shared two-core machine; a read that blocks on a FIFO or /dev/zero never ends."""


def fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def dev_zero(path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


def sparse(path: Path) -> None:
    with path.open("r+b") as handle:
        handle.truncate(SIX_GIB)


HOSTILE: dict[str, Callable[[Path], None]] = {"fifo": fifo, "dev-zero": dev_zero, "sparse-6gib": sparse}


def preview(cache: Path | None, env: dict[str, str], prefix: Sequence[str] = ()) -> tuple[int, str, str, float]:
    """`preview --format json` with the previews kept in `cache` (None: the user's cache folder)."""
    started = time.monotonic()
    named = ["--cache-dir", str(cache)] if cache is not None else []
    done = subprocess.run(
        [*prefix, sys.executable, "-c", "from gpuinfra.cli import run; run()", "preview", STACK, "--format", "json",
         *named],
        capture_output=True, text=True, timeout=SECONDS, env=env,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def comparable(document: str) -> str:
    """The report without what differs between two runs of the same inputs (timings)."""
    data = json.loads(document)
    data.pop("timings", None)
    return json.dumps(data, sort_keys=True)


@pytest.fixture(scope="module")
def primed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], str]:
    """A cache filled by one run, under a reviewer key and a compiled cache of its own; the report it gave."""
    root = tmp_path_factory.mktemp("cache")
    env = {**os.environ, "GPUINFRA_CACHE_DIR": str(root / "compiled"), "GPUINFRA_CACHE_KEY": "the reviewer's"}
    code, out, err, _ = preview(root / "previews", env)
    assert code == 0, err
    return root, env, comparable(out)


@pytest.mark.parametrize("kind", HOSTILE, ids=list(HOSTILE))
@pytest.mark.parametrize("where", ["previews", "compiled"])
def test_a_hostile_cache_entry_is_a_miss(primed, kind: str, where: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, env, expected = primed
    copy = tmp_path / "cache"
    subprocess.run(["cp", "-a", str(root), str(copy)], check=True)
    entries = [p for p in (copy / where).rglob("*") if p.is_file() and not p.name.startswith(".")]
    assert entries, f"the first run wrote no entry under {where}"
    for entry in entries:
        HOSTILE[kind](entry)
    env = {**env, "GPUINFRA_CACHE_DIR": str(copy / "compiled")}
    code, out, err, seconds = preview(copy / "previews", env)
    assert code == 0, err[-3000:]
    assert "Traceback" not in err
    assert comparable(out) == expected
    assert seconds < SECONDS


def test_an_unreadable_cache_folder_is_a_miss(primed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The user's cache folder (GPUINFRA_CACHE_DIR: the compiled definitions and, with no --cache-dir, the
    previews) unreadable: the run works without it and reports the same."""
    prefix = without_dac()
    root, env, expected = primed
    copy = tmp_path / "cache"
    subprocess.run(["cp", "-a", str(root), str(copy)], check=True)
    locked = copy / "compiled"
    locked.chmod(0o000)
    try:
        code, out, err, _ = preview(None, {**env, "GPUINFRA_CACHE_DIR": str(locked)}, prefix)
        blocked = subprocess.run([*prefix, "ls", str(locked)], capture_output=True, text=True, timeout=30)
    finally:
        locked.chmod(0o755)
    assert blocked.returncode != 0 and "Permission denied" in blocked.stderr, "the folder was readable after all"
    assert code == 0, err[-3000:]
    assert "Traceback" not in err
    assert comparable(out) == expected


def test_an_unreadable_cache_dir_named_is_refused(primed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """--cache-dir naming a folder this user cannot read: exit 2 naming the option and the folder, never a
    traceback (the folder is the user's own choice, so it is their error rather than a silent miss)."""
    prefix = without_dac()
    root, env, _ = primed
    copy = tmp_path / "cache"
    subprocess.run(["cp", "-a", str(root), str(copy)], check=True)
    (copy / "previews").chmod(0o000)
    try:
        code, _, err, seconds = preview(copy / "previews", env, prefix)
    finally:
        (copy / "previews").chmod(0o755)
    assert code == 2, err[-3000:]
    assert "--cache-dir" in err and "previews" in err and "not readable" in err, err[-3000:]
    assert "Traceback" not in err
    assert seconds < SECONDS
