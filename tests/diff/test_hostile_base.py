"""Issue 47: hostile files in a *base commit* of `gpuinfra diff --base-ref`: the review ends within seconds, exit 0
or 2, naming the file, never a hang or a traceback. Git cannot hold a FIFO, so the base plants what it can: a
symlink to /dev/zero, a blob over the size limit, bytes that are not UTF-8, YAML nested past the reader's depth, and
symlinks out of the repository to what git cannot hold: a FIFO nobody writes to and a sparse 6 GiB file.

The trusted organization file (the base's: gpuinfra.review.organization) is held to more: a base whose file
cannot be read refuses the review (exit 2) rather than judging the head by the head's own copy."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import GIT, committed_project, without_dac

STACK = "stacks/Pulumi.chat-serve.yaml"
ORG = "stacks/org.yaml"
LIMIT = 4 * 1024 * 1024
"""Every YAML file's size limit (gpuinfra.spec.yamlfile.MAX_BYTES)."""
SECONDS = 240
"""Generous for a shared two-core machine; a hang (a read of /dev/zero) never ends."""


def symlink_to_dev_zero(path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


def oversized(path: Path) -> None:
    path.write_bytes(path.read_bytes() + b"#" + b"x" * LIMIT + b"\n")


def not_utf8(path: Path) -> None:
    path.write_bytes(path.read_bytes() + b"# caf\xe9\n")


def deeply_nested(path: Path) -> None:
    path.write_bytes(path.read_bytes() + b"nested: " + b"[" * 5000 + b"]" * 5000 + b"\n")


def symlink_to_fifo(path: Path) -> None:
    """A FIFO beside the repository (no writer: an open for reading that waits would never return)."""
    fifo = path.parents[2] / f"{path.name}.fifo"
    os.mkfifo(fifo)
    path.unlink()
    path.symlink_to(fifo)


def symlink_to_sparse_file(path: Path) -> None:
    """A 6 GiB file of holes beside the repository: read whole, it would take 6 GiB of memory."""
    sparse = path.parents[2] / f"{path.name}.sparse"
    with sparse.open("wb") as handle:
        handle.truncate(6 * 1024**3)
    path.unlink()
    path.symlink_to(sparse)


PLANTS: dict[str, Callable[[Path], None]] = {
    "symlink-to-dev-zero": symlink_to_dev_zero,
    "oversized": oversized,
    "not-utf8": not_utf8,
    "deeply-nested": deeply_nested,
    "symlink-to-fifo": symlink_to_fifo,
    "symlink-to-sparse-6gib": symlink_to_sparse_file,
}


def review_with_hostile_base(
    root: Path, relative: str, plant: Callable[[Path], None], prefix: tuple[str, ...] = ()
) -> tuple[int, str, float]:
    """Commit the hostile file as the base, put the good one back in the working tree, run the review (after
    `prefix`, e.g. helpers.without_dac())."""
    path = root / relative
    good = path.read_bytes()
    plant(path)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "hostile base"], cwd=root, check=True)
    path.unlink()
    path.write_bytes(good)
    started = time.monotonic()
    done = subprocess.run(
        [
            *prefix,
            sys.executable,
            "-c",
            "from gpuinfra.cli import run; run()",
            "diff",
            "--base-ref",
            "HEAD",
            "chat-serve",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=SECONDS,
    )
    return done.returncode, done.stdout + done.stderr, time.monotonic() - started


@pytest.fixture
def root(tmp_path: Path) -> Path:
    if subprocess.run(["git", "--version"], capture_output=True).returncode != 0:
        pytest.fail("git is needed for --base-ref")
    return committed_project(tmp_path / "repo")


@pytest.mark.parametrize("plant", PLANTS, ids=list(PLANTS))
def test_a_hostile_organization_file_at_the_base_refuses_the_review(root: Path, plant: str) -> None:
    code, output, seconds = review_with_hostile_base(root, ORG, PLANTS[plant])
    assert code == 2, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    assert ORG in output or "org.yaml" in output, output[-3000:]
    assert seconds < SECONDS


@pytest.mark.parametrize("plant", PLANTS, ids=list(PLANTS))
def test_a_hostile_stack_file_at_the_base_is_named_not_read(root: Path, plant: str) -> None:
    """The base side of that stack cannot be read: the review says so, naming the file, and judges the head."""
    code, output, seconds = review_with_hostile_base(root, STACK, PLANTS[plant])
    assert code in (0, 2), output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    assert STACK in output and "cannot be read" in output, output[-3000:]
    assert seconds < SECONDS


@pytest.mark.parametrize("relative", [STACK, ORG], ids=["stack-file", "organization-file"])
def test_a_base_file_behind_an_unreadable_folder(root: Path, relative: str) -> None:
    """The base's file a symlink into a folder this user cannot list (git holds no modes, so the folder is outside
    the repository; under root too, as root without CAP_DAC_*): the stack's base side cannot be read, the
    organization's refuses the review (a symlink is no trusted file, wherever it points), each named."""
    prefix = without_dac()
    locked = root.parent / "locked"
    locked.mkdir()
    target = locked / Path(relative).name
    target.write_bytes((root / relative).read_bytes())

    def behind_the_folder(path: Path) -> None:
        path.unlink()
        path.symlink_to(target)

    locked.chmod(0o000)
    try:
        code, output, seconds = review_with_hostile_base(root, relative, behind_the_folder, prefix)
    finally:
        locked.chmod(0o755)
    assert code == (2 if relative == ORG else code) and code in (0, 2), output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    reason = "not a regular file" if relative == ORG else "Permission denied"  # the trusted file: no symlink at all
    assert Path(relative).name in output and reason in output, output[-3000:]
    assert seconds < SECONDS
